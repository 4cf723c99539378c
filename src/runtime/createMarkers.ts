// Whether an object's create-pending marker still holds. The marker (an
// annotation with the time a create was started, written with the finalizer
// before the create) stays on the object after the create: removing it would
// cost a write per new object. It holds back a second create, and the removal
// of the finalizer, while it is younger than the create grace and the
// resource has not been seen since — AWS lookups can lag a create. Once this
// process has observed the resource (or seen the create refused), the marker
// no longer holds; after a restart it holds again until it is older than the
// grace, which is only slower, never unsafe.
import type { ManagedObject } from '../apis/managed.ts';
import { pendingCreate } from './objectWrites.ts';

/**
 * Create-pending markers this process has seen settled, by object uid. Not
 * persisted; bounded (entries older than the grace are dropped). Methods never
 * block or throw; `settled` and `refused` mutate only this record.
 */
export class CreateMarkers {
  private readonly graceMs: number;
  /** uid → the marker time that was settled. */
  private readonly settledAt = new Map<string, number>();
  /** When the record was last swept of markers older than the grace. */
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(graceMs: number) {
    this.graceMs = graceMs;
  }

  /**
   * When the create `obj`'s marker records was started (ms since the epoch),
   * if that marker still holds at `now`: within the grace of `now` and not
   * settled. Undefined otherwise. A marker ahead of `now` by less than the
   * grace (another replica's clock) holds until it is older than the grace; one
   * further ahead was written by no create (a hand-set or forged annotation)
   * and never holds, so nothing waits on it for ever.
   */
  holding(obj: ManagedObject, now: number): number | undefined {
    const at = this.current(obj, now);
    if (at === undefined) return undefined;
    return this.settledAt.get(uidOf(obj)) === at ? undefined : at;
  }

  /** The resource was observed: the marker `obj` carries no longer holds. */
  settled(obj: ManagedObject, now: number): void {
    const at = this.current(obj, now);
    if (at === undefined) return;
    this.sweep(now);
    this.settledAt.set(uidOf(obj), at);
  }

  /** The create was refused (nothing exists): the marker no longer holds either. */
  refused(obj: ManagedObject, now: number): void {
    this.settled(obj, now);
  }

  /** Forgets `obj` (it is gone). */
  forget(obj: ManagedObject): void {
    this.settledAt.delete(uidOf(obj));
  }

  /** How many markers are recorded (for tests). */
  get size(): number {
    return this.settledAt.size;
  }

  /** The time of `obj`'s marker if it lies within the grace of `now` (either side), else undefined. */
  private current(obj: ManagedObject, now: number): number | undefined {
    const at = pendingCreate(obj);
    return at === undefined || Math.abs(now - at) >= this.graceMs ? undefined : at;
  }

  /** Drops markers older than the grace: at most once per grace period, and only once there are many. */
  private sweep(now: number): void {
    if (this.settledAt.size < 256 || now - this.sweptAt < this.graceMs) return;
    this.sweptAt = now;
    for (const [uid, at] of this.settledAt) if (now - at >= this.graceMs) this.settledAt.delete(uid);
  }
}

function uidOf(obj: ManagedObject): string {
  return obj.metadata.uid ?? `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}
