// A listener's rules are read page by page: DescribeRules answers at most a page (moto 50 by
// default, AWS up to PageSize) with a NextMarker. Found by make bench's gateway scenario: with 200
// routes on one Gateway only the first 50 rules were seen, and the group's update created "rule 51"
// at a priority a rule unseen already held (PriorityInUse) on every retry.
import {
  DescribeListenersCommand,
  DescribeRulesCommand,
  ElasticLoadBalancingV2Client,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { Listeners } from '../../src/kinds/myingress/listeners.ts';

const elb = mockClient(ElasticLoadBalancingV2Client);
const listenerArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/lb/1/2';

/** `n` rules with priorities 1…n, then the default rule. */
const rules: Rule[] = [
  ...Array.from({ length: 120 }, (_, i) => ({
    RuleArn: `rule-${i + 1}`,
    Priority: String(i + 1),
    IsDefault: false,
  })),
  { RuleArn: 'rule-default', Priority: 'default', IsDefault: true },
];

describe('Listeners.observe', () => {
  beforeEach(() => {
    elb.reset();
    elb
      .on(DescribeListenersCommand)
      .resolves({ Listeners: [{ ListenerArn: listenerArn, Port: 80, Protocol: 'HTTP' }] });
    // Pages of 50, as moto answers without a PageSize.
    elb.on(DescribeRulesCommand).callsFake((input: { Marker?: string }) => {
      const start = input.Marker === undefined ? 0 : rules.findIndex((r) => r.RuleArn === input.Marker) + 1;
      const page = rules.slice(start, start + 50);
      return { Rules: page, ...(start + 50 < rules.length ? { NextMarker: page.at(-1)?.RuleArn } : {}) };
    });
  });

  it('reads every page of a listener’s rules', async () => {
    const client = new ElasticLoadBalancingV2Client({ region: 'us-east-1' });
    const observed = await new Listeners({ elbv2: client, elbv2Create: client }).observe('lb');
    const got = observed.rules.get(listenerArn) ?? [];
    expect(got).toHaveLength(120);
    expect(got.map((r) => r.Priority)).toEqual(Array.from({ length: 120 }, (_, i) => String(i + 1)));
  });
});
