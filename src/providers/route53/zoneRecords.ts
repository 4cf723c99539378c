import {
  ListResourceRecordSetsCommand,
  type Change,
  type ListResourceRecordSetsCommandOutput,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { route53Of, type Route53Source } from './source.ts';
import type { Clock } from '../../runtime/clock.ts';
import { toTypedAwsError } from '../aws/errors.ts';
import { route53ErrorTable } from './errors.ts';
import { recordKey } from './names.ts';

/** What one listing of a zone found, by record key (name|type|setIdentifier). */
export interface ZoneSnapshot {
  readonly fetchedAt: number;
  readonly records: ReadonlyMap<string, ResourceRecordSet>;
}

/**
 * Per-zone copies of all record sets, fetched with paginated
 * ListResourceRecordSets, shared by every record in the zone: the number of
 * Route 53 calls for observation grows with zones, not records. A snapshot
 * older than `maxAgeMs` is refetched on the next read; concurrent reads share
 * one fetch; successful changes are written through, so a record's own write
 * needs no refetch.
 */
export class ZoneRecordCache {
  private readonly route53: Route53Source;
  private readonly clock: Clock;
  private readonly maxAgeMs: number;
  private readonly snapshots = new Map<
    string,
    { fetchedAt: number; records: Map<string, ResourceRecordSet> }
  >();
  private readonly inflight = new Map<string, Promise<ZoneSnapshot>>();

  constructor(route53: Route53Source, clock: Clock, maxAgeMs: number) {
    this.route53 = route53;
    this.clock = clock;
    this.maxAgeMs = maxAgeMs;
  }

  /**
   * The zone's records, at most `maxAgeMs` old (the cache's; a smaller one for a caller that must
   * not conclude from an old listing that a record is absent; a larger one for a resync, which one
   * listing serves for a whole zone). Concurrent callers share one listing. May block on
   * ListResourceRecordSets; never mutates Route 53.
   */
  async get(zoneId: string, maxAgeMs: number = this.maxAgeMs): Promise<ZoneSnapshot> {
    const snap = this.snapshots.get(zoneId);
    if (snap !== undefined && this.clock.now() - snap.fetchedAt < maxAgeMs) return snap;
    let p = this.inflight.get(zoneId);
    if (p === undefined) {
      p = this.fetch(zoneId).finally(() => this.inflight.delete(zoneId));
      this.inflight.set(zoneId, p);
    }
    return p;
  }

  /** Forgets a zone's snapshot (e.g. after a change failed in a way that suggests it is stale). */
  invalidate(zoneId: string): void {
    this.snapshots.delete(zoneId);
  }

  /** Applies changes Route 53 accepted to the cached snapshot, if there is one. */
  applyChanges(zoneId: string, changes: readonly Change[]): void {
    const snap = this.snapshots.get(zoneId);
    if (snap === undefined) return;
    for (const c of changes) {
      const rr = c.ResourceRecordSet;
      if (rr?.Name === undefined || rr.Type === undefined) continue;
      const key = recordKey(rr.Name, rr.Type, rr.SetIdentifier);
      if (c.Action === 'DELETE') snap.records.delete(key);
      else snap.records.set(key, rr);
    }
  }

  private async fetch(zoneId: string): Promise<ZoneSnapshot> {
    const records = new Map<string, ResourceRecordSet>();
    let next: { name?: string; type?: string; id?: string } | undefined = {};
    const started = this.clock.now();
    try {
      while (next !== undefined) {
        const out: ListResourceRecordSetsCommandOutput = await route53Of(this.route53).send(
          new ListResourceRecordSetsCommand({
            HostedZoneId: zoneId,
            MaxItems: 300,
            ...(next.name !== undefined ? { StartRecordName: next.name } : {}),
            ...(next.type !== undefined ? { StartRecordType: next.type as 'A' } : {}),
            ...(next.id !== undefined ? { StartRecordIdentifier: next.id } : {}),
          }),
        );
        for (const rr of out.ResourceRecordSets ?? []) {
          if (rr.Name !== undefined && rr.Type !== undefined)
            records.set(recordKey(rr.Name, rr.Type, rr.SetIdentifier), rr);
        }
        next =
          out.IsTruncated === true
            ? {
                ...(out.NextRecordName !== undefined ? { name: out.NextRecordName } : {}),
                ...(out.NextRecordType !== undefined ? { type: out.NextRecordType } : {}),
                ...(out.NextRecordIdentifier !== undefined ? { id: out.NextRecordIdentifier } : {}),
              }
            : undefined;
      }
    } catch (err) {
      throw toTypedAwsError(`list records of zone ${zoneId}`, err, route53ErrorTable);
    }
    const snap = { fetchedAt: started, records };
    this.snapshots.set(zoneId, snap);
    return snap;
  }
}
