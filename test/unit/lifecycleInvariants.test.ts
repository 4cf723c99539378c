import { describe, expect, it } from 'vitest';
import {
  describeState,
  judge,
  outageInvariant,
  outageProblem,
  settledProblem,
} from '../../bench/lifecycle/invariants.ts';
import { newModel, type LifecycleModel } from '../../bench/lifecycle/model.ts';
import { recordChanges, type Observed, type ObservedCr } from '../../bench/lifecycle/world.ts';

const zoneName = 'z.example';
const ctx = { zoneName, ns: 'lc-t' };

function cr(over: Partial<ObservedCr> & Pick<ObservedCr, 'kind' | 'name' | 'uid'>): ObservedCr {
  const ok = { status: 'True', reason: 'Available', message: '', observedGeneration: 1 };
  return {
    generation: 1,
    observedGeneration: 1,
    deleting: false,
    finalizers: [],
    ready: ok,
    synced: { ...ok, reason: 'ReconcileSuccess' },
    spec: {},
    status: {},
    ...over,
  };
}

function observed(over: Partial<Observed> = {}): Observed {
  return {
    crs: [],
    gateways: [],
    routes: [],
    records: [],
    inventory: { loadBalancers: [], targetGroups: [], dbInstances: [], records: [], unownedRecords: [] },
    secrets: new Map(),
    dbs: new Map(),
    endpointSlices: new Map(),
    targets: new Map(),
    passwords: new Map(),
    ...over,
  };
}

const owner = (uid: string) => ({ uid, owner: `ns/${uid}`, cluster: '' });

function withRecord(m: LifecycleModel, name: string, uid: string, values: string[]): void {
  m.live.set(name, { kind: 'DNSRecord', name, host: 'a', values, deletionPolicy: 'Delete', adopt: false });
  m.uids.set(name, uid);
}

describe('lifecycle invariants', () => {
  it('a Ready DNSRecord whose record matches and is guarded by its uid holds', () => {
    const m = newModel();
    withRecord(m, 'd1', 'u1', ['10.0.0.1']);
    const v = judge(
      m,
      observed({
        crs: [cr({ kind: 'DNSRecord', name: 'd1', uid: 'u1', spec: { name: 'a' } })],
        records: [{ Name: 'a.z.example.', Type: 'A', ResourceRecords: [{ Value: '10.0.0.1' }] }],
        inventory: {
          ...observed().inventory,
          records: [{ zoneId: 'Z', fqdn: 'a.z.example.', type: 'A', owner: owner('u1'), recordExists: true }],
        },
      }),
      ctx,
    );
    expect(v).toEqual({ broken: [], waiting: [] });
  });

  it('Ready with other values in AWS is not settled', () => {
    const m = newModel();
    withRecord(m, 'd1', 'u1', ['10.0.0.1']);
    const v = judge(
      m,
      observed({
        crs: [cr({ kind: 'DNSRecord', name: 'd1', uid: 'u1' })],
        records: [{ Name: 'a.z.example.', Type: 'A', ResourceRecords: [{ Value: '10.0.0.7' }] }],
      }),
      ctx,
    );
    expect(v.waiting.join()).toContain('holds 10.0.0.7');
  });

  it('a changed hand-made record, or one given an ownership TXT, is broken', () => {
    const m = newModel();
    m.foreignRecords.set('b', '192.0.2.1');
    const v = judge(
      m,
      observed({
        records: [{ Name: 'b.z.example.', Type: 'A', ResourceRecords: [{ Value: '10.0.0.1' }] }],
        inventory: {
          ...observed().inventory,
          records: [{ zoneId: 'Z', fqdn: 'b.z.example.', type: 'A', owner: owner('u9'), recordExists: true }],
        },
      }),
      ctx,
    );
    expect(v.broken.join('\n')).toMatch(/was changed to 10\.0\.0\.1[\s\S]*got an ownership TXT/);
  });

  it('two objects Ready on one record is broken', () => {
    const v = judge(
      newModel(),
      observed({
        crs: [
          cr({ kind: 'DNSRecord', name: 'd1', uid: 'u1', spec: { name: 'a' } }),
          cr({ kind: 'DNSRecord', name: 'd2', uid: 'u2', spec: { name: 'a' } }),
        ],
      }),
      ctx,
    );
    expect(v.broken).toEqual(['d1 and d2 are all Ready on record a']);
  });

  it('a Ready left from the last look while Synced=False (a retry under way) is not a second claim', () => {
    const failing = {
      status: 'False',
      reason: 'ZoneGone',
      message: 'looking the name up again',
      observedGeneration: 1,
    };
    const v = judge(
      newModel(),
      observed({
        crs: [
          cr({ kind: 'DNSRecord', name: 'd1', uid: 'u1', spec: { name: 'a' } }),
          cr({ kind: 'DNSRecord', name: 'd2', uid: 'u2', spec: { name: 'a' }, synced: failing }),
        ],
      }),
      ctx,
    );
    expect(v.broken).toEqual([]);
  });

  it("a Secret carrying another object's database host is broken", () => {
    const v = judge(
      newModel(),
      observed({
        secrets: new Map([
          [
            'conn-2',
            {
              type: 'Opaque',
              data: { host: 'db1.rds' },
              controllerUid: 'u2',
              ownerUids: ['u2'],
              resourceVersion: '1',
            },
          ],
        ]),
        dbs: new Map([
          ['sky-db1', { identifier: 'sky-db1', instanceClass: 'db.t3.micro', address: 'db1.rds' }],
        ]),
        inventory: {
          ...observed().inventory,
          dbInstances: [{ identifier: 'sky-db1', status: 'available', owner: owner('u1') }],
        },
      }),
      ctx,
    );
    expect(v.broken.join()).toContain("carries the host of another object's instance (uid u1)");
  });

  it('a Ready ManagedDB whose Secret does not hold the password RDS was last given is waiting (issue 27)', () => {
    const m = newModel();
    m.live.set('db1', {
      kind: 'ManagedDB',
      name: 'db1',
      secret: 'conn-1',
      instanceClass: 'db.t3.micro',
      externalOf: undefined,
      deletionPolicy: 'Delete',
    });
    m.uids.set('db1', 'u1');
    const at = (password: string | undefined, given: string | undefined): string[] =>
      judge(
        m,
        observed({
          crs: [cr({ kind: 'ManagedDB', name: 'db1', uid: 'u1', status: { identifier: 'sky-db1' } })],
          secrets: new Map([
            [
              'conn-1',
              {
                type: 'Opaque',
                data: { host: 'db1.rds', username: 'app', ...(password !== undefined ? { password } : {}) },
                controllerUid: 'u1',
                ownerUids: ['u1'],
                resourceVersion: '1',
              },
            ],
          ]),
          dbs: new Map([
            ['sky-db1', { identifier: 'sky-db1', instanceClass: 'db.t3.micro', address: 'db1.rds' }],
          ]),
          inventory: {
            ...observed().inventory,
            dbInstances: [{ identifier: 'sky-db1', status: 'available', owner: owner('u1') }],
          },
          passwords: new Map(given !== undefined ? [['sky-db1', given]] : []),
        }),
        ctx,
      ).waiting;
    expect(at('p1', 'p1')).toEqual([]);
    expect(at('p1', 'p2').join()).toContain(
      'holds another password than the one RDS was last given for sky-db1',
    );
    expect(at(undefined, 'p2').join()).toContain('holds no password');
  });

  it('matches a wildcard record however Route 53 spells it (* or \\052)', () => {
    const m = newModel();
    m.foreignRecords.set('*', '192.0.2.1');
    const v = judge(
      m,
      observed({
        records: [{ Name: '\\052.z.example.', Type: 'A', ResourceRecords: [{ Value: '192.0.2.1' }] }],
      }),
      ctx,
    );
    expect(v.broken).toEqual([]);
  });

  it("a hand-made EndpointSlice's address registered as a target is broken", () => {
    const m = newModel();
    m.foreignSlices.set('web-by-hand-1', { resourceVersion: '7', address: '10.1.0.9' });
    const v = judge(
      m,
      observed({
        endpointSlices: new Map([['web-by-hand-1', '7']]),
        targets: new Map([['sky-tg', ['10.77.1.10:8080', '10.1.0.9:8080']]]),
      }),
      ctx,
    );
    expect(v.broken).toEqual([
      'the address 10.1.0.9 of hand-made EndpointSlice web-by-hand-1 is a target of sky-tg',
    ]);
  });

  it('a hand-made Secret given an owner reference is broken', () => {
    const m = newModel();
    m.foreignSecrets.set('conn-1', { password: 'x' });
    const v = judge(
      m,
      observed({
        secrets: new Map([
          [
            'conn-1',
            {
              type: 'Opaque',
              data: { password: 'x' },
              controllerUid: 'u1',
              ownerUids: ['u1'],
              resourceVersion: '2',
            },
          ],
        ]),
      }),
      ctx,
    );
    expect(v.broken).toEqual(['hand-made Secret conn-1 got owner references u1']);
  });

  it("what a deleted object owned must go (waiting); what no object of the run owned is a leak (broken); Orphan's may stay", () => {
    const m = newModel();
    m.uids.set('db1', 'u1');
    m.uids.set('db2', 'u2');
    m.deleted.push({ kind: 'ManagedDB', name: 'db1', uid: 'u1', deletionPolicy: 'Delete' });
    m.deleted.push({ kind: 'ManagedDB', name: 'db2', uid: 'u2', deletionPolicy: 'Orphan' });
    const v = judge(
      m,
      observed({
        inventory: {
          ...observed().inventory,
          dbInstances: [
            { identifier: 'i1', status: 'available', owner: owner('u1') },
            { identifier: 'i2', status: 'available', owner: owner('u2') },
            { identifier: 'i3', status: 'available', owner: owner('u3') },
          ],
        },
      }),
      ctx,
    );
    expect(v.waiting).toEqual(['DB instance i1 of a deleted object (uid u1) is still in AWS']);
    expect(v.broken).toEqual(['DB instance i3 is owned by uid u3, which no object of this run had']);
  });

  it('settled: Ready, refused with a usable message, or action required; not in progress or refused tersely', () => {
    const base = cr({ kind: 'DNSRecord', name: 'd', uid: 'u' });
    expect(settledProblem(base)).toBeUndefined();
    const refused = (reason: string, message: string): ObservedCr => ({
      ...base,
      ready: { status: 'False', reason, message, observedGeneration: 1 },
      synced: { status: 'False', reason, message, observedGeneration: 1 },
    });
    expect(
      settledProblem(refused('Conflict', 'the record is owned by ns/d1; Skylift will not modify it')),
    ).toBeUndefined();
    expect(settledProblem(refused('Conflict', 'no'))).toMatch(/without a usable message/);
    expect(settledProblem(refused('AWSUnreachable', 'AWS did not answer within 3 s'))).toMatch(/in progress/);
    expect(settledProblem({ ...base, observedGeneration: 0 })).toMatch(/generation 1 not observed/);
  });
});

// Issue 27, item 17: a failed run listed the operations, not which invariant broke nor the state.
describe('lifecycle failure reports', () => {
  it('say what an object reported instead of AWSUnreachable during an outage', () => {
    const failing = {
      status: 'False',
      reason: 'ReconcileError',
      message: 'connect: timed out',
      observedGeneration: 1,
    };
    const said = cr({ kind: 'DNSRecord', name: 'd1', uid: 'u1', synced: failing, ready: failing });
    expect(outageInvariant).toContain('Synced=False reason=AWSUnreachable');
    expect(outageProblem(said)).toBe(
      'Ready False/ReconcileError "connect: timed out", Synced False/ReconcileError "connect: timed out"',
    );
    expect(outageProblem(cr({ ...said, synced: { ...failing, reason: 'AWSUnreachable' } }))).toBeUndefined();
    expect(outageProblem(undefined)).toBe('the object is missing from the apiserver');
  });

  it('describe the state: every object with its conditions, the records and tagged resources', () => {
    const lines = describeState(
      observed({
        crs: [cr({ kind: 'DNSRecord', name: 'd1', uid: 'u1', finalizers: ['aws.skylift.dev/cleanup'] })],
        records: [
          { Name: 'z.example.', Type: 'NS', ResourceRecords: [{ Value: 'ns1.' }] },
          { Name: 'a.z.example.', Type: 'A', ResourceRecords: [{ Value: '10.0.0.1' }] },
        ],
        inventory: {
          ...observed().inventory,
          dbInstances: [{ identifier: 'db-1', owner: owner('u2'), status: 'available' }],
        },
      }),
    );
    expect(lines).toEqual([
      'DNSRecord d1 (uid u1): generation 1, observed 1, finalizers aws.skylift.dev/cleanup; Ready True/Available "", Synced True/ReconcileSuccess ""',
      'record a.z.example. A: 10.0.0.1',
      'DB instance db-1 of uid u2',
    ]);
    expect(describeState(observed())).toEqual(['no Skylift objects']);
  });
});

describe('the lifecycle world’s record of AWS writes', () => {
  it('reads the record changes of a ChangeResourceRecordSets body', () => {
    const body =
      '<?xml version="1.0"?><ChangeResourceRecordSetsRequest><ChangeBatch><Changes>' +
      '<Change><Action>UPSERT</Action><ResourceRecordSet><Name>a.z.example.</Name><Type>A</Type><TTL>300</TTL></ResourceRecordSet></Change>' +
      '<Change><Action>DELETE</Action><ResourceRecordSet><Name>_skylift-owner.a-wildcard.z.example.</Name><Type>TXT</Type></ResourceRecordSet></Change>' +
      '</Changes></ChangeBatch></ChangeResourceRecordSetsRequest>';
    expect(recordChanges(body)).toEqual([
      { action: 'UPSERT', name: 'a.z.example.', type: 'A' },
      { action: 'DELETE', name: '_skylift-owner.a-wildcard.z.example.', type: 'TXT' },
    ]);
    expect(recordChanges('')).toEqual([]);
  });
});
