// The state of a child set as an update changes it: what was observed (key → value), plus the
// changes the provider accepted, minus those it refused — never what was only planned. Each
// update step reports a change once its call succeeded, one at a time (`set`, `delete`) or a
// whole batch of the planner's (`apply`, or `applyWhenAccepted`, which sends it first); the
// result is read back (`values`, `toMap`) to remember what the update left. A nested state holds
// one set per parent child (a listener's rules, by listener). In memory, mutable, synchronous
// but for the send it is given; knows no kind and no provider.
import type { ChildBatch } from './childSet.ts';

/**
 * One child set's state: key → value, in order — the observed children first (as they were
 * listed; a repeated key's first entry counts, as in `planChildSet`), then those created since,
 * in the order they were reported. A child updated keeps its place; one deleted and made again
 * comes last. Mutable; not shared (one per update).
 */
export class ChildSetState<K, V> {
  private readonly children = new Map<K, V>();

  /** The state of the children observed. Copies `observed`; does not keep it. */
  constructor(observed: Iterable<readonly [K, V]> = []) {
    for (const [k, v] of observed) if (!this.children.has(k)) this.children.set(k, v);
  }

  /** A child created or updated to `value`, as the provider accepted it. Mutates; idempotent. */
  set(key: K, value: V): void {
    this.children.set(key, value);
  }

  /** A child deleted (absent: nothing changes). Mutates; idempotent. */
  delete(key: K): void {
    this.children.delete(key);
  }

  /**
   * A batch the provider accepted: its creates and updates take their (wanted) values, its deletes
   * go. Mutates. Call it only once the batch's call succeeded; a child whose accepted value is not
   * the planned one (an ID the provider gave) is reported with `set` instead.
   */
  apply(batch: ChildBatch<K, V>): void {
    if (batch.op === 'delete') for (const c of batch.children) this.delete(c.key);
    else for (const c of batch.children) this.set(c.key, c.value);
  }

  /**
   * Sends `batch` with `send` and applies it once `send` resolves (the provider accepted it),
   * answering what `send` answered. When `send` rejects, nothing is applied — the state stays
   * what it was — and the rejection is passed on. Mutates on success only.
   */
  async applyWhenAccepted<T>(
    batch: ChildBatch<K, V>,
    send: (batch: ChildBatch<K, V>) => Promise<T>,
  ): Promise<T> {
    const answer = await send(batch);
    this.apply(batch);
    return answer;
  }

  /** The child under `key`, if any. Read-only. */
  get(key: K): V | undefined {
    return this.children.get(key);
  }

  /** Whether a child is under `key`. Read-only. */
  has(key: K): boolean {
    return this.children.has(key);
  }

  /** How many children there are. */
  get size(): number {
    return this.children.size;
  }

  /** The children's values, in order (see the class). A new array each call. */
  values(): V[] {
    return [...this.children.values()];
  }

  /** The children by key, in order (see the class). A new map each call: changing it changes nothing here. */
  toMap(): Map<K, V> {
    return new Map(this.children);
  }
}

/**
 * Child sets nested under the children of a parent set (rules under listeners): per outer key
 * (a listener's ID), a {@link ChildSetState} of inner key → value. Outer keys in order as in a
 * {@link ChildSetState}. Mutable; not shared (one per update).
 */
export class NestedChildSetState<K, J, V> {
  private readonly sets: ChildSetState<K, ChildSetState<J, V>>;

  /** The state of the sets observed: outer key → the inner children (key → value). Copies `observed`. */
  constructor(observed: Iterable<readonly [K, Iterable<readonly [J, V]>]> = []) {
    this.sets = new ChildSetState([...observed].map(([k, inner]) => [k, new ChildSetState(inner)] as const));
  }

  /** A child created or updated in the set under `key` (made, empty, when there is none). Mutates; idempotent. */
  set(key: K, childKey: J, value: V): void {
    this.setOf(key).set(childKey, value);
  }

  /** A child deleted from the set under `key` (no set, or no such child: nothing changes). Mutates; idempotent. */
  delete(key: K, childKey: J): void {
    this.sets.get(key)?.delete(childKey);
  }

  /**
   * A batch the provider accepted for the set under `key`, as {@link ChildSetState.apply}; the set
   * is made when the batch creates or updates and there is none. Mutates.
   */
  apply(key: K, batch: ChildBatch<J, V>): void {
    if (batch.op === 'delete') this.sets.get(key)?.apply(batch);
    else this.setOf(key).apply(batch);
  }

  /** The parent child under `key` gone, and its whole set with it. Mutates; idempotent. */
  deleteSet(key: K): void {
    this.sets.delete(key);
  }

  /** The set under `key`, made (empty) when there is none. Mutates when it makes one; changes to it change this state. */
  setOf(key: K): ChildSetState<J, V> {
    const have = this.sets.get(key);
    if (have !== undefined) return have;
    const made = new ChildSetState<J, V>();
    this.sets.set(key, made);
    return made;
  }

  /** Each set's values by outer key, in order. A new map of new arrays each call. */
  toMap(): Map<K, V[]> {
    return new Map([...this.sets.toMap()].map(([k, inner]) => [k, inner.values()]));
  }
}
