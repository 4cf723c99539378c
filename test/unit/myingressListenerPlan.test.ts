// MyIngress's listeners (by port) and rules (by priority within a listener) as child sets
// (src/kinds/myingress/listenerPlan.ts): which calls, in which order, one listener or rule each.
// Pure.
import type { Listener, Rule } from '@aws-sdk/client-elastic-load-balancing-v2';
import { describe, expect, it } from 'vitest';
import type { ListenerSpec, RuleSpec } from '../../src/kinds/myingress/api.ts';
import { sdkActions, sdkConditions } from '../../src/kinds/myingress/desired.ts';
import { listenerPlan, listenerRulePlan, wantedListener } from '../../src/kinds/myingress/listenerPlan.ts';
import type { ChildSetPlan } from '../../src/runtime/childSet.ts';

const tgArns = new Map([
  ['web:80', 'tg-web'],
  ['api:80', 'tg-api'],
]);
const toWeb = { forward: { service: { name: 'web', port: 80 } } };
const toApi = { forward: { service: { name: 'api', port: 80 } } };

function http(port: number, defaultAction = toWeb): ListenerSpec {
  return { port, protocol: 'HTTP', defaultAction };
}

function https(port: number, sni: string[] = []): ListenerSpec {
  return {
    port,
    protocol: 'HTTPS',
    certificateArn: 'cert-default',
    ...(sni.length > 0 ? { additionalCertificateArns: sni } : {}),
    defaultAction: toWeb,
  };
}

/** The listener AWS would list for `spec`, with an ARN. */
function seen(spec: ListenerSpec, arn = `l-${spec.port}`): Listener {
  return { ...wantedListener(spec, sdkActions(spec.defaultAction, tgArns)), ListenerArn: arn };
}

/** A plan's batches as `create 443` / `update 80` / `delete 8080`. */
function show<V>(plan: ChildSetPlan<number, V>): string[] {
  return plan.batches.map((b) => `${b.op} ${b.children.map((c) => c.key).join(',')}`);
}

describe('listenerPlan', () => {
  it.each<{ reason: string; want: ListenerSpec[]; have: Listener[]; held?: number[]; batches: string[] }>([
    {
      reason: 'nothing there: each listener created, one per call, in the spec’s order',
      want: [http(8080), http(80)],
      have: [],
      batches: ['create 8080', 'create 80'],
    },
    {
      reason: 'the listeners as the spec has them: nothing to do',
      want: [http(80), https(443, ['cert-a'])],
      have: [seen(http(80)), seen(https(443, ['cert-a']))],
      batches: [],
    },
    {
      reason: 'creates, then updates, then deletes (what serves keeps serving)',
      want: [http(80, toApi), http(81)],
      have: [seen(http(8080)), seen(http(80))],
      batches: ['create 81', 'update 80', 'delete 8080'],
    },
    {
      reason: 'an SNI certificate more is an update of its listener',
      want: [https(443, ['cert-a', 'cert-b'])],
      have: [seen(https(443, ['cert-a']))],
      batches: ['update 443'],
    },
    {
      reason: 'a listener listed without an ARN counts as missing',
      want: [http(80)],
      have: [{ ...seen(http(80)), ListenerArn: undefined }],
      batches: ['create 80'],
    },
    {
      reason: 'held ports are left as AWS has them: not created, not modified',
      want: [http(80), https(443), https(8443)],
      have: [seen(http(80)), { ...seen(https(443)), DefaultActions: [] }],
      held: [443, 8443],
      batches: [],
    },
  ])('$reason', ({ want, have, held, batches }) => {
    expect(show(listenerPlan(want, have, tgArns, new Set(held)))).toEqual(batches);
  });

  it('creates and modifies a listener with the settings the spec asks for, and deletes the one observed', () => {
    const plan = listenerPlan(
      [https(443, ['cert-a']), http(80, toApi)],
      [seen(http(80)), seen(http(81))],
      tgArns,
    );
    expect(plan.creates[0]?.value).toEqual({
      Port: 443,
      Protocol: 'HTTPS',
      DefaultActions: [{ Type: 'forward', TargetGroupArn: 'tg-web' }],
      Certificates: [
        { CertificateArn: 'cert-default', IsDefault: true },
        { CertificateArn: 'cert-a', IsDefault: false },
      ],
    });
    expect(plan.updates[0]?.from.ListenerArn).toBe('l-80');
    expect(plan.updates[0]?.value.DefaultActions).toEqual([{ Type: 'forward', TargetGroupArn: 'tg-api' }]);
    expect(plan.deletes.map((d) => d.value.ListenerArn)).toEqual(['l-81']);
  });
});

describe('listenerRulePlan', () => {
  function rule(priority: number, hosts: string[], action = toWeb): RuleSpec {
    return { priority, hosts, action };
  }

  /** The rule AWS would list for `spec`, with an ARN. */
  function seenRule(spec: RuleSpec): Rule {
    return {
      RuleArn: `r-${spec.priority}`,
      Priority: String(spec.priority),
      Conditions: sdkConditions(spec.hosts, spec.paths),
      Actions: sdkActions(spec.action, tgArns),
      IsDefault: false,
    };
  }

  it.each<{ reason: string; want: RuleSpec[]; have: Rule[]; batches: string[] }>([
    {
      reason: 'nothing there: each rule created, one per call',
      want: [rule(20, ['b.example.com']), rule(10, ['a.example.com'])],
      have: [],
      batches: ['create 20', 'create 10'],
    },
    {
      reason: 'the rules as the spec has them (hosts in any case): nothing to do',
      want: [rule(10, ['a.example.com'])],
      have: [seenRule(rule(10, ['A.example.com']))],
      batches: [],
    },
    {
      reason: 'creates first, then modifies, then deletes, one rule each (what serves keeps serving)',
      want: [rule(30, ['c.example.com']), rule(10, ['a.example.com'], toApi)],
      have: [
        seenRule(rule(10, ['a.example.com'])),
        seenRule(rule(20, ['b.example.com'])),
        seenRule(rule(21, ['x'])),
      ],
      batches: ['create 30', 'update 10', 'delete 20', 'delete 21'],
    },
    {
      reason:
        'priorities shifting as a group member before another leaves: the other’s routes written at their new priority before the old one goes',
      want: [rule(1, ['stay.example.com'])],
      have: [seenRule(rule(1, ['mover.example.com'])), seenRule(rule(2, ['stay.example.com']))],
      batches: ['update 1', 'delete 2'],
    },
    {
      reason: 'a rule listed without an ARN counts as missing',
      want: [rule(10, ['a.example.com'])],
      have: [{ ...seenRule(rule(10, ['a.example.com'])), RuleArn: undefined }],
      batches: ['create 10'],
    },
  ])('$reason', ({ want, have, batches }) => {
    expect(show(listenerRulePlan(want, have, tgArns))).toEqual(batches);
  });

  it('modifies the rule AWS has (its ARN) to the conditions and actions the spec asks for', () => {
    const plan = listenerRulePlan(
      [rule(10, ['new.example.com'])],
      [seenRule(rule(10, ['old.example.com']))],
      tgArns,
    );
    expect(plan.updates).toHaveLength(1);
    expect(plan.updates[0]?.from.RuleArn).toBe('r-10');
    expect(plan.updates[0]?.value).toEqual({
      Priority: '10',
      Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['new.example.com'] } }],
      Actions: [{ Type: 'forward', TargetGroupArn: 'tg-web' }],
    });
  });
});
