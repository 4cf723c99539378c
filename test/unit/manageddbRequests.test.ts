// Issue 14, item 15: how `skylift db` reads where its request stands, and the line it prints when
// no operator acknowledged it.
import { describe, expect, it } from 'vitest';
import type { ManagedDB } from '../../src/kinds/manageddb/api.ts';
import { pendingLine } from '../../src/kinds/manageddb/command.ts';
import { isRefusal, refusedResult, requestState } from '../../src/kinds/manageddb/requests.ts';

const mdb = (annotations: Record<string, string>, status?: Record<string, unknown>): ManagedDB => ({
  metadata: { name: 'orders', namespace: 'apps', annotations },
  spec: { engine: 'postgres', instanceClass: 'db.t3.micro', allocatedStorage: 20, masterUsername: 'app' },
  ...(status !== undefined ? { status } : {}),
});

describe('requestState', () => {
  it.each([
    {
      reason: 'not recorded yet: pending',
      id: 'r1',
      annotations: { 'aws.skylift.dev/request': 'snapshot r1' },
      want: { state: 'pending' },
    },
    {
      reason: 'an older request recorded: still pending',
      id: 'r2',
      annotations: { 'aws.skylift.dev/request': 'snapshot r2', 'aws.skylift.dev/request-done': 'r1 ok' },
      want: { state: 'pending' },
    },
    {
      reason: 'recorded: done with its result',
      id: 'r1',
      annotations: {
        'aws.skylift.dev/request': 'snapshot r1',
        'aws.skylift.dev/request-done': 'r1 snapshot x-req-r1 started',
      },
      want: { state: 'done', result: 'snapshot x-req-r1 started' },
    },
    {
      reason: 'another request took its place before it was recorded: replaced',
      id: 'r1',
      annotations: { 'aws.skylift.dev/request': 'reboot r9' },
      want: { state: 'replaced', by: 'reboot r9' },
    },
    {
      reason: 'the annotation removed before it was recorded: replaced by nothing',
      id: 'r1',
      annotations: {},
      want: { state: 'replaced', by: '' },
    },
  ])('$reason', ({ id, annotations, want }) => {
    expect(requestState(mdb(annotations), id)).toEqual(want);
  });
});

describe('refusals', () => {
  it('recognises the refusals the operator records, and nothing else', () => {
    expect(isRefusal(refusedResult('failover', 'the instance is not Multi-AZ'))).toBe(true);
    expect(isRefusal('failover started')).toBe(false);
    expect(isRefusal('snapshot sky-x-req-refused: started')).toBe(false);
  });
});

describe('pendingLine', () => {
  const what = 'snapshot of manageddb apps/orders';
  it('names the request, the annotation and what to check, on one line', () => {
    const line = pendingLine(mdb({}), what, 'r1', 'apps', 30_000);
    expect(line).toBe(
      'snapshot of manageddb apps/orders (request r1) is still pending after 30s: no operator acknowledged the annotation aws.skylift.dev/request; is skylift running and watching namespace apps? The request stays and is carried out when an operator picks it up.',
    );
  });

  it.each([
    { state: 'creating', hint: true },
    { state: 'modifying', hint: true },
    { state: 'available', hint: false },
  ])('says requests wait for the instance when it is $state: $hint', ({ state, hint }) => {
    const line = pendingLine(mdb({}, { dbInstanceStatus: state }), what, 'r1', 'apps', 30_000);
    expect(line).not.toContain('\n');
    expect(
      line.includes(`The instance is ${state}: the operator carries requests out once it is available.`),
    ).toBe(hint);
  });
});
