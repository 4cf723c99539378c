// The fuzz test's judgement of MyIngresses and their backend Services: a
// missing backend is an accepted end only when the Service (or port) is
// really absent, and Ready is wrong when it is.
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../src/apis/managed.ts';
import { absentBackends, backendVerdict, fuzzServices } from '../support/fuzz/myingress.ts';
import {
  settledState,
  unhelpfulMessage,
  withoutQuotedValues,
  type Settled,
} from '../support/fuzz/outcome.ts';

const forwardTo = (name: unknown, port: unknown) => ({ forward: { service: { name, port } } });
const specWith = (...actions: unknown[]) => ({
  listeners: [{ port: 80, protocol: 'HTTP', defaultAction: actions[0] }],
  rules: actions.slice(1).map((action, i) => ({ priority: i + 1, paths: ['/x'], action })),
});

describe('absentBackends', () => {
  it.each([
    {
      reason: 'Services and ports the namespace has',
      spec: specWith(forwardTo('web', 80), forwardTo('api', 8080)),
      want: [],
    },
    {
      reason: 'a Service it does not have, once',
      spec: specWith(forwardTo('nosuch', 80), forwardTo('nosuch', 80)),
      want: [{ service: 'nosuch', port: 80, serviceMissing: true }],
    },
    {
      reason: 'a port its Service does not have',
      spec: specWith({ fixedResponse: { statusCode: 200 } }, forwardTo('web', 443)),
      want: [{ service: 'web', port: 443, serviceMissing: false }],
    },
    { reason: 'no forwards', spec: specWith({ redirect: {} }), want: [] },
    {
      reason: 'any other shape is skipped',
      spec: { listeners: 'x', rules: [null, 3, forwardTo(1, 'a')] },
      want: [],
    },
    { reason: 'no spec', spec: undefined, want: [] },
  ])('$reason', ({ spec, want }) => {
    expect(absentBackends(spec, fuzzServices)).toEqual(want);
  });
});

describe('backendVerdict', () => {
  const missing = (reason: string, message: string): Settled => ({
    state: 'missingBackend',
    reason,
    message,
  });
  const notFoundMsg =
    'spec.listeners[0].defaultAction.forward.service.name "nosuch": Service nosuch does not exist';
  it.each<{ reason: string; spec: unknown; settled: Settled; bad: boolean }>([
    {
      reason: 'Ready with every backend there',
      spec: specWith(forwardTo('web', 80)),
      settled: { state: 'ready' },
      bad: false,
    },
    {
      reason: 'Ready although a Service is absent',
      spec: specWith(forwardTo('nosuch', 80)),
      settled: { state: 'ready' },
      bad: true,
    },
    {
      reason: 'ServiceNotFound for an absent Service, named',
      spec: specWith(forwardTo('nosuch', 80)),
      settled: missing('ServiceNotFound', notFoundMsg),
      bad: false,
    },
    {
      reason: 'ServiceNotFound although every backend exists',
      spec: specWith(forwardTo('web', 80)),
      settled: missing('ServiceNotFound', notFoundMsg),
      bad: true,
    },
    {
      reason: 'ServicePortNotFound for an absent Service',
      spec: specWith(forwardTo('nosuch', 80)),
      settled: missing('ServicePortNotFound', notFoundMsg),
      bad: true,
    },
    {
      reason: 'ServicePortNotFound for an absent port, named',
      spec: specWith(forwardTo('web', 443)),
      settled: missing(
        'ServicePortNotFound',
        'spec.listeners[0].defaultAction.forward.service.port 443: Service web in namespace x has no port 443',
      ),
      bad: false,
    },
    {
      reason: 'a message not naming the Service',
      spec: specWith(forwardTo('nosuch', 80)),
      settled: missing('ServiceNotFound', 'spec.listeners[0]: something is missing'),
      bad: true,
    },
    {
      reason: 'Terminal is judged elsewhere',
      spec: specWith(forwardTo('nosuch', 80)),
      settled: { state: 'terminal', message: 'no subnets' },
      bad: false,
    },
  ])('$reason', ({ spec, settled, bad }) => {
    const verdict = backendVerdict(spec, settled, fuzzServices);
    expect(verdict === undefined ? 'fine' : 'wrong').toBe(bad ? 'wrong' : 'fine');
  });
});

describe('settledState and missing backends', () => {
  const cond = (
    type: string,
    status: 'True' | 'False',
    reason: string,
    observedGeneration = 1,
  ): Condition => ({
    type,
    status,
    reason,
    message: `${reason} message`,
    lastTransitionTime: '2026-11-22T01:00:00Z',
    observedGeneration,
  });
  const obj = (...conditions: Condition[]) => ({
    metadata: { name: 'x', generation: 1 },
    status: { conditions },
  });
  it.each([
    {
      reason: 'ServiceNotFound beside a successful reconcile has settled',
      o: obj(cond('Ready', 'False', 'ServiceNotFound'), cond('Synced', 'True', 'ReconcileSuccess')),
      want: { state: 'missingBackend', reason: 'ServiceNotFound', message: 'ServiceNotFound message' },
    },
    {
      reason: 'ServicePortNotFound likewise',
      o: obj(cond('Ready', 'False', 'ServicePortNotFound'), cond('Synced', 'True', 'ReconcileSuccess')),
      want: {
        state: 'missingBackend',
        reason: 'ServicePortNotFound',
        message: 'ServicePortNotFound message',
      },
    },
    {
      reason: 'not while the reconcile is failing',
      o: obj(cond('Ready', 'False', 'ServiceNotFound'), cond('Synced', 'False', 'AWSError')),
      want: undefined,
    },
    {
      reason: 'not judged against an older spec',
      o: obj(cond('Ready', 'False', 'ServiceNotFound', 0), cond('Synced', 'True', 'ReconcileSuccess')),
      want: undefined,
    },
    {
      reason: 'not another Ready=False reason',
      o: obj(cond('Ready', 'False', 'Provisioning'), cond('Synced', 'True', 'ReconcileSuccess')),
      want: undefined,
    },
  ])('$reason', ({ o, want }) => {
    expect(settledState(o)).toEqual(want);
  });
});

describe('withoutQuotedValues', () => {
  it('drops values quoted from the spec, so a Service named "NaN" is not an artefact, but keeps the rest', () => {
    const m =
      'spec.rules[0].action.forward.service.name "NaN": no Service can have this name; correct the name.';
    expect(unhelpfulMessage(m)).toBeDefined();
    expect(unhelpfulMessage(withoutQuotedValues(m))).toBeUndefined();
    expect(withoutQuotedValues('a "b\\"c" d undefined')).toBe('a "" d undefined');
    expect(unhelpfulMessage(withoutQuotedValues('a "b" then undefined'))).toBeDefined();
  });
});
