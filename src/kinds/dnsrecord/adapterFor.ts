// The DNSRecord adapter for one set of AWS clients, with its Route 53 plumbing. Loaded with
// `import()` at the kind's first object (controller.ts), so that the Route 53 SDK, which everything
// here imports, is loaded only by a process that serves a DNSRecord (issue 16).
import type { AwsClients } from '../../providers/aws/clients.ts';
import { ChangeBatcher } from '../../providers/route53/changeBatcher.ts';
import { ChangeTracker } from '../../providers/route53/changeTracker.ts';
import { ZoneRecordCache } from '../../providers/route53/zoneRecords.ts';
import type { ExternalClient } from '../../runtime/adapter.ts';
import { explainErrors } from '../../runtime/explainErrors.ts';
import type { KubeObject } from '../../apis/meta.ts';
import type { KindPlumbing } from '../module.ts';
import { explainRefusal } from '../refusals.ts';
import { DNSRecordAdapter, type DNSRecordField } from './adapter.ts';
import type { DNSRecord } from './api.ts';
import { dnsrecordRefusals } from './awsRefusals.ts';
import type { DNSRecordSettings } from './settings.ts';
import { ZoneDirectory } from './zones.ts';

/** A DNSRecord adapter and the zone directory its guardrail check resolves zones with. */
export interface DNSRecordConnection {
  readonly adapter: ExternalClient<DNSRecord, undefined, DNSRecordField>;
  readonly zones: ZoneDirectory;
}

/**
 * Builds the adapter for `aws`: its own zone directory, zone record cache, change batcher and change
 * tracker (never shared between accounts). Loads the Route 53 client of `aws` (and its SDK, the first
 * time); starts nothing. Route 53's terminal refusals name the spec field and a fix (awsRefusals.ts).
 */
export async function dnsRecordConnection(
  aws: AwsClients,
  s: KindPlumbing,
  settings: DNSRecordSettings,
  lookupMyIngress: (namespace: string, name: string) => KubeObject | undefined,
): Promise<DNSRecordConnection> {
  const route53 = await aws.route53();
  const records = new ZoneRecordCache(route53, s.clock, settings.zoneCacheTtlMs);
  const batcher = new ChangeBatcher({
    route53,
    clock: s.clock,
    logger: s.logger.child({ component: 'route53-batcher' }),
    records,
    windowMs: settings.batchWindowMs,
    onBatch: (_zone, _tickets, changes, outcome) => {
      s.metrics.route53Batches.inc({ outcome });
      if (outcome === 'applied') s.metrics.route53BatchSize.observe(changes);
    },
  });
  // A zone name that was not found is looked up again after the same age as a zone's listing.
  const zones = new ZoneDirectory(route53, s.clock, settings.zoneCacheTtlMs);
  const adapter = new DNSRecordAdapter({
    zones,
    records,
    batcher,
    tracker: new ChangeTracker(route53, s.clock),
    ownerPrefix: settings.ownerPrefix,
    pollMs: settings.pollMs,
    referenceRetryMs: settings.referenceRetryMs,
    lookupMyIngress,
  });
  return {
    adapter: explainErrors(adapter, (err, mr) => explainRefusal(err, dnsrecordRefusals, mr.spec)),
    zones,
  };
}
