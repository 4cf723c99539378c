import { dnsRecordType, type DNSRecord } from './api.ts';
import { myIngressType } from '../myingress/api.ts';
import { ChangeBatcher } from '../../providers/route53/changeBatcher.ts';
import { ChangeTracker } from '../../providers/route53/changeTracker.ts';
import { ZoneRecordCache } from '../../providers/route53/zoneRecords.ts';
import { ZoneDirectory } from '../../providers/route53/zones.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import { accountsOf, controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import { defaultDNSRecordSettings, type DNSRecordSettings } from './settings.ts';
import { DNSRecordAdapter, type DNSRecordField } from './adapter.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { recordFqdn } from '../../providers/route53/names.ts';
import { tenantConnector } from '../../tenancy/connector.ts';
import { checkDnsRecord, dnsGuardrailsOf } from './guardrails.ts';
import { explainRefusals } from '../../providers/aws/refusals.ts';
import { dnsrecordRefusals } from './awsRefusals.ts';

/** The DNSRecord controller with its Route 53 plumbing, sharing the process's clients and caches. */
export function dnsRecordController(
  s: KindPlumbing,
  settings: DNSRecordSettings = defaultDNSRecordSettings,
): RunnableController {
  // The adapter reads MyIngresses from the controller's cache; the controller needs the adapter first.
  const holder: { controller?: Controller<DNSRecord> } = {};
  // Route 53 plumbing per identity and region: zone caches, record snapshots and the change
  // batcher are never shared between accounts.
  const zonesOf = new Map<AwsClients, ZoneDirectory>();
  const adapterFor = (aws: AwsClients) => {
    const route53 = aws.route53;
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
    zonesOf.set(aws, zones);
    const adapter = new DNSRecordAdapter({
      zones,
      records,
      batcher,
      tracker: new ChangeTracker(route53, s.clock),
      ownerPrefix: settings.ownerPrefix,
      pollMs: settings.pollMs,
      referenceRetryMs: settings.referenceRetryMs,
      lookupMyIngress: (ns, name) => holder.controller?.getSecondary(myIngressType, `${ns}/${name}`),
    });
    // Route 53's terminal refusals name the spec field and a fix (awsRefusals.ts).
    return explainRefusals(adapter, dnsrecordRefusals);
  };
  const controller = new Controller<DNSRecord, undefined, DNSRecordField>({
    type: dnsRecordType,
    connector: tenantConnector({
      tenants: s.tenants,
      accounts: accountsOf(s),
      adapterFor,
      guard: async (mr, g) => {
        const zones = zonesOf.get(g.aws);
        if (zones === undefined || dnsGuardrailsOf(g.policy) === undefined) return;
        const zone = await zones.resolve(mr.spec);
        checkDnsRecord(g.policy, mr.spec, zone, recordFqdn(mr.spec.name, zone.name));
      },
    }),
    ...controllerOptions(s),
    pollMs: settings.pollMs,
    watches: [
      {
        // An alias follows its MyIngress: a change there reconciles the records that point at it.
        type: myIngressType,
        map: (ming, primaries) =>
          primaries()
            .filter(
              (r) =>
                r.metadata.namespace === ming.metadata.namespace &&
                r.spec.aliasTarget?.myIngressRef?.name === ming.metadata.name,
            )
            .map((r) => `${r.metadata.namespace ?? ''}/${r.metadata.name}`),
      },
    ],
  });
  holder.controller = controller;
  return controller;
}
