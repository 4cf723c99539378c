// The target-health readiness gate's pure decisions: which Pods register before they are Ready,
// which gates are still shut, what the condition says, and when it is written.
import { describe, expect, it } from 'vitest';
import { resolveTargets, type EndpointSliceLike } from '../../src/kinds/myingress/desired.ts';
import {
  gatePending,
  gateVerdict,
  gateWrite,
  registersBeforeReady,
  targetHealthGate,
  type GateRoute,
  type PodLike,
} from '../../src/kinds/myingress/readinessGate.ts';

const gate = targetHealthGate.conditionType;

function pod(o: {
  gated?: boolean;
  containersReady?: boolean;
  deleting?: boolean;
  gateStatus?: string;
  gateReason?: string;
}): PodLike {
  return {
    metadata: {
      name: 'web-1',
      uid: 'u-1',
      ...(o.deleting === true ? { deletionTimestamp: '2026-11-27T00:00:00Z' } : {}),
    },
    spec: o.gated === false ? {} : { readinessGates: [{ conditionType: gate }] },
    status: {
      podIP: '10.0.0.1',
      conditions: [
        { type: 'ContainersReady', status: o.containersReady === false ? 'False' : 'True' },
        ...(o.gateStatus !== undefined
          ? [
              {
                type: gate,
                status: o.gateStatus,
                ...(o.gateReason !== undefined ? { reason: o.gateReason } : {}),
              },
            ]
          : []),
      ],
    },
  };
}

describe('registersBeforeReady', () => {
  it.each([
    { reason: 'gated, containers ready: only the gate keeps it from Ready', p: pod({}), want: true },
    { reason: 'containers not ready: not serving yet', p: pod({ containersReady: false }), want: false },
    { reason: 'being deleted: never registered again', p: pod({ deleting: true }), want: false },
    { reason: 'no gate: waits for Ready as before', p: pod({ gated: false }), want: false },
    { reason: 'not in the gated-Pod cache', p: undefined, want: false },
  ])('$reason', ({ p, want }) => {
    expect(registersBeforeReady(p)).toBe(want);
  });
});

describe('gatePending', () => {
  it.each([
    { reason: 'no condition yet', p: pod({}), want: true },
    { reason: 'condition False', p: pod({ gateStatus: 'False' }), want: true },
    { reason: 'open: stays open', p: pod({ gateStatus: 'True' }), want: false },
    { reason: 'being deleted', p: pod({ deleting: true }), want: false },
    { reason: 'no gate', p: pod({ gated: false }), want: false },
  ])('$reason', ({ p, want }) => {
    expect(gatePending(p)).toBe(want);
  });
});

const route = (ingress: string, state?: string, reason?: string): GateRoute => ({
  ingress,
  backend: 'web:80',
  target: '10.0.0.1:8080',
  health: state === undefined ? undefined : { state, ...(reason !== undefined ? { reason } : {}) },
});

describe('gateVerdict', () => {
  it.each([
    { reason: 'nothing routes to it: nothing to say', routes: [], want: undefined },
    {
      reason: 'healthy everywhere: open, naming each',
      routes: [route('b', 'healthy'), route('a', 'healthy')],
      want: {
        status: 'True',
        reason: 'TargetHealthy',
        message: 'target 10.0.0.1:8080 healthy in MyIngress a backend web:80, MyIngress b backend web:80',
      },
    },
    {
      reason: 'one still initial: shut, naming it and AWS’s reason',
      routes: [route('a', 'healthy'), route('b', 'initial', 'Elb.InitialHealthChecking')],
      want: {
        status: 'False',
        reason: 'TargetInitial',
        message: 'target 10.0.0.1:8080 is initial in MyIngress b backend web:80 (Elb.InitialHealthChecking)',
      },
    },
    {
      reason: 'failing its checks',
      routes: [route('a', 'unhealthy', 'Target.ResponseCodeMismatch')],
      want: {
        status: 'False',
        reason: 'TargetUnhealthy',
        message:
          'target 10.0.0.1:8080 is unhealthy in MyIngress a backend web:80 (Target.ResponseCodeMismatch)',
      },
    },
    {
      reason: 'not read yet (a MyIngress that has not looked since)',
      routes: [route('a', 'healthy'), route('b')],
      want: {
        status: 'False',
        reason: 'TargetNotRegistered',
        message: 'target 10.0.0.1:8080 is not registered in MyIngress b backend web:80',
      },
    },
  ])('$reason', ({ routes, want }) => {
    expect(gateVerdict(routes)).toEqual(want);
  });
});

describe('gateWrite', () => {
  const shut = { status: 'False' as const, reason: 'TargetInitial', message: 'x' };
  it('writes a new verdict, to this very Pod', () => {
    expect(gateWrite(pod({}), shut)).toEqual({ pod: 'web-1', uid: 'u-1', type: gate, ...shut });
  });
  it('does not write what the condition already says (a new message alone is not worth a write)', () => {
    expect(gateWrite(pod({ gateStatus: 'False', gateReason: 'TargetInitial' }), shut)).toBeUndefined();
  });
  it('writes a change of reason', () => {
    expect(gateWrite(pod({ gateStatus: 'False', gateReason: 'TargetNotRegistered' }), shut)?.reason).toBe(
      'TargetInitial',
    );
  });
});

describe('resolveTargets with the gate', () => {
  const svc = { spec: { ports: [{ port: 80, targetPort: 8080 }] } };
  const slice: EndpointSliceLike = {
    ports: [{ port: 8080 }],
    endpoints: [
      { addresses: ['10.0.0.1'], conditions: { ready: true } },
      { addresses: ['10.0.0.2'], conditions: { ready: false }, targetRef: { kind: 'Pod', name: 'gated' } },
      { addresses: ['10.0.0.3'], conditions: { ready: false }, targetRef: { kind: 'Pod', name: 'plain' } },
      {
        addresses: ['10.0.0.4'],
        conditions: { ready: false, terminating: true },
        targetRef: { kind: 'Pod', name: 'gated' },
      },
      { addresses: ['10.0.0.5'], conditions: { ready: true, terminating: true } },
    ],
  };
  it('adds a not-ready endpoint only when its Pod registers early, never a terminating one', () => {
    expect(resolveTargets(svc, [slice], 80, (p) => p === 'gated')).toEqual({
      port: 8080,
      ips: ['10.0.0.1', '10.0.0.2'],
    });
  });
  it('without the gate, only ready endpoints, as before', () => {
    expect(resolveTargets(svc, [slice], 80)?.ips).toEqual(['10.0.0.1']);
  });
});
