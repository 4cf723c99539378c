// The model of a lifecycle run: what the test did and therefore what must be
// true of the real system. It never predicts timing or who wins a race; it
// knows which objects exist, what their specs say, and which things in AWS and
// in the namespace were made by hand (so Skylift must never touch them).

/** The kinds a lifecycle run drives. */
export type LifecycleKind = 'DNSRecord' | 'ManagedDB' | 'MyIngress';

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

/** A MyIngress the run created and has not deleted (forwarding to the Service `web`). */
export interface ModelMyIngress {
  readonly kind: 'MyIngress';
  readonly name: string;
  port: number;
}

/** Any object of the model. */
export type ModelObject = ModelDnsRecord | ModelManagedDb | ModelMyIngress;

/** An object the run deleted. */
export interface DeletedObject {
  readonly kind: LifecycleKind;
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
    created: 0,
    steps: [],
  };
}

/** Live objects of one kind. */
export function liveOf<K extends LifecycleKind>(
  m: LifecycleModel,
  kind: K,
): Extract<ModelObject, { kind: K }>[] {
  return [...m.live.values()].filter((o): o is Extract<ModelObject, { kind: K }> => o.kind === kind);
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
