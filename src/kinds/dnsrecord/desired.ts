import type { ResourceRecordSet } from '@aws-sdk/client-route-53';
import type { DNSRecordSpec } from './api.ts';
import {
  NameOutsideZoneError,
  normalizeName,
  normalizeValue,
  recordFqdn,
  wireValue,
} from '../../providers/route53/names.ts';
import { TerminalError } from '../../runtime/errors.ts';

/** A resolved alias target. */
export interface AliasTarget {
  readonly dnsName: string;
  readonly hostedZoneId: string;
  readonly evaluateTargetHealth: boolean;
}

/** Default TTL when the spec has none (the CRD defaults it too). */
export const defaultTtl = 300;

/**
 * The full name (with trailing dot) of the record spec.name names in `zone` (recordFqdn); a name
 * outside the zone is a TerminalError saying to recreate the object, as name and zone are fixed at
 * create. Pure.
 */
export function dnsRecordFqdn(name: string, zone: string): string {
  try {
    return recordFqdn(name, zone);
  } catch (err) {
    if (!(err instanceof NameOutsideZoneError)) throw err;
    throw new TerminalError(
      `spec.name ${JSON.stringify(err.recordName)} is not inside zone ${err.zoneName}: the name and the zone are fixed at create, so delete this DNSRecord and create one whose spec.name is in ${err.zoneName} (a relative name such as "www" is placed in the zone)`,
    );
  }
}

/** The record set the spec asks for, in Route 53's wire form. Pure. */
export function desiredRecordSet(
  spec: DNSRecordSpec,
  fqdn: string,
  alias: AliasTarget | undefined,
): ResourceRecordSet {
  const rr: ResourceRecordSet = { Name: fqdn, Type: spec.type };
  if (spec.setIdentifier !== undefined) {
    rr.SetIdentifier = spec.setIdentifier;
    rr.Weight = spec.weight ?? 0;
  }
  if (alias !== undefined) {
    rr.AliasTarget = {
      DNSName: alias.dnsName,
      HostedZoneId: alias.hostedZoneId,
      EvaluateTargetHealth: alias.evaluateTargetHealth,
    };
  } else {
    rr.TTL = spec.ttl ?? defaultTtl;
    rr.ResourceRecords = (spec.records ?? []).map((v) => ({ Value: wireValue(spec.type, v) }));
  }
  return rr;
}

/**
 * Compares what Route 53 has with what the spec wants, in canonical form
 * (case, trailing dots, quoting, value order and IPv6 spelling do not count).
 * Returns a human-readable diff when they differ. Pure.
 */
export function compareRecordSets(
  observed: ResourceRecordSet,
  desired: ResourceRecordSet,
): { equal: boolean; diff?: string } {
  const diffs: string[] = [];
  const type = desired.Type ?? '';
  if (desired.AliasTarget !== undefined) {
    const o = observed.AliasTarget;
    const d = desired.AliasTarget;
    if (o === undefined) diffs.push('records → alias');
    else {
      if (normalizeName(o.DNSName ?? '') !== normalizeName(d.DNSName ?? ''))
        diffs.push(`alias ${o.DNSName ?? ''} → ${d.DNSName ?? ''}`);
      if ((o.HostedZoneId ?? '') !== (d.HostedZoneId ?? ''))
        diffs.push(`alias zone ${o.HostedZoneId ?? ''} → ${d.HostedZoneId ?? ''}`);
      if ((o.EvaluateTargetHealth ?? false) !== (d.EvaluateTargetHealth ?? false))
        diffs.push('evaluateTargetHealth');
    }
  } else {
    if (observed.AliasTarget !== undefined) diffs.push('alias → records');
    if ((observed.TTL ?? -1) !== (desired.TTL ?? -1))
      diffs.push(`ttl ${observed.TTL ?? 'none'} → ${desired.TTL ?? 'none'}`);
    const canon = (rr: ResourceRecordSet): string[] =>
      (rr.ResourceRecords ?? []).map((r) => normalizeValue(type, r.Value ?? '')).sort();
    const o = canon(observed);
    const d = canon(desired);
    if (o.join('\n') !== d.join('\n')) diffs.push(`records [${o.join(', ')}] → [${d.join(', ')}]`);
  }
  if (desired.SetIdentifier !== undefined && (observed.Weight ?? 0) !== (desired.Weight ?? 0)) {
    diffs.push(`weight ${observed.Weight ?? 0} → ${desired.Weight ?? 0}`);
  }
  return diffs.length === 0 ? { equal: true } : { equal: false, diff: diffs.join('; ') };
}
