// What the MyIngress adapter remembers of a load balancer's children between
// looks (memory.ts), and what an update leaves (applied.ts). Pure.
import { describe, expect, it } from 'vitest';
import { ownershipTagMap, type OwnershipTags } from '../../src/apis/managed.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { AppliedChildren } from '../../src/kinds/myingress/applied.ts';
import {
  IngressMemory,
  newLoadBalancerChildren,
  specKey,
  type Remembered,
} from '../../src/kinds/myingress/memory.ts';

const hour = 3_600_000;
const ours: OwnershipTags = { cluster: 'c', owner: 'shop/shop', uid: 'uid-1' };
const spec: MyIngressSpec = {
  subnets: ['subnet-1', 'subnet-2'],
  listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } }],
};

function record(over: Partial<Remembered> = {}): Remembered {
  return {
    arn: 'lb-1',
    specKey: specKey(spec),
    knownSince: 0,
    origin: 'described',
    children: newLoadBalancerChildren(ownershipTagMap(ours), ours),
    ...over,
  };
}

describe('IngressMemory', () => {
  it.each<{ reason: string; arn: string; key: string; now: number; recalled: boolean }>([
    {
      reason: 'same load balancer and spec, within the period',
      arn: 'lb-1',
      key: specKey(spec),
      now: hour - 1,
      recalled: true,
    },
    { reason: 'another load balancer (replaced)', arn: 'lb-2', key: specKey(spec), now: 1, recalled: false },
    {
      reason: 'a changed spec',
      arn: 'lb-1',
      key: specKey({ ...spec, ipAddressType: 'dualstack' }),
      now: 1,
      recalled: false,
    },
    { reason: 'the full-check period is over', arn: 'lb-1', key: specKey(spec), now: hour, recalled: false },
  ])('recalls only $reason ($recalled)', ({ arn, key, now, recalled }) => {
    const m = new IngressMemory(hour);
    m.remember('uid-1', record(), 0);
    expect(m.recall('uid-1', arn, key, now) !== undefined).toBe(recalled);
  });

  it('drops a record once its period is over, and forgets on demand', () => {
    const m = new IngressMemory(hour);
    m.remember('uid-1', record(), 0);
    expect(m.recall('uid-1', 'lb-1', specKey(spec), hour)).toBeUndefined();
    expect(m.size).toBe(0);
    m.remember('uid-1', record({ knownSince: hour }), hour);
    m.forget('uid-1');
    expect(m.recall('uid-1', 'lb-1', specKey(spec), hour)).toBeUndefined();
  });

  it('sweeps the records of objects never looked at again, at most once a period', () => {
    const m = new IngressMemory(hour);
    m.remember('gone', record(), 0);
    m.remember('uid-1', record({ knownSince: hour / 2 }), hour / 2);
    expect(m.size).toBe(2);
    m.remember('uid-2', record({ knownSince: 2 * hour }), 2 * hour);
    expect(m.size).toBe(1);
  });

  it('remembers nothing with a period of 0: every look is a full one', () => {
    const m = new IngressMemory(0);
    m.remember('uid-1', record(), 0);
    expect(m.recall('uid-1', 'lb-1', specKey(spec), 0)).toBeUndefined();
    expect(m.size).toBe(0);
  });

  it.each([
    { reason: 'past its period', period: hour, now: 2 * hour },
    { reason: 'with a period of 0', period: 0, now: 0 },
  ])('keeps the targets it last left $reason, for that load balancer, until forgotten', ({ period, now }) => {
    const m = new IngressMemory(period);
    const targetGroups = new Map([
      ['web:80', { tg: { TargetGroupArn: 'tg-1' }, registered: ['10.0.0.1:80'] }],
    ]);
    m.remember('uid-1', record({ children: { ...record().children, targetGroups } }), 0);
    expect(m.recall('uid-1', 'lb-1', specKey(spec), now)).toBeUndefined();
    expect(m.lastLeft('uid-1', 'lb-1')).toEqual(targetGroups);
    expect(m.lastLeft('uid-1', 'lb-2')).toBeUndefined();
    m.forget('uid-1');
    expect(m.lastLeft('uid-1', 'lb-1')).toBeUndefined();
  });
});

describe('AppliedChildren', () => {
  it('starts from what was seen and takes in what each step reports', () => {
    const a = new AppliedChildren({
      ownership: undefined,
      tags: { team: 'a' },
      listeners: [
        { ListenerArn: 'l-80', Port: 80 },
        { ListenerArn: 'l-81', Port: 81 },
      ],
      rules: new Map([
        ['l-80', [{ RuleArn: 'r-1', Priority: '1' }]],
        ['l-81', [{ RuleArn: 'r-2', Priority: '2' }]],
      ]),
      targetGroups: new Map([['web:80', { tg: { TargetGroupArn: 'tg-1' }, registered: ['10.0.0.1:80'] }]]),
      attributes: new Map([['idle_timeout.timeout_seconds', '60']]),
    });
    a.addedTags(Object.entries(ownershipTagMap(ours)).map(([Key, Value]) => ({ Key, Value })));
    a.setAttributes([['idle_timeout.timeout_seconds', '120']]);
    a.listener({ ListenerArn: 'l-80', Port: 80, Protocol: 'HTTPS' });
    a.listenerDeleted('l-81');
    a.rule('l-80', { RuleArn: 'r-3', Priority: '3' });
    a.ruleDeleted('l-80', 'r-1');
    a.targetGroup('web:80', { TargetGroupArn: 'tg-1' }, ['10.0.0.3:80', '10.0.0.2:80'], undefined);
    const c = a.children();
    expect(c.ownership).toEqual(ours);
    expect(c.tags).toMatchObject({ team: 'a', ...ownershipTagMap(ours) });
    expect(c.attributes.get('idle_timeout.timeout_seconds')).toBe('120');
    expect(c.listeners).toEqual([{ ListenerArn: 'l-80', Port: 80, Protocol: 'HTTPS' }]);
    expect([...c.rules]).toEqual([['l-80', [{ RuleArn: 'r-3', Priority: '3' }]]]);
    expect(c.targetGroups.get('web:80')?.registered).toEqual(['10.0.0.2:80', '10.0.0.3:80']);
  });

  it('keeps the ownership it was given when no tags were added', () => {
    expect(new AppliedChildren(newLoadBalancerChildren({}, ours)).children().ownership).toEqual(ours);
  });
});
