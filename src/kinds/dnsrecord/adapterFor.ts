// The DNSRecord adapter for one set of AWS clients, with its Route 53 plumbing. Loaded with
// `import()` at the kind's first object (controller.ts), so that the Route 53 SDK, which everything
// here imports, is loaded only by a process that serves a DNSRecord (issue 16).
import type { Route53Client } from '@aws-sdk/client-route-53';
import { ScopeKey } from '../../providers/aws/accountScope.ts';
import { AccountReaders } from '../../providers/aws/readers.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { ChangeBatcher } from '../../providers/route53/changeBatcher.ts';
import { ChangeTracker } from '../../providers/route53/changeTracker.ts';
import { ZoneRecordCache } from '../../providers/route53/zoneRecords.ts';
import type { ExternalClient } from '../../runtime/adapter.ts';
import { explainErrors } from '../../runtime/explainErrors.ts';
import type { ReferenceReader } from '../../runtime/references.ts';
import type { KindPlumbing } from '../module.ts';
import { explainRefusal } from '../refusals.ts';
import { DNSRecordAdapter, type DNSRecordField } from './adapter.ts';
import type { DNSRecord } from './api.ts';
import { dnsrecordRefusals } from './awsRefusals.ts';
import { resyncListingMaxAge, type DNSRecordSettings } from './settings.ts';
import { ZoneDirectory } from './zones.ts';

/** A DNSRecord adapter and the zone directory its guardrail check resolves zones with. */
export interface DNSRecordConnection {
  readonly adapter: ExternalClient<DNSRecord, undefined, DNSRecordField>;
  readonly zones: ZoneDirectory;
}

/**
 * The Route 53 plumbing of one account and region, shared by every identity (role) of the account
 * and every namespace they serve: one zone directory, one record snapshot per zone, one change
 * batcher and one change tracker. Reads go through any live identity of the account; each change
 * goes out signed by the identity of the object it is for (the batcher never mixes signers).
 */
interface Route53Account {
  readonly readers: AccountReaders<Route53Client>;
  readonly zones: ZoneDirectory;
  readonly records: ZoneRecordCache;
  readonly batcher: ChangeBatcher;
  readonly tracker: ChangeTracker;
  /** Stops the batcher's timers (the account's last identity was let go). */
  dispose(): void;
}

const route53AccountKey = new ScopeKey<Route53Account>('dnsrecord/route53');

/** The account's Route 53 plumbing, made by its first identity (see {@link Route53Account}). */
function route53Account(first: Route53Client, s: KindPlumbing, settings: DNSRecordSettings): Route53Account {
  const readers = new AccountReaders<Route53Client>('Route 53');
  const read = (): Route53Client => readers.current();
  const records = new ZoneRecordCache(read, s.clock, settings.zoneCacheTtlMs);
  const batcher = new ChangeBatcher({
    // Every change names its signer (submit's `via`); this default is never used for them.
    route53: first,
    clock: s.clock,
    logger: s.logger.child({ component: 'route53-batcher' }),
    records,
    windowMs: settings.batchWindowMs,
    onBatch: (_zone, _tickets, changes, outcome) => {
      s.metrics.route53Batches.inc({ outcome });
      if (outcome === 'applied') s.metrics.route53BatchSize.observe(changes);
    },
  });
  return {
    readers,
    // A zone name that was not found is looked up again after the same age as a zone's listing.
    zones: new ZoneDirectory(read, s.clock, settings.zoneCacheTtlMs),
    records,
    batcher,
    tracker: new ChangeTracker(read, s.clock),
    dispose: () => batcher.stop(),
  };
}

/**
 * Builds the adapter for `aws` (one identity in one account and region) on its account's shared
 * Route 53 plumbing ({@link Route53Account}, made by the account's first identity). Loads the
 * Route 53 client of `aws` (and its SDK, the first time); starts nothing. Route 53's terminal
 * refusals name the spec field and a fix (awsRefusals.ts).
 */
export async function dnsRecordConnection(
  aws: AwsClients,
  s: KindPlumbing,
  settings: DNSRecordSettings,
  refs: ReferenceReader<DNSRecord>,
): Promise<DNSRecordConnection> {
  const route53 = await aws.route53();
  const account = aws.scope.memo(route53AccountKey, () => route53Account(route53, s, settings));
  account.readers.add(route53, () => !aws.destroyed);
  const adapter = new DNSRecordAdapter({
    zones: account.zones,
    records: account.records,
    batcher: account.batcher,
    tracker: account.tracker,
    signer: route53,
    ownerPrefix: settings.ownerPrefix,
    pollMs: settings.pollMs,
    resyncListingMaxAgeMs: resyncListingMaxAge(settings, s.settings.resyncPeriodMs),
    referenceRetryMs: settings.referenceRetryMs,
    refs,
  });
  return {
    adapter: explainErrors(adapter, (err, mr) => explainRefusal(err, dnsrecordRefusals, mr.spec)),
    zones: account.zones,
  };
}
