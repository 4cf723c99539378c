// The DNSRecord kind: a Route 53 record set.
import type { KindModule } from '../module.ts';
import { dnsRecordCrd, dnsRecordType, dnsRecordFieldContract, type DNSRecord } from './api.ts';
import { dnsRecordController } from './controller.ts';
import { dnsRecordFlags, parseDNSRecordSettings } from './settings.ts';
import { dnsRecordGuardrailSection, dnsRecordAdmission } from './guardrails.ts';

export const dnsRecordKind: KindModule = {
  type: dnsRecordType,
  names: ['dnsrecord', 'dnsrecords', 'dnsr', `${dnsRecordType.plural}.${dnsRecordType.group}`],
  traceShows: 'hosted zone → record set and ownership TXT record; the MyIngress an alias follows',
  crd: dnsRecordCrd,
  fieldContract: dnsRecordFieldContract,
  guardrails: dnsRecordGuardrailSection,
  admission: dnsRecordAdmission,
  flags: dnsRecordFlags,
  configure(values) {
    const settings = parseDNSRecordSettings(values);
    return {
      module: dnsRecordKind,
      controller: (plumbing) => dnsRecordController(plumbing, settings),
      // Imported when a trace asks for it: trace.ts loads the kind's AWS SDK.
      trace: async (obj, ctx) => (await import('./trace.ts')).traceDnsRecord(settings.ownerPrefix)(obj, ctx),
    };
  },
  devFlags: [],
  commands: [],
  healthCheck: { lua: new URL('./health.lua', import.meta.url), constants: {} },
  summarize(obj: DNSRecord): string[] {
    const s = obj.status ?? {};
    const alias = s.aliasDNSName !== undefined ? ` → alias ${s.aliasDNSName}` : '';
    return [`  DNS record     ${text(s.fqdn)}${alias}   (DNSRecord ${obj.metadata.name})`];
  },
};

function text(v: unknown): string {
  return typeof v === 'string' ? v : '?';
}
