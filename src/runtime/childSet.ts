// A child set: the children an object keeps in a provider (a security group's rules, a
// listener's SNI certificates, a target group's targets), wanted by key and compared with those
// observed. `planChildSet` is the one generic difference: which children to create, update and
// delete, which are another owner's (conflicts, never touched), in which order, and in batches
// that respect the provider's per-call and total limits. Pure: it sends nothing; the kind sends
// each batch with the call its provider has for it. Knows no kind and no provider: the limits are
// the caller's (e.g. MyIngress passes AWS's 60 rules per security group).

/** A child as observed: its value, and whether it is ours (by ownership, as the caller tells). */
export interface ObservedChild<V> {
  readonly value: V;
  /** False: another owner made it; it is never updated or deleted (see {@link ChildSetPlan.conflicts}). */
  readonly ours: boolean;
}

/** A child to create or delete: its key and its value (wanted for a create, observed for a delete). */
export interface ChildChange<K, V> {
  readonly key: K;
  readonly value: V;
}

/** A child of ours whose value differs from the wanted one. */
export interface ChildUpdate<K, V> {
  readonly key: K;
  readonly value: V;
  readonly from: V;
}

/** A wanted key held by a child another owner made: left alone, reported to the caller. */
export interface ChildConflict<K, V> {
  readonly key: K;
  readonly wanted: V;
  readonly observed: V;
}

/** One provider call's worth of changes, all of one kind, at most `perCall` of them. */
export type ChildBatch<K, V> =
  | { readonly op: 'create'; readonly children: readonly ChildChange<K, V>[] }
  | { readonly op: 'update'; readonly children: readonly ChildUpdate<K, V>[] }
  | { readonly op: 'delete'; readonly children: readonly ChildChange<K, V>[] };

/**
 * `createsFirst` (the default): what serves keeps serving — new children exist before old ones go
 * (creates, updates, deletes), except that a total limit may make some deletes come earlier (see
 * {@link planChildSet}). `deletesFirst`: deletes, updates, creates (e.g. a key that must be freed
 * before its replacement can be made).
 */
export type ChildSetOrder = 'createsFirst' | 'deletesFirst';

/** The provider's limits: children per call, and children the parent may hold at any moment. */
export interface ChildSetLimits {
  /** At most this many children per batch (an integer ≥ 1); absent: one batch per kind of change. */
  readonly perCall?: number;
  /** The parent never holds more than this many children (an integer ≥ 0), ours or not; absent: no limit. */
  readonly total?: number;
}

/** How to plan. Every field is optional. */
export interface ChildSetOptions<V> {
  /** Whether an observed value is the wanted one (default `Object.is`): when not, an update. */
  readonly equal?: (wanted: V, observed: V) => boolean;
  /** Default `createsFirst`. */
  readonly order?: ChildSetOrder;
  readonly limits?: ChildSetLimits;
}

/**
 * What to do to bring the observed children to the wanted ones. `creates`, `updates`,
 * `conflicts`: in the order of the wanted children; `deletes`: in the order of the observed ones.
 * `batches`: the same changes, in the order to send them, each within the per-call limit.
 */
export interface ChildSetPlan<K, V> {
  readonly creates: readonly ChildChange<K, V>[];
  readonly updates: readonly ChildUpdate<K, V>[];
  readonly deletes: readonly ChildChange<K, V>[];
  readonly conflicts: readonly ChildConflict<K, V>[];
  readonly batches: readonly ChildBatch<K, V>[];
}

/** The wanted children would not fit: the parent would hold `wouldHold` children, over `limit`. */
export interface ChildSetOverLimit {
  readonly reason: 'TotalLimitExceeded';
  readonly limit: number;
  /** Children the parent would hold once the plan is done: observed (ours or not) − deletes + creates. */
  readonly wouldHold: number;
  readonly creates: number;
  readonly deletes: number;
  /** For people: e.g. `72 children wanted or kept, at most 60` (the caller names what they are). */
  readonly message: string;
}

/** A plan, or why there is none. */
export type ChildSetResult<K, V> =
  | { readonly ok: true; readonly plan: ChildSetPlan<K, V> }
  | { readonly ok: false; readonly error: ChildSetOverLimit };

/**
 * Plans the changes that bring `observed` to `wanted`. Pure and deterministic: the same inputs
 * give the same plan.
 *
 * - A wanted key not observed is a create; observed, ours and not `equal`, an update; observed and
 *   not ours, a conflict (whatever its value), never touched. An observed key of ours not wanted is
 *   a delete; one not ours and not wanted is left alone (it still counts toward the total).
 * - A key repeated in `wanted` or `observed`: its first entry counts, later ones are ignored.
 * - Batches: creates, updates, deletes (or deletes, updates, creates with `deletesFirst`), each cut
 *   into batches of at most `limits.perCall`. With `createsFirst` and `limits.total`, a create
 *   batch never takes the parent over the total: when there is no room left, deletes are batched
 *   first (no more than the creates left need, a batch at most) and the creates continue after them — so a
 *   full parent can still have all its children replaced.
 * - `{ ok: false }` when the parent would end with more than `limits.total` children: nothing is
 *   to be sent (a partial plan would leave the set half changed to no purpose).
 *
 * Throws RangeError for a `perCall` that is not an integer ≥ 1 or a `total` that is not an
 * integer ≥ 0 (a programming error, not a state of the world).
 */
export function planChildSet<K, V>(
  wanted: Iterable<readonly [K, V]>,
  observed: Iterable<readonly [K, ObservedChild<V>]>,
  options: ChildSetOptions<V> = {},
): ChildSetResult<K, V> {
  const equal = options.equal ?? Object.is;
  const { perCall, total } = options.limits ?? {};
  if (perCall !== undefined && !(Number.isInteger(perCall) && perCall >= 1))
    throw new RangeError(`child set: perCall must be an integer ≥ 1, not ${perCall}`);
  if (total !== undefined && !(Number.isInteger(total) && total >= 0))
    throw new RangeError(`child set: total must be an integer ≥ 0, not ${total}`);

  const want = firstOfEach(wanted);
  const have = firstOfEach(observed);
  const creates: ChildChange<K, V>[] = [];
  const updates: ChildUpdate<K, V>[] = [];
  const conflicts: ChildConflict<K, V>[] = [];
  for (const [key, value] of want) {
    const o = have.get(key);
    if (o === undefined) creates.push({ key, value });
    else if (!o.ours) conflicts.push({ key, wanted: value, observed: o.value });
    else if (!equal(value, o.value)) updates.push({ key, value, from: o.value });
  }
  const deletes: ChildChange<K, V>[] = [];
  for (const [key, o] of have) if (o.ours && !want.has(key)) deletes.push({ key, value: o.value });

  const wouldHold = have.size - deletes.length + creates.length;
  if (total !== undefined && wouldHold > total)
    return {
      ok: false,
      error: {
        reason: 'TotalLimitExceeded',
        limit: total,
        wouldHold,
        creates: creates.length,
        deletes: deletes.length,
        message: `${wouldHold} children wanted or kept, at most ${total}`,
      },
    };

  const size = perCall ?? Number.POSITIVE_INFINITY;
  const batches: ChildBatch<K, V>[] = [];
  const updateBatches = chunks(updates, size).map((children) => ({ op: 'update' as const, children }));
  if ((options.order ?? 'createsFirst') === 'deletesFirst') {
    for (const children of chunks(deletes, size)) batches.push({ op: 'delete', children });
    batches.push(...updateBatches);
    for (const children of chunks(creates, size)) batches.push({ op: 'create', children });
  } else {
    // Creates first, within the room the total leaves; deletes make room when there is none.
    let held = have.size;
    let c = 0;
    let d = 0;
    const deleteBatch = (n: number): void => {
      const children = deletes.slice(d, d + n);
      d += children.length;
      held -= children.length;
      batches.push({ op: 'delete', children });
    };
    while (c < creates.length) {
      const room = total === undefined ? Number.POSITIVE_INFINITY : total - held;
      if (room <= 0) {
        // wouldHold ≤ total, so while creates remain, so do deletes: free the room the creates
        // left need, one batch at most.
        deleteBatch(Math.min(size, creates.length - c));
        continue;
      }
      const children = creates.slice(c, c + Math.min(size, room));
      c += children.length;
      held += children.length;
      batches.push({ op: 'create', children });
    }
    batches.push(...updateBatches);
    while (d < deletes.length) deleteBatch(size);
  }
  return { ok: true, plan: { creates, updates, deletes, conflicts, batches } };
}

/**
 * The plan of a result that has one. For a child set planned without `limits.total`, which always
 * has a plan; throws an Error with the result's message otherwise (a programming error). Pure.
 */
export function planOf<K, V>(r: ChildSetResult<K, V>): ChildSetPlan<K, V> {
  if (!r.ok) throw new Error(`child set: no plan: ${r.error.message}`);
  return r.plan;
}

/** Whether a plan changes nothing (conflicts are reported, not changes). Pure. */
export function planIsEmpty(plan: ChildSetPlan<unknown, unknown>): boolean {
  return plan.batches.length === 0;
}

/** The entries of `entries`, the first of each key, in order. Pure. */
function firstOfEach<K, T>(entries: Iterable<readonly [K, T]>): Map<K, T> {
  const out = new Map<K, T>();
  for (const [k, v] of entries) if (!out.has(k)) out.set(k, v);
  return out;
}

/** `items` cut into consecutive runs of at most `size` (none for no items). Pure. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
