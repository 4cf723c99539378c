// The engine's writes to companion objects (e.g. a ManagedDB's connection
// Secret): created and updated by server-side apply, labelled as Skylift's
// and owned by their CR; disowned when the CR goes but AWS keeps the resource.
import type { ManagedObject } from '../apis/managed.ts';
import { apiVersionOf, resourcePath, type KubeObject, type ResourceType } from '../apis/meta.ts';
import type { CompanionWrite } from './adapter.ts';
import { OwnershipConflictError } from './errors.ts';
import { KubeApiError, type KubeClient } from './kube/client.ts';

/** The label every companion object carries. */
export const managedByLabel = { 'app.kubernetes.io/managed-by': 'skylift' } as const;

/**
 * Carries out one companion write for `owner` (a CR of type `ownerType`), in
 * the owner's namespace. Idempotent; throws Kubernetes errors (a disown of an
 * object that is gone, or has no owner references to drop, is done).
 */
export async function writeCompanion(
  client: KubeClient,
  ownerType: ResourceType,
  owner: ManagedObject,
  w: CompanionWrite,
): Promise<void> {
  const namespace = owner.metadata.namespace;
  if (w.op === 'apply') {
    const name = w.object.metadata.name;
    const expect = w.expect;
    const body = {
      ...w.object,
      metadata: {
        ...w.object.metadata,
        namespace,
        labels: managedByLabel,
        // Removed with the CR by Kubernetes' garbage collector.
        ownerReferences: [
          {
            apiVersion: apiVersionOf(ownerType),
            kind: ownerType.kind,
            name: owner.metadata.name,
            uid: owner.metadata.uid ?? '',
            controller: true,
          },
        ],
        // The apiserver refuses the patch (422, uid immutable) when the object is not the one read.
        ...(expect !== undefined && 'uid' in expect ? { uid: expect.uid } : {}),
      },
    };
    let claimed: string | undefined;
    if (expect !== undefined && 'absent' in expect) {
      // A claim: only one writer can create a name; the others learn it is taken. Created bare (the
      // CR's owner reference and label only), so every field of the content below is the apply's,
      // and a key the apply later leaves out is removed.
      try {
        const made = await client.create<KubeObject>(resourcePath(w.type, { namespace }), {
          apiVersion: w.object.apiVersion,
          kind: w.object.kind,
          metadata: {
            name,
            namespace,
            labels: body.metadata.labels,
            ownerReferences: body.metadata.ownerReferences,
          },
        });
        claimed = made.metadata.uid;
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 409)
          throw new OwnershipConflictError(expect.taken);
        throw err;
      }
    }
    await client.patch(
      resourcePath(w.type, { namespace, name }),
      claimed !== undefined ? { ...body, metadata: { ...body.metadata, uid: claimed } } : body,
      'apply',
      { fieldManager: 'skylift', force: true },
    );
    return;
  }
  const path = resourcePath(w.type, { namespace, name: w.name });
  try {
    const obj = await client.get<KubeObject>(path);
    const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.metadata.uid);
    await client.patch(path, [{ op: 'replace', path: '/metadata/ownerReferences', value: refs }], 'json');
  } catch (err) {
    if (err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 422)) return;
    throw err;
  }
}
