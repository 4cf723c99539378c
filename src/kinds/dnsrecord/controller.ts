import { dnsRecordType, type DNSRecord } from './api.ts';
import { myIngressType } from '../myingress/api.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import { accountsOf, controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import { defaultDNSRecordSettings, type DNSRecordSettings } from './settings.ts';
import type { DNSRecordField } from './adapter.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { tenantConnector } from '../../tenancy/connector.ts';
import { RetryableError } from '../../runtime/errors.ts';
import { checkDnsRecord, dnsGuardrailsOf } from './guardrails.ts';
import { dnsRecordFqdn } from './desired.ts';
import type { ZoneDirectory } from './zones.ts';

/** The DNSRecord controller with its Route 53 plumbing, sharing the process's clients and caches. */
export function dnsRecordController(
  s: KindPlumbing,
  settings: DNSRecordSettings = defaultDNSRecordSettings,
): RunnableController {
  // The adapter reads MyIngresses from the controller's cache; the controller needs the adapter first.
  const holder: { controller?: Controller<DNSRecord> } = {};
  // The zone directory each set of clients' guardrail check resolves zones with (its account's).
  // Weak: the clients of a policy that went away are let go with what was built for them.
  const zonesOf = new WeakMap<AwsClients, ZoneDirectory>();
  // The adapter and its Route 53 plumbing (adapterFor.ts, which loads the Route 53 SDK) are
  // imported when the first object needs them.
  const adapterFor = async (aws: AwsClients) => {
    const { dnsRecordConnection } = await import('./adapterFor.ts');
    const { adapter, zones } = await dnsRecordConnection(aws, s, settings, (ns, name) =>
      holder.controller?.getSecondary(myIngressType, `${ns}/${name}`),
    );
    zonesOf.set(aws, zones);
    return adapter;
  };
  const controller = new Controller<DNSRecord, undefined, DNSRecordField>({
    type: dnsRecordType,
    connector: tenantConnector({
      tenants: s.tenants,
      accounts: accountsOf(s),
      adapterFor,
      guard: async (mr, g) => {
        if (dnsGuardrailsOf(g.policy) === undefined) return;
        const zones = zonesOf.get(g.aws);
        // Built with the adapter, before any guard runs; missing, nothing is checked: refuse.
        if (zones === undefined)
          throw new RetryableError(
            'GuardrailUnchecked',
            'the TeamPolicy guardrails cannot be checked yet (no zone lookup for this account); retrying',
          );
        const zone = await zones.resolve(mr.spec);
        checkDnsRecord(g.policy, mr.spec, zone, dnsRecordFqdn(mr.spec.name, zone.name));
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
