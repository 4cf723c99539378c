// A child memory: per object (by uid), what a parent's children (a load balancer's listeners,
// rules, target groups…) were last seen, or made, to be — so that a resync can read the parent
// alone and recall its children until the next full look. Recalled only for the same parent and
// the same spec, and only while fresh: established less than a full-check period ago. Beside the
// records, a part of each (the caller says which) is kept past freshness, until the object is
// forgotten: what Skylift last left, which a full look compares with what it finds.
//
// Knows no kind and no provider: the children are the caller's type, the parent's identity a
// string the caller derives from a record, the time the engine's clock.

/** How a record's children came to be known. */
export type ChildrenOrigin =
  /** Described in full: every child read from the provider. */
  | 'described'
  /** The parent was just created, in this process, from the create's own answer: no children yet. */
  | 'created'
  /** Known as one of the above, then changed by an update that succeeded: what the update left. */
  | 'applied';

/** What is remembered of one object's children. The caller may extend it (e.g. with the parent's identity). */
export interface ChildRecord<C> {
  /** A key of the spec the children were known for: a changed spec is not recalled. */
  readonly specKey: string;
  /** When a full look or the create last established the children (the engine's clock, ms). */
  readonly knownSince: number;
  readonly origin: ChildrenOrigin;
  readonly children: C;
}

/** How a {@link ChildMemory} recalls and what it keeps. */
export interface ChildMemoryOptions<R, L> {
  /** Longest time a record is recalled after its `knownSince` (ms); 0 or less: never (every look is full). */
  readonly fullCheckMs: number;
  /** The identity of the parent a record is of (e.g. its ARN): a record is recalled only for the same. Pure. */
  readonly parentOf: (record: R) => string;
  /** The part of a record kept past freshness, until the object is forgotten (see {@link ChildMemory.lastLeft}). Pure. */
  readonly lastLeftOf?: (record: R) => L;
}

/**
 * Per object (by uid), the record of its parent's children last remembered. `R` is the record
 * (children of the caller's type, see {@link ChildRecord}); `L` what is kept of it past
 * freshness. Holds no promise that the provider still agrees: the caller decides what to re-read.
 * In memory only, one per set of provider clients (so never shared between accounts); not
 * thread-safe (the work queue never hands one object to two workers).
 */
export class ChildMemory<R extends ChildRecord<unknown>, L = never> {
  private readonly records = new Map<string, R>();
  private readonly left = new Map<string, { readonly parent: string; readonly part: L }>();
  private readonly options: ChildMemoryOptions<R, L>;
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(options: ChildMemoryOptions<R, L>) {
    this.options = options;
  }

  /**
   * The record of `uid` for parent `parent` and spec `specKey`, while fresh at `now` (`now −
   * knownSince` under the full-check period); else undefined. Mutates: a record no longer fresh
   * is dropped (one of another parent or spec is kept: it may be asked for again).
   */
  recall(uid: string, parent: string, specKey: string, now: number): R | undefined {
    const r = this.records.get(uid);
    if (r === undefined) return undefined;
    if (!this.fresh(r, now)) {
      this.records.delete(uid);
      return undefined;
    }
    return this.options.parentOf(r) === parent && r.specKey === specKey ? r : undefined;
  }

  /**
   * What was kept past freshness of the last record of `uid` (`lastLeftOf`), when it was of
   * parent `parent`: however long ago, for whichever spec, and with a full-check period of 0 too.
   * Undefined when nothing was remembered since the object was last forgotten, for another
   * parent, or without `lastLeftOf`. Read-only.
   */
  lastLeft(uid: string, parent: string): L | undefined {
    const l = this.left.get(uid);
    return l?.parent === parent ? l.part : undefined;
  }

  /**
   * Records what `uid`'s children are now (replacing its previous record), unless every look is
   * full (a period of 0: only the part kept past freshness is kept). Mutates; at most once a
   * period it also drops every record no longer fresh at `now` (objects never looked at again).
   */
  remember(uid: string, record: R, now: number): void {
    const { fullCheckMs, lastLeftOf, parentOf } = this.options;
    if (lastLeftOf !== undefined) this.left.set(uid, { parent: parentOf(record), part: lastLeftOf(record) });
    if (fullCheckMs <= 0) return;
    this.records.set(uid, record);
    if (now - this.sweptAt < fullCheckMs) return;
    this.sweptAt = now;
    for (const [k, r] of this.records) if (!this.fresh(r, now)) this.records.delete(k);
  }

  /** Forgets `uid`: its record and what was kept past freshness. Mutates; idempotent. */
  forget(uid: string): void {
    this.records.delete(uid);
    this.left.delete(uid);
  }

  /** How many objects have a record (fresh or not yet swept). */
  get size(): number {
    return this.records.size;
  }

  private fresh(r: R, now: number): boolean {
    return now - r.knownSince < this.options.fullCheckMs;
  }
}
