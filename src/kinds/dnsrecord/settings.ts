// DNSRecord's settings: its flags of `skylift run`, their defaults, and their parsing.
import { durationSetting, formatDuration, SettingsError } from '../../runtime/settings.ts';
import type { KindFlag } from '../module.ts';

/** Tuning of the DNSRecord controller. */
export interface DNSRecordSettings {
  /** Ownership TXT record name prefix. */
  readonly ownerPrefix: string;
  /** How long a zone collects changes before one ChangeResourceRecordSets call. */
  readonly batchWindowMs: number;
  /** Maximum age of a zone's record snapshot used for observation. */
  readonly zoneCacheTtlMs: number;
  /** Poll interval while a change is queued or propagating. */
  readonly pollMs: number;
  /** How long to wait for a referenced MyIngress before looking again (its watch usually triggers sooner). */
  readonly referenceRetryMs: number;
  /**
   * Maximum age of a zone's listing for the look at a settled record (Ready, at its generation: a
   * resync, or an event that changed nothing): not a flag; default a fifth of the resync period
   * (the spread of its jitter, so one listing serves a zone's whole resync wave), at least
   * `zoneCacheTtlMs`.
   */
  readonly resyncListingMaxAgeMs?: number;
}

/** The settled look's listing age for a resync period (see DNSRecordSettings.resyncListingMaxAgeMs). Pure. */
export function resyncListingMaxAge(settings: DNSRecordSettings, resyncPeriodMs: number): number {
  return settings.resyncListingMaxAgeMs ?? Math.max(settings.zoneCacheTtlMs, resyncPeriodMs / 5);
}

export const defaultDNSRecordSettings: DNSRecordSettings = {
  ownerPrefix: '_skylift-owner',
  batchWindowMs: 1000,
  zoneCacheTtlMs: 30_000,
  pollMs: 2000,
  referenceRetryMs: 60_000,
};

const d = defaultDNSRecordSettings;

/** DNSRecord's flags. */
export const dnsRecordFlags: readonly KindFlag[] = [
  {
    name: 'txt-owner-prefix',
    env: 'SKYLIFT_TXT_OWNER_PREFIX',
    placeholder: 'PREFIX',
    usage: `name prefix of DNSRecord ownership TXT records (default ${d.ownerPrefix})`,
  },
  {
    name: 'route53-batch-window',
    env: 'SKYLIFT_ROUTE53_BATCH_WINDOW',
    placeholder: 'DURATION',
    usage: `time a zone collects changes before one Route 53 call (default ${formatDuration(d.batchWindowMs)})`,
  },
  {
    name: 'route53-zone-cache-ttl',
    env: 'SKYLIFT_ROUTE53_ZONE_CACHE_TTL',
    placeholder: 'DURATION',
    usage: `maximum age of a zone's record listing used to detect drift, and of a zone name found missing (default ${formatDuration(d.zoneCacheTtlMs)})`,
  },
];

/** DNSRecord's settings from flag values by name; absent ones take the defaults. Throws SettingsError. Pure. */
export function parseDNSRecordSettings(values: ReadonlyMap<string, string>): DNSRecordSettings {
  return {
    ownerPrefix: parsePrefix(values.get('txt-owner-prefix') ?? d.ownerPrefix),
    batchWindowMs: durationSetting(values, 'route53-batch-window', d.batchWindowMs),
    zoneCacheTtlMs: durationSetting(values, 'route53-zone-cache-ttl', d.zoneCacheTtlMs),
    pollMs: d.pollMs,
    referenceRetryMs: d.referenceRetryMs,
  };
}

function parsePrefix(prefix: string): string {
  if (!/^[a-z0-9_][a-z0-9_-]{0,40}$/i.test(prefix)) {
    throw new SettingsError(
      `--txt-owner-prefix: want one DNS label of letters, digits, _ and - (at most 41), got ${JSON.stringify(prefix)}`,
    );
  }
  return prefix;
}
