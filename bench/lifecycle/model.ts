// The model of a lifecycle run: what the test did and therefore what must be
// true of the real system. It never predicts timing or who wins a race; it
// knows which objects exist, what their specs say, and which things in AWS and
// in the namespace were made by hand (so Skylift must never touch them).

/** The Skylift kinds a lifecycle run drives (MyIngressGroup is cluster-scoped). */
export type LifecycleKind = 'DNSRecord' | 'ManagedDB' | 'MyIngress' | 'MyIngressGroup';
/** The Gateway API kinds a lifecycle run drives (not Skylift's: no Ready/Synced of their own). */
export type GatewayKind = 'Gateway' | 'HTTPRoute';
/** Every kind a lifecycle run creates. */
export type ObjectKind = LifecycleKind | GatewayKind;

/**
 * Host labels DNSRecords claim: few, so that two objects often claim one name; a wildcard and a
 * literal `_wildcard` among them, whose ownership marks once collided (issue 27, item 1).
 */
export const hosts = ['a', 'b', '*', '_wildcard'] as const;
/** One host label. */
export type Host = (typeof hosts)[number];

/** Connection Secret names ManagedDBs write: few, so that claims collide with each other and with hand-made ones. */
export const secretNames = ['conn-1', 'conn-2'] as const;

/** A DNSRecord the run created and has not deleted. */
export interface ModelDnsRecord {
  readonly kind: 'DNSRecord';
  readonly name: string;
  readonly host: Host;
  values: readonly string[];
  readonly deletionPolicy: 'Delete' | 'Orphan';
  /** Created with spec.externalName naming its record (explicit adoption). */
  readonly adopt: boolean;
}

/** A ManagedDB the run created and has not deleted. */
export interface ModelManagedDb {
  readonly kind: 'ManagedDB';
  readonly name: string;
  /** spec.writeConnectionSecretToRef.name (renamed by a step). */
  secret: string;
  instanceClass: string;
  /** Created with spec.externalName naming another ManagedDB's instance. */
  readonly externalOf: string | undefined;
  readonly deletionPolicy: 'Delete' | 'Orphan';
}

/**
 * A MyIngress the run created and has not deleted (forwarding to the Service `web`): one with a
 * load balancer of its own listening on `port`, or a member of the MyIngressGroup `group` (whose
 * name a step may change: a move) with one rule for `host`.
 */
export interface ModelMyIngress {
  readonly kind: 'MyIngress';
  readonly name: string;
  port: number;
  /** spec.group.name of a member; undefined for a MyIngress with its own load balancer (fixed at create). */
  group: string | undefined;
  /** A member's one rule's host ('' for a MyIngress with its own load balancer). */
  readonly host: string;
}

/** A MyIngressGroup the run created (cluster-scoped; its name starts with the world's namespace). */
export interface ModelGroup {
  readonly kind: 'MyIngressGroup';
  readonly name: string;
}

/** A Gateway of Skylift's GatewayClass (one HTTP listener on 80 admitting routes of every namespace). */
export interface ModelGateway {
  readonly kind: 'Gateway';
  readonly name: string;
}

/** An HTTPRoute attached to the Gateway `gateway` (which may have been deleted since), for `host`. */
export interface ModelRoute {
  readonly kind: 'HTTPRoute';
  readonly name: string;
  readonly gateway: string;
  readonly host: string;
}

/** Any object of the model. */
export type ModelObject =
  ModelDnsRecord | ModelManagedDb | ModelMyIngress | ModelGroup | ModelGateway | ModelRoute;

/** An object the run deleted. */
export interface DeletedObject {
  readonly kind: ObjectKind;
  readonly name: string;
  readonly uid: string;
  readonly deletionPolicy: 'Delete' | 'Orphan';
}

/** The model's state. Commands mutate it in place (fast-check's model-based testing). */
export interface LifecycleModel {
  /** Live objects by name (names are unique across kinds). */
  readonly live: Map<string, ModelObject>;
  /** uid of each object the run created, by name. */
  readonly uids: Map<string, string>;
  readonly deleted: DeletedObject[];
  /** Records made by hand (host → value) that no object has adopted: Skylift must never change them. */
  readonly foreignRecords: Map<Host, string>;
  /** Secrets made by hand (name → data): Skylift must never change, own or delete them. */
  readonly foreignSecrets: Map<string, Readonly<Record<string, string>>>;
  /** EndpointSlices made by hand for the Service `web` (name → resourceVersion when made, and its address). */
  readonly foreignSlices: Map<string, { readonly resourceVersion: string; readonly address: string }>;
  /** Hosts whose record an Orphan deletion left in AWS (they may hold a record nobody owns now). */
  readonly orphanedHosts: Set<Host>;
  /**
   * The world's TeamPolicy between steps: `never` (none was ever made: one team), or `open` (every
   * name in the zone; once seen, the operator fails closed whenever none exists).
   */
  policy: 'never' | 'open';
  /**
   * The MyIngressGroups the operator made for this run's Gateways (uid → group name), as observed:
   * what they own in AWS belongs to the run, though no step created them.
   */
  readonly gatewayGroupUids: Map<string, string>;
  /** How many objects the run created (names are `<prefix><n>`). */
  created: number;
  /** Step log, printed with a failure. */
  readonly steps: string[];
}

/** A fresh model. */
export function newModel(): LifecycleModel {
  return {
    live: new Map(),
    uids: new Map(),
    deleted: [],
    foreignRecords: new Map(),
    foreignSecrets: new Map(),
    foreignSlices: new Map(),
    orphanedHosts: new Set(),
    policy: 'never',
    gatewayGroupUids: new Map(),
    created: 0,
    steps: [],
  };
}

/** Live objects of one kind. */
export function liveOf<K extends ObjectKind>(
  m: LifecycleModel,
  kind: K,
): Extract<ModelObject, { kind: K }>[] {
  return [...m.live.values()].filter((o): o is Extract<ModelObject, { kind: K }> => o.kind === kind);
}

/**
 * Live DNSRecords, ManagedDBs and MyIngresses with a load balancer of their own: what the
 * generic steps (identity changes, ObserveOnly, forged status, create-pending) act on — a group
 * member refuses ObserveOnly and Orphan by admission, and Gateway API objects have neither.
 */
export function standaloneObjects(m: LifecycleModel): (ModelDnsRecord | ModelManagedDb | ModelMyIngress)[] {
  return [...m.live.values()].filter(
    (o): o is ModelDnsRecord | ModelManagedDb | ModelMyIngress =>
      o.kind === 'DNSRecord' || o.kind === 'ManagedDB' || (o.kind === 'MyIngress' && o.group === undefined),
  );
}

/** Live MyIngresses with a load balancer of their own. */
export function standaloneIngresses(m: LifecycleModel): ModelMyIngress[] {
  return liveOf(m, 'MyIngress').filter((i) => i.group === undefined && i.host === '');
}

/** Live MyIngresses created as group members (spec.group set). */
export function groupMembers(m: LifecycleModel): ModelMyIngress[] {
  return liveOf(m, 'MyIngress').filter((i) => i.host !== '');
}

/** Whether any live DNSRecord claims a host. */
export function hostClaimed(m: LifecycleModel, host: Host): boolean {
  return liveOf(m, 'DNSRecord').some((r) => r.host === host);
}

/** Whether any live ManagedDB writes a Secret of that name. */
export function secretClaimed(m: LifecycleModel, name: string): boolean {
  return liveOf(m, 'ManagedDB').some((d) => d.secret === name);
}

/** Picks the i-th element of a non-empty list, wrapping around. Pure. */
export function pick<T>(list: readonly T[], i: number): T {
  const v = list[i % list.length];
  if (v === undefined) throw new Error('pick from an empty list');
  return v;
}
