// spec.waf's pure parts: what an update does about a load balancer's web ACL (webAclPlan), when a
// look reads it (webAclNeeded), and the delta it shows — above all, that an ACL Skylift did not
// associate is never removed.
import { describe, expect, it } from 'vitest';
import type { MyIngress, MyIngressSpec, WafSpec } from '../../src/kinds/myingress/api.ts';
import { ingressDelta, type ObservedLoadBalancer } from '../../src/kinds/myingress/delta.ts';
import {
  wafAclTag,
  webAclNeeded,
  webAclPlan,
  type WebAclPlan,
  type WebAclSeen,
} from '../../src/kinds/myingress/webAclPlan.ts';

const acl = (name: string): string => `arn:aws:wafv2:us-east-1:111122223333:regional/webacl/${name}/0123`;
const spec = (waf?: WafSpec): MyIngressSpec => ({
  subnets: ['subnet-aa', 'subnet-bb'],
  listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
  ...(waf !== undefined ? { waf } : {}),
});
const none: WebAclSeen = { arn: undefined };

describe('webAclPlan', () => {
  it.each<{
    reason: string;
    waf?: WafSpec;
    recorded?: string;
    attached: WebAclSeen | undefined;
    plan: WebAclPlan;
  }>([
    {
      reason: 'an ACL named and nothing attached: record it, then associate it',
      waf: { webAclArn: acl('a') },
      attached: none,
      plan: { record: acl('a'), associate: acl('a') },
    },
    {
      reason: 'the ACL named is attached and recorded: nothing to do',
      waf: { webAclArn: acl('a') },
      recorded: acl('a'),
      attached: { arn: acl('a') },
      plan: {},
    },
    {
      reason: 'the ARN changed: record the new one, associate it (AssociateWebACL replaces the old)',
      waf: { webAclArn: acl('b') },
      recorded: acl('a'),
      attached: { arn: acl('a') },
      plan: { record: acl('b'), associate: acl('b') },
    },
    {
      reason: 'the ACL Skylift set was replaced by hand: drift, associated again',
      waf: { webAclArn: acl('a') },
      recorded: acl('a'),
      attached: { arn: acl('other') },
      plan: { associate: acl('a') },
    },
    {
      reason: 'the ACL Skylift set was removed by hand: drift, associated again',
      waf: { webAclArn: acl('a'), policy: 'Managed' },
      recorded: acl('a'),
      attached: none,
      plan: { associate: acl('a') },
    },
    {
      reason: 'the ACL named was attached by hand already: only recorded',
      waf: { webAclArn: acl('a') },
      attached: { arn: acl('a') },
      plan: { record: acl('a') },
    },
    {
      reason: 'the field removed, the recorded ACL attached: disassociated, record dropped',
      recorded: acl('a'),
      attached: { arn: acl('a') },
      plan: { disassociate: true, dropRecord: true },
    },
    {
      reason: 'the field removed, another ACL attached since (Firewall Manager): left alone, record dropped',
      recorded: acl('a'),
      attached: { arn: acl('fms') },
      plan: { dropRecord: true },
    },
    {
      reason: 'the field removed, the recorded ACL already gone: record dropped',
      waf: {},
      recorded: acl('a'),
      attached: none,
      plan: { dropRecord: true },
    },
    {
      reason: 'no field and no record: an ACL attached by hand is left alone',
      attached: { arn: acl('by-hand') },
      plan: {},
    },
    {
      reason: 'no field and no record, nothing read: nothing to do',
      attached: undefined,
      plan: {},
    },
    {
      reason: 'LeaveAlone never touches the ACL, even one Skylift associated: the record is dropped',
      waf: { policy: 'LeaveAlone' },
      recorded: acl('a'),
      attached: undefined,
      plan: { dropRecord: true },
    },
    {
      reason: 'LeaveAlone without a record: nothing at all',
      waf: { policy: 'LeaveAlone' },
      attached: { arn: acl('fms') },
      plan: {},
    },
  ])('$reason', ({ waf, recorded, attached, plan }) => {
    expect(webAclPlan(spec(waf), recorded, attached)).toEqual(plan);
  });
});

describe('webAclNeeded: GetWebACLForResource only where an answer can matter', () => {
  it.each([
    { reason: 'no field, no record', waf: undefined, tags: {}, needed: false },
    { reason: 'an ACL named', waf: { webAclArn: acl('a') }, tags: {}, needed: true },
    {
      reason: 'a record of an ACL Skylift set',
      waf: undefined,
      tags: { [wafAclTag]: acl('a') },
      needed: true,
    },
    {
      reason: 'LeaveAlone, even with a record',
      waf: { policy: 'LeaveAlone' as const },
      tags: { [wafAclTag]: acl('a') },
      needed: false,
    },
  ])('$reason', ({ waf, tags, needed }) => {
    expect(webAclNeeded(spec(waf), tags)).toBe(needed);
  });
});

describe('ingressDelta and the web ACL', () => {
  const ours = { cluster: 'c', owner: 'shop/web', uid: 'u1' };
  const mr = (waf?: WafSpec): MyIngress => ({
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
    spec: spec(waf),
  });
  const observed = (tags: Record<string, string>, webAcl?: WebAclSeen): ObservedLoadBalancer => ({
    ownership: ours,
    lb: { LoadBalancerArn: 'arn:lb', IpAddressType: 'ipv4' },
    listeners: [
      {
        Port: 80,
        Protocol: 'HTTP',
        ListenerArn: 'arn:l80',
        DefaultActions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '200' } }],
      },
    ],
    rules: new Map(),
    targetGroups: [],
    attributes: new Map(),
    tags: { 'skylift.dev/cluster': 'c', 'skylift.dev/owner': 'shop/web', 'skylift.dev/uid': 'u1', ...tags },
    ...(webAcl !== undefined ? { webAcl } : {}),
  });
  const webAclEntries = (m: MyIngress, o: ObservedLoadBalancer): string[] =>
    ingressDelta(m, ours, o)
      .filter((e) => e.field === 'webAcl')
      .map((e) => e.change);

  it('shows a missing ACL, and none once it is attached and recorded', () => {
    expect(webAclEntries(mr({ webAclArn: acl('a') }), observed({}, none))).toEqual([
      `web ACL none → ${acl('a')}`,
    ]);
    expect(
      webAclEntries(mr({ webAclArn: acl('a') }), observed({ [wafAclTag]: acl('a') }, { arn: acl('a') })),
    ).toEqual([]);
  });
  it('shows nothing for an ACL attached by hand to a load balancer without spec.waf', () => {
    expect(webAclEntries(mr(), observed({}, { arn: acl('by-hand') }))).toEqual([]);
    expect(webAclEntries(mr(), observed({}))).toEqual([]);
  });
  it('does not count the record tag as a user tag', () => {
    const d = ingressDelta(
      mr({ webAclArn: acl('a') }),
      ours,
      observed({ [wafAclTag]: acl('a') }, { arn: acl('a') }),
    );
    expect(d.filter((e) => e.field === 'tags' || e.field === 'webAcl')).toEqual([]);
  });
});
