// A Gateway judged by its own namespace's TeamPolicy (group/tenancy.ts's judgeGatewayTenancy, the
// status of a refused Gateway, gateway/status.ts's gatewayRefused): the load balancer the Gateway
// would get is made only when the namespace's tenancy serves it with the operator's identity and
// its load-balancer guardrails allow that load balancer; otherwise Accepted and Programmed are
// False, reason NotAllowedByTeamPolicy, saying whether a load balancer already there is kept.
import { describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/apis/gatewayApi.ts';
import type { TeamPolicy, TeamPolicySpec } from '../../src/apis/teampolicy.ts';
import { listenerVerdicts } from '../../src/kinds/myingress/gateway/listeners.ts';
import {
  gatewayGroup,
  gatewayRefused,
  gatewayStatus,
  loadBalancerState,
  type GatewayDefaults,
} from '../../src/kinds/myingress/gateway/status.ts';
import type { MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { judgeGatewayTenancy } from '../../src/kinds/myingress/group/tenancy.ts';
import type { GuardLookups } from '../../src/kinds/myingress/guardrails.ts';
import type { Tenancy } from '../../src/tenancy/selection.ts';

const now = new Date('2026-11-27T12:00:00Z');

const gateway: Gateway = {
  metadata: { namespace: 'shop', name: 'edge', uid: 'gw-uid', generation: 3 },
  spec: {
    gatewayClassName: 'skylift',
    listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
  },
};

const internetFacing: GatewayDefaults = {
  scheme: 'internet-facing',
  subnetTags: { 'kubernetes.io/role/elb': '1' },
};

/** The group Gateway shop/edge would get under `defaults` (its listeners all usable). */
function groupOf(defaults: GatewayDefaults, gw: Gateway = gateway): MyIngressGroup {
  const g = gatewayGroup(
    gw,
    listenerVerdicts(gw, () => ({ ok: true })),
    defaults,
  );
  if (g === undefined) throw new Error('no group');
  return g;
}

const policy = (name: string, spec: Partial<TeamPolicySpec> = {}): Tenancy => ({
  kind: 'policy',
  policy: { metadata: { name }, spec: { namespaces: { names: ['shop'] }, ...spec } } satisfies TeamPolicy,
});

/** Lookups that fail the test when asked: the cases below need none. */
const noLookups: GuardLookups = {
  vpcCidrs: () => Promise.reject(new Error('unexpected lookup')),
  subnetTags: () => Promise.reject(new Error('unexpected lookup')),
  securityGroupTags: () => Promise.reject(new Error('unexpected lookup')),
  certificateTags: () => Promise.reject(new Error('unexpected lookup')),
  subnetsMatching: () => Promise.reject(new Error('unexpected lookup')),
  certificateForHost: () => Promise.reject(new Error('unexpected lookup')),
};

const httpsGateway: Gateway = {
  ...gateway,
  spec: {
    gatewayClassName: 'skylift',
    listeners: [
      {
        name: 'https',
        port: 443,
        protocol: 'HTTPS',
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'tls' }] },
      },
    ],
  },
};

describe('judgeGatewayTenancy', () => {
  it.each<{ reason: string; tenancy: Tenancy; group?: MyIngressGroup; refused: RegExp | undefined }>([
    { reason: 'no TeamPolicy at all: programmed', tenancy: { kind: 'unrestricted' }, refused: undefined },
    {
      reason: 'a policy of the operator’s identity without guardrails: programmed',
      tenancy: policy('shop'),
      refused: undefined,
    },
    {
      reason: 'a refused tenancy (no policy selects it, two overlap): its own message',
      tenancy: { kind: 'refused', message: 'namespace shop is not selected by any TeamPolicy' },
      refused: /^namespace shop is not selected by any TeamPolicy$/,
    },
    {
      reason: 'a role: refused naming the policy, the role and the fixes (no Gateway of its own offered)',
      tenancy: policy('payments', { aws: { roleArn: 'arn:aws:iam::222233334444:role/pay' } }),
      refused:
        /^TeamPolicy payments serves namespace shop as role arn:aws:iam::222233334444:role\/pay, but Gateway shop\/edge \(MyIngressGroup .*\)'s load balancer is the operator's own.*a Gateway's load balancer is never made with another identity.*serves namespace shop with the operator's identity.*\(a MyIngress without spec\.group\)$/,
    },
    {
      reason: 'another region: refused naming it and the region to use',
      tenancy: policy('payments', { aws: { region: 'us-east-1' } }),
      refused: /as region us-east-1, .*and with region eu-west-1/,
    },
    {
      reason:
        'guardrails allowing only internal, the Gateways internet-facing: refused naming the guardrail and the flag',
      tenancy: policy('shop', { guardrails: { loadBalancers: { schemes: ['internal'] } } }),
      refused:
        /^Gateway shop\/edge .*'s load balancer does not meet namespace shop's TeamPolicy shop .*forbids spec\.scheme: internet-facing load balancers are not allowed.*--gateway-scheme/,
    },
    {
      reason: 'guardrails allowing internet-facing: programmed',
      tenancy: policy('shop', {
        guardrails: { loadBalancers: { schemes: ['internal', 'internet-facing'] } },
      }),
      refused: undefined,
    },
    {
      reason: 'certificates imported from Secrets under a policy limiting certificates: refused',
      tenancy: policy('shop', {
        guardrails: { loadBalancers: { certificates: { arns: ['arn:aws:acm:x'] } } },
      }),
      group: groupOf(internetFacing, httpsGateway),
      refused: /listeners\[\]\.certificateRefs/,
    },
  ])('$reason', async ({ tenancy, group, refused }) => {
    const got = await judgeGatewayTenancy(
      tenancy,
      group ?? groupOf(internetFacing),
      'shop',
      'eu-west-1',
      noLookups,
    );
    if (refused === undefined) expect(got).toEqual({ kind: 'served' });
    else expect(got.kind === 'refused' ? got.message : '').toMatch(refused);
  });

  it('throws what a lookup throws (the reconcile is retried, nothing is decided)', async () => {
    const tenancy = policy('shop', {
      guardrails: { loadBalancers: { subnets: { tags: { tier: 'edge' } } } },
    });
    await expect(
      judgeGatewayTenancy(tenancy, groupOf(internetFacing), 'shop', 'eu-west-1', {
        ...noLookups,
        subnetsMatching: () => Promise.reject(new Error('EC2 is down')),
        subnetTags: () => Promise.reject(new Error('EC2 is down')),
      }),
    ).rejects.toThrow('EC2 is down');
  });
});

describe('a refused Gateway’s status', () => {
  it.each<{ reason: string; group: MyIngressGroup | undefined; kept: RegExp; addresses: string[] }>([
    {
      reason: 'no load balancer yet: none is made, no address',
      group: undefined,
      kept: /; no load balancer is made for it$/,
      addresses: [],
    },
    {
      reason: 'a load balancer already there (programmed before): kept, unchanged, its address still given',
      group: {
        ...groupOf(internetFacing),
        metadata: { ...groupOf(internetFacing).metadata, generation: 1 },
        status: {
          dnsName: 'lb.example',
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Available',
              message: '',
              lastTransitionTime: '2026-11-27T11:00:00Z',
              observedGeneration: 1,
            },
          ],
        },
      },
      kept: /; its load balancer \(MyIngressGroup .*\) is kept as it is and not changed until the policy allows it$/,
      addresses: ['lb.example'],
    },
  ])('$reason', ({ group, kept, addresses }) => {
    const lb = gatewayRefused(loadBalancerState(group), group?.metadata.name, 'TeamPolicy p forbids it');
    const s = gatewayStatus(gateway, listenerVerdicts(gateway), lb, new Map(), now);
    expect(s.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'False', 'NotAllowedByTeamPolicy'],
      ['Programmed', 'False', 'NotAllowedByTeamPolicy'],
    ]);
    for (const c of s.conditions) {
      expect(c.message).toMatch(/^TeamPolicy p forbids it/);
      expect(c.message).toMatch(kept);
    }
    const listener = s.listeners[0]?.conditions ?? [];
    expect(listener.find((c) => c.type === 'Accepted')?.status).toBe('True');
    expect(listener.find((c) => c.type === 'Programmed')?.reason).toBe('NotAllowedByTeamPolicy');
    expect(s.addresses.map((a) => a.value)).toEqual(addresses);
  });
});
