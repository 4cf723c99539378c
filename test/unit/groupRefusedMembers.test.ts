// A group member whose rules AWS refuses (src/kinds/myingress/group/refusedMembers.ts): whose the
// refusal is, how long it holds, how the plan lists it; and what a Gateway's route says of its
// group's status (src/kinds/myingress/gateway/status.ts, routeCarriage).
import { describe, expect, it } from 'vitest';
import type { HTTPRoute } from '../../src/apis/gatewayApi.ts';
import type { MyIngress } from '../../src/kinds/myingress/api.ts';
import {
  MemberState,
  type GroupMemberStatus,
  type MyIngressGroup,
} from '../../src/kinds/myingress/group/api.ts';
import type { GroupPlan } from '../../src/kinds/myingress/group/plan.ts';
import {
  refusalRetryMs,
  refusedMember,
  standingRefusals,
  withRefusedMembers,
  type MemberRefusal,
} from '../../src/kinds/myingress/group/refusedMembers.ts';
import { routeCarriage, type RouteCarriage } from '../../src/kinds/myingress/gateway/status.ts';
import { AwsRetryableError, AwsTerminalError } from '../../src/providers/aws/errors.ts';
import { ExplainedRefusal } from '../../src/providers/aws/refusals.ts';

const attribution = new Map([
  ['80/1', 'uid-a'],
  ['80/2', 'uid-b'],
  ['team-b/b/web:80', 'uid-b'],
]);

const refusal = (operation: string | undefined, code = 'TooManyRules'): AwsTerminalError =>
  new AwsTerminalError(`create rule 2: ${code}: limit reached`, code, {
    awsMessage: 'limit reached',
    ...(operation !== undefined ? { operation } : {}),
    step: 'create rule 2',
  });

describe('refusedMember', () => {
  it.each<{ reason: string; err: unknown; child: string | undefined; want: string | undefined }>([
    {
      reason: 'a refused CreateRule is the member the rule was made for',
      err: refusal('CreateRule'),
      child: '80/2',
      want: 'uid-b',
    },
    {
      reason: 'a refused CreateTargetGroup is the member the target group was made for',
      err: refusal('CreateTargetGroup', 'TooManyTargetGroups'),
      child: 'team-b/b/web:80',
      want: 'uid-b',
    },
    {
      reason: 'a refused ModifyRule names no child in its request: the group’s',
      err: refusal('ModifyRule'),
      child: '80/2',
      want: undefined,
    },
    {
      reason: 'an operation not known: the group’s',
      err: refusal(undefined),
      child: '80/2',
      want: undefined,
    },
    {
      reason: 'a child made for no member (the group’s own)',
      err: refusal('CreateRule'),
      child: '80/9',
      want: undefined,
    },
    { reason: 'no child asked for yet', err: refusal('CreateRule'), child: undefined, want: undefined },
    {
      reason: 'a passing failure is retried, never a refusal',
      err: new AwsRetryableError('AwsError', 'create rule 2: ServiceUnavailable', 'ServiceUnavailable'),
      child: '80/2',
      want: undefined,
    },
    { reason: 'not an AWS error', err: new Error('boom'), child: '80/2', want: undefined },
  ])('$reason', ({ err, child, want }) => {
    expect(refusedMember(err, child, attribution)?.uid).toBe(want);
  });

  it('says AWS’s own words, not an explanation in the merged spec’s fields', () => {
    const explained = new ExplainedRefusal(
      'spec.rules 2: Elastic Load Balancing refused it …',
      'TooManyRules',
      {
        cause: refusal('CreateRule'),
        operation: 'CreateRule',
      },
    );
    expect(refusedMember(explained, '80/1', attribution)).toEqual({
      uid: 'uid-a',
      message: 'Elastic Load Balancing refused CreateRule for its rules: TooManyRules: limit reached',
    });
  });
});

const member = (uid: string, generation: number, deleting = false): MyIngress => ({
  metadata: {
    namespace: 'team-b',
    name: uid,
    uid,
    generation,
    ...(deleting ? { deletionTimestamp: '2026-11-27T00:00:00Z' } : {}),
  },
  spec: { group: { name: 'shared' }, rules: [] },
});

const refused = (uid: string, generation: number, at = 0): MemberRefusal => ({
  uid,
  generation,
  message: 'Elastic Load Balancing refused CreateRule for its rules: TooManyRules: limit reached',
  at,
});

describe('standingRefusals', () => {
  it.each<{ reason: string; members: MyIngress[]; now: number; want: string[] }>([
    {
      reason: 'the member at the generation refused: holds',
      members: [member('b', 3)],
      now: 1000,
      want: ['b'],
    },
    {
      reason: 'the member edited since (another generation): tried again',
      members: [member('b', 4)],
      now: 1000,
      want: [],
    },
    { reason: 'the member gone: forgotten', members: [], now: 1000, want: [] },
    {
      reason: 'the member being deleted: it leaves as any member does',
      members: [member('b', 3, true)],
      now: 1000,
      want: [],
    },
    { reason: 'after refusalRetryMs: tried again', members: [member('b', 3)], now: refusalRetryMs, want: [] },
  ])('$reason', ({ members, now, want }) => {
    expect([...standingRefusals([refused('b', 3)], members, now).keys()]).toEqual(want);
  });
});

describe('withRefusedMembers', () => {
  const attached: GroupMemberStatus = {
    namespace: 'team-a',
    name: 'a',
    uid: 'a',
    observedGeneration: 1,
    state: MemberState.Attached,
    rules: 1,
  };
  const plan: GroupPlan = {
    spec: { listeners: [] },
    members: [attached],
    granted: [],
    attribution: new Map(),
    wanted: false,
  };

  it('lists a refused member Invalid at the refused generation with AWS’s words, and keeps the load balancer wanted', () => {
    const out = withRefusedMembers(plan, [{ member: member('b', 3), refusal: refused('b', 3) }]);
    expect(out.members).toEqual([
      attached,
      {
        namespace: 'team-b',
        name: 'b',
        uid: 'b',
        observedGeneration: 3,
        state: MemberState.Invalid,
        message:
          'Elastic Load Balancing refused CreateRule for its rules: TooManyRules: limit reached; its rules are left off the load balancer (tried again when its spec changes)',
        rules: 0,
      },
    ]);
    expect(out.wanted).toBe(true);
    expect(out.spec).toBe(plan.spec);
  });

  it('changes nothing without refusals', () => {
    expect(withRefusedMembers(plan, [])).toBe(plan);
  });
});

describe('routeCarriage', () => {
  const route: HTTPRoute = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'team-b', name: 'b', uid: 'b', generation: 3 },
    spec: {},
  };
  const groupWith = (
    entry: Partial<GroupMemberStatus> | undefined,
    synced: 'True' | 'False' = 'True',
  ): MyIngressGroup => ({
    metadata: { name: 'gateway.infra.shared', generation: 1 },
    spec: { listeners: [], allowedNamespaces: { from: 'All' } },
    status: {
      conditions: [
        {
          type: 'Synced',
          status: synced,
          reason: synced === 'True' ? 'ReconcileSuccess' : 'MemberRefused',
          message: '',
          lastTransitionTime: '2026-11-27T00:00:00Z',
        },
      ],
      members:
        entry === undefined
          ? []
          : [
              {
                namespace: 'team-b',
                name: 'b',
                uid: 'b',
                observedGeneration: 3,
                state: MemberState.Attached,
                rules: 1,
                ...entry,
              },
            ],
    },
  });
  it.each<{ reason: string; group: MyIngressGroup | undefined; want: RouteCarriage['kind'] }>([
    {
      reason: 'listed Attached at its generation by a pass that succeeded: carried',
      group: groupWith({}),
      want: 'carried',
    },
    {
      reason:
        'listed Attached by a pass that failed (the status of a failed pass lists members as planned): pending',
      group: groupWith({}, 'False'),
      want: 'pending',
    },
    {
      reason: 'listed at an older generation: pending',
      group: groupWith({ observedGeneration: 2 }),
      want: 'pending',
    },
    { reason: 'not listed: pending', group: groupWith(undefined), want: 'pending' },
    { reason: 'no group yet: pending', group: undefined, want: 'pending' },
    { reason: 'Leaving: pending', group: groupWith({ state: MemberState.Leaving }), want: 'pending' },
    {
      reason: 'listed Invalid at its generation: refused, whatever the group’s last pass',
      group: groupWith({ state: MemberState.Invalid, message: 'AWS said no' }, 'False'),
      want: 'refused',
    },
    {
      reason: 'listed Conflict: refused',
      group: groupWith({ state: MemberState.Conflict, message: 'taken' }),
      want: 'refused',
    },
    {
      reason: 'listed NotAdmitted: refused',
      group: groupWith({ state: MemberState.NotAdmitted, message: 'no' }),
      want: 'refused',
    },
    {
      reason: 'listed Invalid at an older generation: pending (its new spec not judged yet)',
      group: groupWith({ state: MemberState.Invalid, observedGeneration: 2 }),
      want: 'pending',
    },
  ])('$reason', ({ group, want }) => {
    expect(routeCarriage(group, route).kind).toBe(want);
  });

  it('a refusal carries the group’s message for the member and names the group', () => {
    expect(routeCarriage(groupWith({ state: MemberState.Invalid, message: 'AWS said no' }), route)).toEqual({
      kind: 'refused',
      message:
        "the load balancer cannot carry this route's rules: AWS said no (MyIngressGroup gateway.infra.shared)",
    });
  });
});
