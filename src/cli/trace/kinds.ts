// Which kinds `skylift trace` knows, by every name a user may type.
import { dnsRecordType } from '../../apis/dnsrecord.ts';
import { managedDbType } from '../../apis/manageddb.ts';
import { myIngressType } from '../../apis/myingress.ts';
import type { ResourceType } from '../../runtime/kube/resource.ts';
import type { Collector } from './context.ts';
import { traceDnsRecord } from './dnsrecord.ts';
import { traceManagedDb } from './manageddb.ts';
import { traceMyIngress } from './myingress.ts';

/** A traceable kind: its resource type, the names it answers to, and its collector. */
export interface TraceKind {
  readonly type: ResourceType;
  /** Lower-case: kind, singular, plural, short name, and `plural.group`. */
  readonly names: readonly string[];
  readonly collect: Collector;
}

const withGroup = (t: ResourceType): string => `${t.plural}.${t.group}`;

/** Every kind `skylift trace` can follow. */
export const traceKinds: readonly TraceKind[] = [
  {
    type: myIngressType,
    names: ['myingress', 'myingresses', 'ming', withGroup(myIngressType)],
    collect: traceMyIngress,
  },
  {
    type: managedDbType,
    names: ['manageddb', 'manageddbs', 'mdb', withGroup(managedDbType)],
    collect: traceManagedDb,
  },
  {
    type: dnsRecordType,
    names: ['dnsrecord', 'dnsrecords', 'dnsr', withGroup(dnsRecordType)],
    collect: traceDnsRecord,
  },
];

/** The kind a user typed (Kind, plural, short name or plural.group; any case); undefined if none. Pure. */
export function resolveTraceKind(word: string): TraceKind | undefined {
  const w = word.toLowerCase();
  return traceKinds.find((k) => k.names.includes(w));
}
