// The engine's wrapper that rewrites a client's failures (src/runtime/explainErrors.ts): every
// method's error goes through the explainer with its object; answers pass through untouched.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ManagedObject, ManagedSpec } from '../../src/apis/managed.ts';
import type { ExistingObservation, ExternalClient, ReconcileContext } from '../../src/runtime/adapter.ts';
import { explainErrors } from '../../src/runtime/explainErrors.ts';
import { FakeClock } from '../support/fakeClock.ts';

type Thing = ManagedObject<ManagedSpec & { size: number }>;

const mr: Thing = {
  apiVersion: 'test.skylift.dev/v1',
  kind: 'Thing',
  metadata: { name: 'a', namespace: 'ns' },
  spec: { size: 3 },
};
const ctx: ReconcileContext = {
  logger: pino({ level: 'silent' }),
  ownership: { cluster: 'c', owner: 'ns/a', uid: 'u' },
  clock: new FakeClock(),
};
const observed: ExistingObservation = {
  exists: true,
  details: undefined,
  ownership: undefined,
  delta: [],
  ready: { ready: true, reason: 'Available' },
  status: {},
};

/** A client whose every method fails with `err`. */
function failing(err: Error): ExternalClient<Thing> {
  return {
    location: { account: '1', region: 'r' },
    authorize: () => Promise.reject(err),
    observe: () => Promise.reject(err),
    prepareCreate: () => Promise.reject(err),
    create: () => Promise.reject(err),
    update: () => Promise.reject(err),
    release: () => Promise.reject(err),
    delete: () => Promise.reject(err),
  };
}

/** Explains by naming the spec's size; leaves errors saying "keep" alone. */
const explain = (err: unknown, m: Thing): unknown =>
  err instanceof Error && err.message === 'keep'
    ? err
    : new Error(`spec.size ${m.spec.size}: ${String(err)}`);

describe('explainErrors', () => {
  const calls: {
    reason: string;
    call: (c: ExternalClient<Thing>) => Promise<unknown> | undefined;
  }[] = [
    { reason: 'authorize', call: (c) => c.authorize?.(mr, ctx) },
    { reason: 'observe', call: (c) => c.observe(mr, ctx) },
    { reason: 'prepareCreate', call: (c) => c.prepareCreate?.(mr, ctx) },
    { reason: 'create', call: (c) => c.create(mr, ctx) },
    { reason: 'update', call: (c) => c.update(mr, observed, ctx) },
    { reason: 'release', call: (c) => c.release?.(mr, ctx, 'deleted') },
    { reason: 'delete', call: (c) => c.delete(mr, observed, ctx) },
  ];

  it.each(calls)(
    '$reason: the error thrown is what the explainer made of it, with the object',
    async ({ call }) => {
      const wrapped = explainErrors(failing(new Error('boom')), explain);
      await expect(call(wrapped)).rejects.toThrow('spec.size 3: Error: boom');
    },
  );

  it.each(calls)('$reason: an error the explainer hands back is thrown as it is', async ({ call }) => {
    const err = new Error('keep');
    await expect(call(explainErrors(failing(err), explain))).rejects.toBe(err);
  });

  it('passes answers and the location through, and adds no optional method the client lacks', async () => {
    const client: ExternalClient<Thing> = {
      observe: () => Promise.resolve({ exists: false }),
      create: () => Promise.resolve({ status: { id: 'x' } }),
      update: () => Promise.resolve({ pending: true }),
      delete: () => Promise.resolve({ gone: true }),
    };
    const wrapped = explainErrors(client, () => {
      throw new Error('the explainer is only called for errors');
    });
    await expect(wrapped.observe(mr, ctx)).resolves.toEqual({ exists: false });
    await expect(wrapped.create(mr, ctx)).resolves.toEqual({ status: { id: 'x' } });
    await expect(wrapped.update(mr, observed, ctx)).resolves.toEqual({ pending: true });
    await expect(wrapped.delete(mr, observed, ctx)).resolves.toEqual({ gone: true });
    expect(Object.keys(wrapped).sort()).toEqual(['create', 'delete', 'observe', 'update']);
    expect(explainErrors(failing(new Error('x')), explain).location).toEqual({ account: '1', region: 'r' });
  });
});
