// Whose an observed AWS resource is, as far as the object reconciling it is
// concerned: its own, one it may adopt, or another object's (a Conflict).
import { ownerAsSeenBy, type ManagedObject, type OwnershipTags } from '../apis/managed.ts';
import { resourcePath, type ResourceType } from '../apis/meta.ts';
import { KubeApiError, type KubeClient } from './kube/client.ts';

/** Where an observed AWS resource stands towards the object reconciling it. */
export type OwnershipStanding =
  /** Tagged with this object's uid. */
  | { readonly kind: 'owned' }
  /** Not this object's yet, and it may take it: the update tags it (spec.externalName names it). */
  | { readonly kind: 'adopting' }
  /** ObserveOnly of a resource no existing object owns: reported on, never written. */
  | { readonly kind: 'observing' }
  /** Another object's, or not Skylift's and not named by spec.externalName. */
  | { readonly kind: 'conflict'; readonly message: string };

/** What {@link ownershipStanding} decides from. */
export interface OwnershipFacts {
  /** The resource's ownership marks; undefined when it has none. */
  readonly owner: OwnershipTags | undefined;
  /** This object's marks. */
  readonly ours: OwnershipTags;
  readonly externalName: string | undefined;
  readonly observeOnly: boolean;
  /** How the resource is named in spec.externalName (e.g. `www.example.com/A`), for messages. */
  readonly identity: string | undefined;
  /**
   * The object the marks name no longer exists in this cluster (deleted with deletionPolicy
   * Orphan, or its finalizer removed by hand): its marks own nothing any more.
   */
  readonly ownerGone: boolean;
}

/**
 * Decides whether the object may report on and change the resource. A
 * resource an existing object owns is never another's, ObserveOnly or not; a
 * resource nobody (existing) owns is adopted only when spec.externalName names
 * it. Pure.
 */
export function ownershipStanding(f: OwnershipFacts): OwnershipStanding {
  const { owner, ours, identity: id } = f;
  if (owner !== undefined && owner.uid === ours.uid) return { kind: 'owned' };
  const named = (f.externalName ?? '') !== '';
  const how = `spec.externalName is fixed at create, so delete this object and create it again with spec.externalName${id !== undefined ? ` ${JSON.stringify(id)}` : ' naming it'}`;
  if (owner !== undefined && !f.ownerGone) {
    return {
      kind: 'conflict',
      message: `the AWS resource${id !== undefined ? ` ${id}` : ''} is owned by ${ownerAsSeenBy(owner, ours)}; Skylift will not modify it, nor report on it or write anything from it for another object`,
    };
  }
  if (f.observeOnly) return { kind: 'observing' };
  if (named) return { kind: 'adopting' };
  if (owner !== undefined) {
    return {
      kind: 'conflict',
      message: `the AWS resource${id !== undefined ? ` ${id}` : ''} is marked as owned by ${ownerAsSeenBy(owner, ours)}, which no longer exists in this cluster (deleted with deletionPolicy: Orphan, or its finalizer removed by hand); Skylift adopts it only when an object names it in spec.externalName: ${how}`,
    };
  }
  return {
    kind: 'conflict',
    message: `an AWS resource with this identity${id !== undefined ? ` (${id})` : ''} already exists and is not managed by Skylift; set spec.externalName to adopt it (${how})`,
  };
}

/**
 * Whether the object an ownership mark names is gone from this cluster: its
 * `namespace/name` of `type` does not exist, or exists with another uid. A
 * mark of another cluster, an unreadable name, or an object the operator
 * cannot read (403, an unwatched namespace, the apiserver failing) counts as
 * present, so the answer errs towards Conflict. Read-only; one GET with the
 * client's deadline.
 */
export async function ownerGone(
  client: KubeClient,
  type: ResourceType,
  clusterId: string,
  owner: OwnershipTags,
): Promise<boolean> {
  if (owner.cluster !== clusterId) return false;
  const slash = owner.owner.indexOf('/');
  if (slash <= 0 || slash === owner.owner.length - 1) return false;
  try {
    const found = await client.get<ManagedObject>(
      resourcePath(type, { namespace: owner.owner.slice(0, slash), name: owner.owner.slice(slash + 1) }),
    );
    return found.metadata.uid !== owner.uid;
  } catch (err) {
    return err instanceof KubeApiError && err.statusCode === 404;
  }
}
