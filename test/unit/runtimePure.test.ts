import { describe, expect, it } from 'vitest';
import { backoffDelay, jittered } from '../../src/runtime/backoff.ts';
import {
  conditionChanged,
  getCondition,
  readyAfterFailure,
  setCondition,
} from '../../src/runtime/conditions.ts';
import {
  decideRetry,
  definitelyNotCreated,
  OwnershipConflictError,
  RequeueAfter,
  RetryableError,
  TerminalError,
  wrap,
} from '../../src/runtime/errors.ts';
import { microTime } from '../../src/runtime/events.ts';
import { parseAddress } from '../../src/runtime/httpServer.ts';
import { statusDigest } from '../../src/runtime/objectWrites.ts';
import { parseRequest, requestRefusal } from '../../src/runtime/requests.ts';
import { objectKey, resourcePath, splitKey } from '../../src/apis/meta.ts';
import { KubeApiError } from '../../src/runtime/kube/client.ts';
import { ownershipFromTags, ownershipOf, ownershipTagMap } from '../../src/apis/managed.ts';
import { deepEqual, mergePatchFor, mergePatchForAny } from '../../src/runtime/mergePatch.ts';
import { significant } from '../../src/runtime/controller.ts';
import { TokenBucket } from '../../src/runtime/tokenBucket.ts';
import { FakeClock } from '../support/fakeClock.ts';

describe('readyAfterFailure', () => {
  const failure = { reason: 'AWSUnreachable', message: 'observe: connect ECONNREFUSED' };
  const ready = (observedGeneration: number) => ({
    type: 'Ready',
    status: 'True' as const,
    reason: 'Available',
    message: '',
    lastTransitionTime: '2026-11-22T01:00:00Z',
    observedGeneration,
  });
  const creating = { ...ready(3), status: 'False' as const, reason: 'Creating' };
  const notReady = { type: 'Ready', status: 'False', ...failure };
  it.each([
    {
      why: 'nothing observed, Ready=True judged against this generation: kept',
      previous: ready(3),
      observed: { kind: 'none' } as const,
      want: undefined,
    },
    {
      why: 'nothing observed, Ready=True judged against an older generation: not Ready',
      previous: ready(2),
      observed: { kind: 'none' } as const,
      want: notReady,
    },
    {
      why: 'nothing observed, a progress reason: replaced by the failure',
      previous: creating,
      observed: { kind: 'none' } as const,
      want: notReady,
    },
    {
      why: 'observed absent: not Ready',
      previous: ready(3),
      observed: { kind: 'absent' } as const,
      want: notReady,
    },
    {
      why: 'observed present but not matching the spec: not Ready',
      previous: ready(3),
      observed: { kind: 'present', matches: false, ready: { ready: true, reason: 'Available' } } as const,
      want: notReady,
    },
    {
      why: 'observed present and matching: Ready as observed',
      previous: creating,
      observed: { kind: 'present', matches: true, ready: { ready: true, reason: 'Available' } } as const,
      want: { type: 'Ready', status: 'True', reason: 'Available' },
    },
    {
      why: 'being deleted: never Ready',
      previous: ready(3),
      observed: { kind: 'deleting' } as const,
      want: notReady,
    },
  ])('$why', ({ previous, observed, want }) => {
    expect(readyAfterFailure(previous, 3, observed, failure)).toEqual(want);
  });
});

describe('setCondition', () => {
  const t0 = new Date('2026-11-22T01:00:00Z');
  const t1 = new Date('2026-11-22T02:00:00Z');
  it('keeps lastTransitionTime while the status stays the same', () => {
    const a = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Creating' }, 1, t0);
    const b = setCondition(
      a,
      { type: 'Ready', status: 'False', reason: 'Provisioning', message: 'x' },
      2,
      t1,
    );
    expect(b).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'Provisioning',
        message: 'x',
        lastTransitionTime: '2026-11-22T01:00:00Z',
        observedGeneration: 2,
      },
    ]);
    const c = setCondition(b, { type: 'Ready', status: 'True', reason: 'Available' }, 2, t1);
    expect(getCondition(c, 'Ready')?.lastTransitionTime).toBe('2026-11-22T02:00:00Z');
    expect(a).toHaveLength(1); // input not mutated
    expect(a[0]?.reason).toBe('Creating');
  });
  it('truncates huge messages', () => {
    const c = setCondition(
      undefined,
      { type: 'Synced', status: 'False', reason: 'X', message: 'm'.repeat(10_000) },
      1,
      t0,
    );
    expect(c[0]?.message.length).toBe(2000);
  });
});

describe('conditionChanged', () => {
  const base = {
    type: 'Ready',
    status: 'False' as const,
    reason: 'ServiceNotFound',
    message: 'Service web does not exist',
    lastTransitionTime: '2026-11-22T01:00:00Z',
    observedGeneration: 1,
  };
  it.each([
    { reason: 'the same condition', previous: base, next: base, want: false },
    {
      reason: 'only bookkeeping differs (time, generation)',
      previous: base,
      next: { ...base, lastTransitionTime: '2026-11-22T02:00:00Z', observedGeneration: 2 },
      want: false,
    },
    { reason: 'another status', previous: base, next: { ...base, status: 'True' as const }, want: true },
    {
      reason: 'another reason',
      previous: base,
      next: { ...base, reason: 'ServicePortNotFound' },
      want: true,
    },
    {
      reason: 'another message',
      previous: base,
      next: { ...base, message: 'Service api does not exist' },
      want: true,
    },
    { reason: 'no condition before', previous: undefined, next: base, want: true },
    { reason: 'no condition after', previous: base, next: undefined, want: true },
    { reason: 'none either side', previous: undefined, next: undefined, want: false },
  ])('$reason: $want', ({ previous, next, want }) => {
    expect(conditionChanged(previous, next)).toBe(want);
  });
});

describe('mergePatchFor', () => {
  it.each([
    { reason: 'no change', from: { a: 1, b: [1] }, to: { b: [1], a: 1 }, want: undefined },
    { reason: 'changed scalar', from: { a: 1 }, to: { a: 2 }, want: { a: 2 } },
    { reason: 'removed key becomes null', from: { a: 1, b: 2 }, to: { a: 1 }, want: { b: null } },
    {
      reason: 'nested change only',
      from: { s: { x: 1, y: 2 } },
      to: { s: { x: 1, y: 3 } },
      want: { s: { y: 3 } },
    },
    { reason: 'arrays replaced whole', from: { c: [1, 2] }, to: { c: [1] }, want: { c: [1] } },
    { reason: 'added object', from: {}, to: { s: { x: 1 } }, want: { s: { x: 1 } } },
  ])('$reason', ({ from, to, want }) => {
    expect(mergePatchFor(from, to)).toEqual(want);
  });
  it('treats undefined members as absent', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  });
});

describe('mergePatchForAny', () => {
  it.each([
    { reason: 'equal to every base', froms: [{ a: 1 }, { a: 1 }], to: { a: 1 }, want: undefined },
    {
      reason: 'differs from one base only (the cache is behind the last write)',
      froms: [
        { a: 1, s: 'True' },
        { a: 1, s: 'False' },
      ],
      to: { a: 1, s: 'True' },
      want: { s: 'True' },
    },
    {
      reason: 'keys that differ in either, nested',
      froms: [{ n: { x: 1, y: 2 } }, { n: { x: 0, y: 3 } }],
      to: { n: { x: 1, y: 3 } },
      want: { n: { x: 1, y: 3 } },
    },
    { reason: 'a key in one base only is removed', froms: [{}, { b: 1 }], to: {}, want: { b: null } },
    {
      reason: 'a key missing from one base is set whole',
      froms: [{ n: { x: 1 } }, {}],
      to: { n: { x: 1 } },
      want: { n: { x: 1 } },
    },
  ])('$reason', ({ froms, to, want }) => {
    expect(mergePatchForAny(froms, to)).toEqual(want);
  });
});

describe('decideRetry', () => {
  it.each([
    { reason: 'terminal', err: new TerminalError('bad'), kind: 'terminal' },
    { reason: 'ownership conflict', err: new OwnershipConflictError('theirs'), kind: 'conflict' },
    { reason: 'requeue after', err: new RequeueAfter(5000), kind: 'requeueAfter' },
    { reason: 'kubernetes 409', err: new KubeApiError(409, 'Conflict', 'modified'), kind: 'staleObject' },
    { reason: 'kubernetes 500', err: new KubeApiError(500, 'InternalError', 'boom'), kind: 'retry' },
    { reason: 'retryable with reason', err: new RetryableError('Throttled', 'slow'), kind: 'retry' },
    { reason: 'anything else', err: new Error('?'), kind: 'retry' },
    { reason: 'a thrown string', err: 'oops', kind: 'retry' },
  ])('$reason → $kind', ({ err, kind }) => {
    expect(decideRetry(err).kind).toBe(kind);
  });

  it('keeps retry intent when wrapping with the failed step', () => {
    const w = wrap('create', new RequeueAfter(42, 'busy', 'WaitingForReference'));
    expect(w).toBeInstanceOf(RequeueAfter);
    expect(w.message).toBe('create: busy');
    expect((w as RequeueAfter).reason).toBe('WaitingForReference');
    expect(wrap('observe', new TerminalError('x'))).toBeInstanceOf(TerminalError);
    expect(decideRetry(wrap('patch', new KubeApiError(409, 'Conflict', 'c'))).kind).toBe('staleObject');
    expect((wrap('x', new RetryableError('Throttled', 'y')) as RetryableError).reason).toBe('Throttled');
  });

  it('knows when a failed create certainly created nothing', () => {
    expect(definitelyNotCreated(new TerminalError('x'))).toBe(true);
    expect(definitelyNotCreated(new RetryableError('Throttled', 'x'))).toBe(true);
    expect(definitelyNotCreated(new RetryableError('AWSError', '503'))).toBe(false);
    expect(definitelyNotCreated(new RequeueAfter(1000, 'waiting for a reference'))).toBe(true);
    expect(definitelyNotCreated(new Error('ECONNRESET'))).toBe(false);
  });
});

describe('backoff', () => {
  it('is exponential, capped and jittered within bounds', () => {
    const p = { baseMs: 500, capMs: 300_000, jitter: 0.2 };
    expect(backoffDelay(p, 1, () => 0.5)).toBe(500);
    expect(backoffDelay(p, 4, () => 0.5)).toBe(4000);
    expect(backoffDelay(p, 30, () => 0.999)).toBe(300_000);
    expect(backoffDelay(p, 1, () => 0)).toBe(400);
    expect(jittered(1000, 0.1, () => 0)).toBe(900);
    expect(jittered(1000, 0.1, () => 1)).toBe(1100);
  });
});

describe('TokenBucket', () => {
  it('serves the burst at once, then spaces requests by the rate, and refills over time', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 5, 2);
    expect([b.reserve(), b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 200, 400]);
    clock.advance(10_000);
    expect(b.reserve()).toBe(0);
    b.setRate(1);
    b.reserve();
    expect(b.reserve()).toBe(1000);
  });
});

describe('ownership tags', () => {
  it('round-trips and ignores untagged resources', () => {
    const o = ownershipOf({ metadata: { name: 'web', namespace: 'shop', uid: 'u-1' } }, 'prod');
    expect(ownershipTagMap(o)).toEqual({
      'skylift.dev/cluster': 'prod',
      'skylift.dev/owner': 'shop/web',
      'skylift.dev/uid': 'u-1',
    });
    expect(ownershipFromTags(ownershipTagMap(o))).toEqual(o);
    expect(ownershipFromTags({ Name: 'x' })).toBeUndefined();
  });
});

describe('resource paths and keys', () => {
  const crd = {
    group: 'aws.skylift.dev',
    version: 'v1alpha1',
    plural: 'dnsrecords',
    kind: 'DNSRecord',
    namespaced: true,
  };
  const core = { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true };
  it('builds REST paths', () => {
    expect(resourcePath(crd, { namespace: 'a', name: 'b', subresource: 'status' })).toBe(
      '/apis/aws.skylift.dev/v1alpha1/namespaces/a/dnsrecords/b/status',
    );
    expect(resourcePath(core, {})).toBe('/api/v1/services');
    expect(resourcePath(core, { namespace: 'x' })).toBe('/api/v1/namespaces/x/services');
  });
  it('round-trips keys', () => {
    expect(splitKey(objectKey({ namespace: 'a', name: 'b' }))).toEqual({ namespace: 'a', name: 'b' });
    expect(splitKey('cluster-scoped')).toEqual({ namespace: undefined, name: 'cluster-scoped' });
  });
  it('reconciles only on spec or deletion changes', () => {
    const base = { metadata: { name: 'x', generation: 1, resourceVersion: '1' } };
    expect(significant(base, { metadata: { ...base.metadata, resourceVersion: '2' } })).toBe(false);
    expect(significant(base, { metadata: { ...base.metadata, generation: 2 } })).toBe(true);
    expect(
      significant(base, { metadata: { ...base.metadata, deletionTimestamp: '2026-11-22T00:00:00Z' } }),
    ).toBe(true);
  });
});

describe('small formats', () => {
  it('microTime has microseconds', () => {
    expect(microTime(Date.UTC(2026, 10, 22, 1, 2, 3, 456))).toBe('2026-11-22T01:02:03.456000Z');
  });
  it('parseAddress', () => {
    expect(parseAddress(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(() => parseAddress('nope')).toThrow(/host:port/);
  });
});

describe('statusDigest', () => {
  // Issue 27, item 16: the controller tells the engine's own status writes from others' by it.
  it('ignores key order and absent (undefined or null) keys, and nothing else', () => {
    const cond = (status: 'True' | 'False') => ({
      type: 'Ready',
      status,
      reason: 'Available',
      message: '',
      lastTransitionTime: '2026-11-27T00:00:00Z',
    });
    const a = { arn: 'x', conditions: [cond('True')], observedGeneration: 2 };
    const { type, ...rest } = cond('True');
    expect(statusDigest(a)).toBe(
      statusDigest({ observedGeneration: 2, conditions: [{ ...rest, type }], arn: 'x' }),
    );
    expect(statusDigest({ ...a, dnsName: undefined, state: null })).toBe(statusDigest(a));
    expect(statusDigest(undefined)).toBe(statusDigest({}));
    expect(statusDigest({ ...a, conditions: [cond('False')] })).not.toBe(statusDigest(a));
    expect(statusDigest({ ...a, observedGeneration: 3 })).not.toBe(statusDigest(a));
  });
});

describe('request annotations', () => {
  const db = ['snapshot', 'reboot', 'failover'];
  // Issue 27, item 18: an annotation no kind accepts was ignored without a word.
  it.each([
    { reason: 'absent', raw: undefined, actions: db, want: undefined },
    { reason: 'accepted, spaces around', raw: ' snapshot r1 ', actions: db, want: undefined },
    {
      reason: 'an unknown action',
      raw: 'snapshott r1',
      actions: db,
      want: 'annotation aws.skylift.dev/request is "snapshott r1", which is not a request: ManagedDB accepts "snapshot <id>", "reboot <id>", "failover <id>"',
    },
    {
      reason: 'an action without an id',
      raw: 'snapshot',
      actions: db,
      want: 'ManagedDB accepts "snapshot <id>"',
    },
    {
      reason: 'a kind that accepts none',
      raw: 'snapshot r1',
      actions: [],
      want: 'ManagedDB accepts no requests; nothing was done for it. Remove the annotation',
    },
  ])('$reason', ({ raw, actions, want }) => {
    const refusal = requestRefusal(raw, actions, 'ManagedDB');
    if (want === undefined) expect(refusal).toBeUndefined();
    else expect(refusal).toContain(want);
    expect(parseRequest(raw, actions) === undefined).toBe(raw === undefined || want !== undefined);
  });
});
