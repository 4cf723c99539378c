// The hosted zone a DNSRecord's spec.zoneId or spec.zoneName names: Route 53's answers
// (src/providers/route53/zones.ts) become messages that name the spec field at fault and what to
// do. Loaded with the adapter (adapterFor.ts): it brings the Route 53 SDK.
import type { Route53Source } from '../../providers/route53/source.ts';
import { AwsTerminalError } from '../../providers/aws/errors.ts';
import { bareZoneId } from '../../providers/route53/names.ts';
import {
  AmbiguousZoneNameError,
  HostedZoneDirectory,
  NoSuchZoneError,
  ZoneNameNotFoundError,
  type HostedZone,
} from '../../providers/route53/zones.ts';
import type { Clock } from '../../runtime/clock.ts';
import { TerminalError } from '../../runtime/errors.ts';
import type { DNSRecordSpec } from './api.ts';

/**
 * The error for a spec.zoneId whose hosted zone does not exist (never did, or was deleted): no retry
 * finds it, and spec.zoneId is immutable, so the message says to recreate the object. Keeps the
 * NoSuchHostedZone code. Pure.
 */
export function missingZoneIdError(zoneId: string, cause?: unknown): AwsTerminalError {
  const id = bareZoneId(zoneId);
  return new AwsTerminalError(
    `hosted zone ${id} (spec.zoneId) does not exist in this account (was it deleted?): spec.zoneId cannot be changed, so delete this DNSRecord and create it again with the zone's current ID, or with spec.zoneName to follow the zone by name`,
    'NoSuchHostedZone',
    cause !== undefined ? { cause } : undefined,
  );
}

/**
 * What a DNSRecord reports for a failed zone lookup: Route 53's answer that the zone does not exist,
 * or that no zone or several have the name, in the spec's terms (which field, what to do); any
 * other error (a throttled or failed call) as it is. Pure.
 */
export function zoneLookupError(err: unknown): unknown {
  if (err instanceof NoSuchZoneError) return missingZoneIdError(err.zoneId, err.cause);
  if (err instanceof ZoneNameNotFoundError)
    return new TerminalError(
      `spec.zoneName ${err.zoneName}: no hosted zone of that name in this account: create it (Skylift looks again at the resync period), or delete this DNSRecord and create it in an existing zone (the zone is fixed at create)`,
      { cause: err },
    );
  if (err instanceof AmbiguousZoneNameError)
    return new TerminalError(
      `${err.zones.length} hosted zones are named ${err.zoneName} (${err.zones.map((z) => `${z.id}${z.private ? ' private' : ' public'}`).join(', ')}): set spec.zoneId instead of zoneName`,
    );
  return err;
}

/** True when `err` is the answer that no hosted zone has a spec.zoneName ({@link zoneLookupError}'s). Pure. */
export function isZoneNameNotFound(err: unknown): boolean {
  return (
    err instanceof ZoneNameNotFoundError ||
    (err instanceof Error && err.cause instanceof ZoneNameNotFoundError)
  );
}

/**
 * The zones DNSRecords name, by spec.zoneId or spec.zoneName: Route 53's lookups and their cache
 * (HostedZoneDirectory, one per set of AWS clients), with failures reported by
 * {@link zoneLookupError}.
 */
export class ZoneDirectory {
  private readonly zones: HostedZoneDirectory;

  /** As HostedZoneDirectory's: a missing or ambiguous name is asked about again after `negativeTtlMs`. */
  constructor(route53: Route53Source, clock: Clock, negativeTtlMs?: number) {
    this.zones = new HostedZoneDirectory(route53, clock, negativeTtlMs);
  }

  /**
   * The zone for a spec's zoneId or zoneName (zoneId first). Rejects with a TerminalError naming
   * the field when it does not exist, is ambiguous or neither is set; with the typed error of a
   * failed call otherwise.
   */
  async resolve(ref: Pick<DNSRecordSpec, 'zoneId' | 'zoneName'>): Promise<HostedZone> {
    if (ref.zoneId === undefined && ref.zoneName === undefined)
      throw new TerminalError('set spec.zoneId or spec.zoneName');
    try {
      return await (ref.zoneId !== undefined
        ? this.zones.byId(ref.zoneId)
        : this.zones.byName(ref.zoneName ?? ''));
    } catch (err) {
      throw zoneLookupError(err);
    }
  }

  /** Forgets zone `zoneId` after a call against it answered NoSuchHostedZone (HostedZoneDirectory.forget). */
  forget(zoneId: string): void {
    this.zones.forget(zoneId);
  }
}
