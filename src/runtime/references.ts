// Declarative references between objects: a kind says, as data, which other objects its objects
// refer to (a DNSRecord's MyIngress, a MyIngress's Services, EndpointSlices and gated Pods). The
// controller watches each referenced type, keeps a reverse index from a referenced key to the
// primaries that refer to it, so a change of a referenced object enqueues exactly its referrers
// (O(referrers), not a scan of every primary), and hands the kind a typed, read-only view of those
// caches when it builds its connector.
import { objectKey, type KubeObject, type ResourceType } from '../apis/meta.ts';
import { WatchEventType } from './kube/informer.ts';

/** The key of one referenced object: `namespace/name`. Pure. */
export function refKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * The key meaning "every object of the reference's watch in `namespace`" (e.g. a MyIngress and the
 * gated Pods of its namespace). No object's name is empty, so it never names one object. Pure.
 */
export function everyIn(namespace: string): string {
  return `${namespace}/`;
}

/**
 * One kind of reference from a primary object (type `P`) to objects of another type (`O`, the
 * TypeScript type the watched objects are read as). Plain data and pure functions: declaring one
 * starts nothing; the controller that is given it watches `type` (with `labelSelector`, in the
 * controller's namespaces) and keeps the reverse index.
 */
export interface Reference<P extends KubeObject, O extends KubeObject> {
  /** What the reference is, for people (logs, docs): e.g. `spec.aliasTarget.myIngressRef`. */
  readonly name: string;
  /** The referenced objects' resource type. */
  readonly type: ResourceType;
  /** Only objects with these labels are watched and cached (e.g. the Pods carrying a readiness gate). */
  readonly labelSelector?: string;
  /**
   * The keys `primary` refers to: {@link refKey} for one object (or for what `filedUnder` files
   * objects under), {@link everyIn} for every watched object of a namespace. Pure, fast; called on
   * every change of a primary, and — for a primary a {@link Reference.refiles} reference reaches —
   * on every change of an object of that reference. `refs` reads the controller's caches: targets
   * that follow other objects (a group's Services are those its members name) read them there.
   */
  targets(primary: P, refs: ReferenceReader<P>): Iterable<string>;
  /**
   * The key a referenced object answers to (default its own `namespace/name`), e.g. an
   * EndpointSlice by its Service's name; several keys when it answers to each (an HTTPRoute to
   * every Gateway it names); undefined or empty: no primary refers to it by key (only
   * {@link everyIn} targets reach it). Pure.
   */
  filedUnder?(obj: O): string | readonly string[] | undefined;
  /**
   * Other references' targets of a primary follow this reference's objects (a MyIngressGroup's
   * Services are those its members name): a change of one of its objects files its referrers
   * again in every reference, before they are reconciled.
   */
  readonly refiles?: boolean;
}

/**
 * Declares a reference; the type arguments carry the primary's and the referenced object's types
 * to the reader (`reference<MyIngress, Service>({…})`). Returns its argument. Pure.
 */
export function reference<P extends KubeObject, O extends KubeObject>(r: Reference<P, O>): Reference<P, O> {
  return r;
}

/**
 * The read-only view a kind's adapter is given of its controller's caches: the objects its
 * references watch, typed as each declaration says, and its own (primary) objects. Every method is
 * a synchronous, non-blocking cache read; returned objects belong to the cache and must not be
 * mutated. Before the reference's informers have listed (see `synced`), a missing object may exist.
 */
export interface ReferenceReader<P extends KubeObject> {
  /** The cached object `namespace/name` of a reference's watch, or undefined (none, or not listed yet). */
  get<O extends KubeObject>(ref: Reference<P, O>, namespace: string, name: string): O | undefined;
  /**
   * The cached objects of a reference's watch in `namespace`; with `filedUnder`, only those filed
   * under `namespace/filedUnder` (see {@link Reference.filedUnder}). In cache order.
   */
  list<O extends KubeObject>(ref: Reference<P, O>, namespace: string, filedUnder?: string): O[];
  /**
   * The cached objects of a reference's watch filed under `key` ({@link Reference.filedUnder}), in
   * every namespace (a cluster-scoped primary's members live in many). In cache order.
   */
  filed<O extends KubeObject>(ref: Reference<P, O>, key: string): O[];
  /** True once every informer of the reference (one per watched namespace) has listed. */
  synced(ref: Reference<P, KubeObject>): boolean;
  /** The controller's cached primary objects in `namespace`. */
  primaries(namespace: string): P[];
}

/** What the reference set reads a watch through: an informer's cache (see kube/informer.ts). */
export interface ObjectCache<O extends KubeObject> {
  get(key: string): O | undefined;
  list(): O[];
  readonly hasSynced: boolean;
}

/**
 * Which primaries refer to which keys, both ways: a primary's targets are replaced as a whole on
 * each change (O(its targets)), and the referrers of a key are read in O(referrers). Not
 * thread-safe (nothing in Node is); mutates only itself.
 */
export class ReverseIndex {
  private readonly forward = new Map<string, ReadonlySet<string>>();
  private readonly reverse = new Map<string, Set<string>>();

  /** Records that `primary` refers to exactly `targets` (replacing what it referred to). Idempotent. */
  set(primary: string, targets: Iterable<string>): void {
    const next = new Set(targets);
    const before = this.forward.get(primary);
    for (const t of before ?? []) if (!next.has(t)) this.unlink(t, primary);
    for (const t of next) if (before?.has(t) !== true) this.link(t, primary);
    if (next.size > 0) this.forward.set(primary, next);
    else this.forward.delete(primary);
  }

  /** Forgets `primary` (it was deleted). Idempotent. */
  delete(primary: string): void {
    this.set(primary, []);
  }

  /** The primaries that refer to `target`, in the order they started to. Read-only view. */
  referrers(target: string): ReadonlySet<string> {
    return this.reverse.get(target) ?? empty;
  }

  /** What `primary` refers to (empty when nothing). */
  targetsOf(primary: string): ReadonlySet<string> {
    return this.forward.get(primary) ?? empty;
  }

  /** How many keys are referred to at all (for tests and sizing). */
  get size(): number {
    return this.reverse.size;
  }

  private link(target: string, primary: string): void {
    let set = this.reverse.get(target);
    if (set === undefined) this.reverse.set(target, (set = new Set()));
    set.add(primary);
  }

  private unlink(target: string, primary: string): void {
    const set = this.reverse.get(target);
    if (set === undefined) return;
    set.delete(primary);
    if (set.size === 0) this.reverse.delete(target);
  }
}

const empty: ReadonlySet<string> = new Set();

/** The keys a referenced object is filed under (see {@link Reference.filedUnder}). Pure. */
function fileKeys<P extends KubeObject, O extends KubeObject>(
  ref: Reference<P, O>,
  obj: O,
): readonly string[] {
  if (ref.filedUnder === undefined) return [refKey(obj.metadata.namespace ?? '', obj.metadata.name)];
  const keys = ref.filedUnder(obj);
  return keys === undefined ? [] : typeof keys === 'string' ? [keys] : keys;
}

/**
 * One controller's references: the declarations, the caches of their watches, one reverse index
 * each, and the {@link ReferenceReader} over them. The controller feeds it primary changes
 * ({@link primaryChanged}) and asks it whom a referenced object's change concerns
 * ({@link referrers}); both are synchronous and cheap, fit for informer handlers.
 */
export class ReferenceSet<P extends KubeObject> implements ReferenceReader<P> {
  /** The declarations, in the order their watches are made. */
  readonly refs: readonly Reference<P, KubeObject>[];
  private readonly primaryObjects: () => readonly P[];
  private readonly indexes = new Map<Reference<P, KubeObject>, ReverseIndex>();
  private readonly caches = new Map<Reference<P, KubeObject>, ObjectCache<KubeObject>[]>();

  /**
   * `refs`: the kind's declarations; `primaryObjects`: the controller's cached primaries (read by
   * {@link primaries} only).
   */
  constructor(refs: readonly Reference<P, KubeObject>[], primaryObjects: () => readonly P[]) {
    this.refs = refs;
    this.primaryObjects = primaryObjects;
    for (const r of refs) {
      this.indexes.set(r, new ReverseIndex());
      this.caches.set(r, []);
    }
  }

  /**
   * Adds a cache of `ref`'s watch (one per watched namespace); the controller calls it while it is
   * built. Mutates this set; throws for a reference it was not given.
   */
  attach(ref: Reference<P, KubeObject>, cache: ObjectCache<KubeObject>): void {
    this.cachesOf(ref).push(cache);
  }

  /**
   * Files (added, modified) or forgets (deleted) what a primary refers to, for every reference, so
   * the index matches the primary cache. Mutates the indexes; idempotent for the same object; never
   * blocks (called from the primary informer's handler).
   */
  primaryChanged(type: WatchEventType, primary: P): void {
    const key = objectKey(primary.metadata);
    for (const [ref, index] of this.indexes) {
      if (type === WatchEventType.Deleted) index.delete(key);
      else index.set(key, ref.targets(primary, this));
    }
  }

  /**
   * After an object of `ref` changed: when `ref` {@link Reference.refiles}, files each of
   * `referrers` again (their targets may follow that object), reading the primary through `get`
   * (undefined: gone, skipped). Mutates the indexes; never blocks; idempotent.
   */
  refile(
    ref: Reference<P, KubeObject>,
    referrers: readonly string[],
    get: (key: string) => P | undefined,
  ): void {
    if (ref.refiles !== true) return;
    for (const key of referrers) {
      const primary = get(key);
      if (primary !== undefined) this.primaryChanged(WatchEventType.Modified, primary);
    }
  }

  /**
   * The primary keys to reconcile after `obj` (of `ref`'s watch) changed: the referrers of its key,
   * of its key before the change (`old`: it moved, e.g. an EndpointSlice relabelled to another
   * Service), and of its namespace ({@link everyIn}). Each once; O(referrers). Reads only.
   */
  referrers(ref: Reference<P, KubeObject>, obj: KubeObject, old?: KubeObject): string[] {
    const index = this.indexes.get(ref);
    if (index === undefined) return [];
    const keys = new Set<string>();
    const add = (target: string): void => {
      for (const k of index.referrers(target)) keys.add(k);
    };
    for (const k of fileKeys(ref, obj)) add(k);
    if (old !== undefined) for (const k of fileKeys(ref, old)) add(k);
    add(everyIn(obj.metadata.namespace ?? ''));
    return [...keys];
  }

  /** The reverse index of `ref` (for tests: what refers to what). */
  index(ref: Reference<P, KubeObject>): ReverseIndex | undefined {
    return this.indexes.get(ref);
  }

  get<O extends KubeObject>(ref: Reference<P, O>, namespace: string, name: string): O | undefined {
    const key = objectKey({ namespace, name });
    for (const c of this.typedCaches(ref)) {
      const obj = c.get(key);
      if (obj !== undefined) return obj;
    }
    return undefined;
  }

  list<O extends KubeObject>(ref: Reference<P, O>, namespace: string, filedUnder?: string): O[] {
    const under = filedUnder !== undefined ? refKey(namespace, filedUnder) : undefined;
    return this.typedCaches(ref)
      .flatMap((c) => c.list())
      .filter(
        (o) =>
          o.metadata.namespace === namespace && (under === undefined || fileKeys(ref, o).includes(under)),
      );
  }

  filed<O extends KubeObject>(ref: Reference<P, O>, key: string): O[] {
    return this.typedCaches(ref)
      .flatMap((c) => c.list())
      .filter((o) => fileKeys(ref, o).includes(key));
  }

  synced(ref: Reference<P, KubeObject>): boolean {
    const caches = this.caches.get(ref) ?? [];
    return caches.length > 0 && caches.every((c) => c.hasSynced);
  }

  primaries(namespace: string): P[] {
    return this.primaryObjects().filter((p) => p.metadata.namespace === namespace);
  }

  private cachesOf(ref: Reference<P, KubeObject>): ObjectCache<KubeObject>[] {
    const caches = this.caches.get(ref);
    if (caches === undefined) throw new Error(`reference ${ref.name} was not declared to this controller`);
    return caches;
  }

  /**
   * The caches of `ref`, read as its object type. The one cast of the facility: a cache attached
   * to a reference holds only objects of the reference's `type`, which the declaration reads as `O`
   * (as an Informer<O> reads its watch's objects).
   */
  private typedCaches<O extends KubeObject>(ref: Reference<P, O>): readonly ObjectCache<O>[] {
    return (this.caches.get(ref) ?? []) as readonly ObjectCache<KubeObject>[] as readonly ObjectCache<O>[];
  }
}
