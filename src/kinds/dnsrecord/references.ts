// What a DNSRecord refers to: the MyIngress its alias follows. The controller watches MyIngresses,
// indexes records by the MyIngress they name, and reconciles exactly those records when that
// MyIngress changes (its load balancer's DNS name appears, say); the adapter reads the MyIngress
// through the reference (adapter.ts, resolveAlias).
import type { MyIngress, MyIngressAliasStatus } from '../myingress/api.ts';
import { myIngressType } from '../myingress/api.ts';
import { reference, refKey } from '../../runtime/references.ts';
import type { DNSRecord } from './api.ts';

/** A MyIngress as an alias reads it: the status fields that name its load balancer. */
export type AliasedMyIngress = MyIngress & { status?: MyIngressAliasStatus };

/** spec.aliasTarget.myIngressRef: the MyIngress of the record's namespace whose load balancer it aliases. */
export const aliasTargetRef = reference<DNSRecord, AliasedMyIngress>({
  name: 'spec.aliasTarget.myIngressRef',
  type: myIngressType,
  targets: (r) => {
    const ref = r.spec.aliasTarget?.myIngressRef;
    return ref === undefined ? [] : [refKey(r.metadata.namespace ?? '', ref.name)];
  },
});

/** Every reference a DNSRecord may hold, for its controller. */
export const dnsRecordReferences = [aliasTargetRef] as const;
