import { dnsRecordType, type DNSRecord } from './api.ts';
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
import { dnsRecordReferences } from './references.ts';
import type { ReferenceReader } from '../../runtime/references.ts';

/** The DNSRecord controller with its Route 53 plumbing, sharing the process's clients and caches. */
export function dnsRecordController(
  s: KindPlumbing,
  settings: DNSRecordSettings = defaultDNSRecordSettings,
): RunnableController {
  // The zone directory each set of clients' guardrail check resolves zones with (its account's).
  // Weak: the clients of a policy that went away are let go with what was built for them.
  const zonesOf = new WeakMap<AwsClients, ZoneDirectory>();
  // The adapter and its Route 53 plumbing (adapterFor.ts, which loads the Route 53 SDK) are
  // imported when the first object needs them; it reads the MyIngress an alias follows through the
  // controller's references (references.ts), handed to the connector when the controller is built.
  const adapterFor = (refs: ReferenceReader<DNSRecord>) => async (aws: AwsClients) => {
    const { dnsRecordConnection } = await import('./adapterFor.ts');
    const { adapter, zones } = await dnsRecordConnection(aws, s, settings, refs);
    zonesOf.set(aws, zones);
    return adapter;
  };
  return new Controller<DNSRecord, undefined, DNSRecordField>({
    type: dnsRecordType,
    connector: (refs) =>
      tenantConnector({
        tenants: s.tenants,
        accounts: accountsOf(s),
        adapterFor: adapterFor(refs),
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
    // An alias follows its MyIngress: a change there reconciles the records that point at it.
    references: dnsRecordReferences,
  });
}
