// MyIngress's children planned as child sets (src/runtime/childSet.ts): the managed security
// group's rules within AWS's quota per group and direction; a listener's SNI certificates one per
// call, within AWS's quota per load balancer. Pure.
import { describe, expect, it } from 'vitest';
import {
  maxRulesPerGroup,
  maxSniCertificates,
  type ListenerSpec,
  type MyIngressSpec,
} from '../../src/kinds/myingress/api.ts';
import { sniPlan, sniQuotaRefusal } from '../../src/kinds/myingress/desired.ts';
import { rulePlan, type SgRule } from '../../src/kinds/myingress/securityGroupPlan.ts';

const tcp = (port: number, peer = '10.0.0.0/16'): SgRule => ({
  protocol: 'tcp',
  fromPort: port,
  toPort: port,
  peer,
});
const ports = (from: number, n: number): SgRule[] => Array.from({ length: n }, (_, i) => tcp(from + i));

describe('rulePlan: the managed group never holds more rules than AWS’s quota', () => {
  it.each<{ reason: string; have: SgRule[]; want: SgRule[]; calls: string[] }>([
    {
      reason: 'room enough: every missing rule in one authorization, then one revocation',
      have: ports(1000, 2),
      want: ports(1001, 3),
      calls: ['create 2', 'delete 1'],
    },
    {
      reason: 'a full group whose every rule changes: revocations make room for the authorizations',
      have: ports(1000, maxRulesPerGroup),
      want: ports(2000, maxRulesPerGroup),
      calls: [`delete ${maxRulesPerGroup}`, `create ${maxRulesPerGroup}`],
    },
    {
      reason: 'a group one short of full: one rule added first, then room made for the rest',
      have: ports(1000, maxRulesPerGroup - 1),
      want: ports(2000, 3),
      calls: ['create 1', 'delete 2', 'create 2', `delete ${maxRulesPerGroup - 3}`],
    },
  ])('$reason', ({ have, want, calls }) => {
    const r = rulePlan(have, want);
    if (!r.ok) throw new Error(r.error.message);
    expect(r.plan.batches.map((b) => `${b.op} ${b.children.length}`)).toEqual(calls);
    let held = have.length;
    for (const b of r.plan.batches) {
      held += b.op === 'create' ? b.children.length : -b.children.length;
      expect(held).toBeLessThanOrEqual(maxRulesPerGroup);
    }
  });

  it('refuses, as a value, more wanted rules than the quota', () => {
    const r = rulePlan([], ports(1000, maxRulesPerGroup + 1));
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error).toMatchObject({
        reason: 'TotalLimitExceeded',
        limit: maxRulesPerGroup,
        wouldHold: maxRulesPerGroup + 1,
      });
  });
});

const certs = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `arn:aws:acm:eu-west-1:111122223333:certificate/${prefix}-${i}`);

describe('sniPlan: one certificate per call, never more than AWS’s quota on the listener', () => {
  it.each<{ reason: string; have: string[]; want: string[]; calls: string[] }>([
    {
      reason: 'one added, one removed: the add first, so the names it serves keep being served',
      have: certs('a', 1),
      want: certs('b', 1),
      calls: ['create', 'delete'],
    },
    {
      reason: 'several added: one call each (AddListenerCertificates takes one certificate)',
      have: [],
      want: certs('b', 3),
      calls: ['create', 'create', 'create'],
    },
    {
      reason: 'a full listener replacing a certificate: the old one goes first, to make room',
      have: certs('a', maxSniCertificates),
      want: [...certs('a', maxSniCertificates).slice(1), ...certs('b', 1)],
      calls: ['delete', 'create'],
    },
  ])('$reason', ({ have, want, calls }) => {
    const r = sniPlan(have, want);
    if (!r.ok) throw new Error(r.error.message);
    expect(r.plan.batches.map((b) => b.op)).toEqual(calls);
    expect(r.plan.batches.every((b) => b.children.length === 1)).toBe(true);
    let held = have.length;
    for (const b of r.plan.batches) {
      held += b.op === 'create' ? 1 : -1;
      expect(held).toBeLessThanOrEqual(maxSniCertificates);
    }
  });

  it('refuses, as a value, more certificates than the quota', () => {
    const r = sniPlan([], certs('b', maxSniCertificates + 1));
    expect(r.ok).toBe(false);
  });
});

describe('sniQuotaRefusal: AWS’s 25 SNI certificates count for the whole load balancer', () => {
  const listener = (port: number, n: number): ListenerSpec => ({
    port,
    protocol: 'HTTPS',
    certificateArn: 'arn:aws:acm:eu-west-1:111122223333:certificate/default',
    ...(n > 0 ? { additionalCertificateArns: certs(`p${port}`, n) } : {}),
    defaultAction: { fixedResponse: { statusCode: 404 } },
  });
  const spec = (...ls: ListenerSpec[]): MyIngressSpec => ({
    subnets: ['s-1', 's-2'],
    listeners: ls,
  });

  it('lets 25 over two listeners through', () => {
    expect(sniQuotaRefusal(spec(listener(443, 12), listener(8443, 13)))).toBeUndefined();
  });

  it('refuses 26 over two listeners, each within 25, naming each listener’s count and a fix', () => {
    expect(sniQuotaRefusal(spec(listener(443, 13), listener(8443, 13), listener(80, 0)))).toBe(
      "26 SNI certificates on the load balancer (spec.listeners[0] (port 443): 13, spec.listeners[1] (port 8443): 13, the certificates certificateHosts found included), more than AWS's default quota of 25 per Application Load Balancer: serve fewer names by SNI, or use certificates that cover several names",
    );
  });
});
