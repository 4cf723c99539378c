// ManagedDB on the real apiserver and moto through the fault proxy (which
// makes RDS report `creating` for a while: moto makes instances available at once).
import { realClock } from '../../src/runtime/clock.ts';
import { DescribeDBInstancesCommand, DescribeDBSnapshotsCommand, RDSClient } from '@aws-sdk/client-rds';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { managedDbType, type ManagedDB, type ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import { dbIdentifier } from '../../src/kinds/manageddb/identity.ts';
import { modificationsFor, versionSatisfied } from '../../src/kinds/manageddb/modifications.ts';
import { managedDbController } from '../../src/kinds/manageddb/controller.ts';
import { waitFor } from '../../dev/wait.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { rdsSlowCreate, type AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
let rds: RDSClient;
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  rds = new RDSClient(awsClientConfig(stackInfo().awsEndpoint));
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

async function setup(prefix: string): Promise<string> {
  const ns = await newNamespace(admin, prefix);
  running.push(
    await startController((s) => managedDbController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
    }),
  );
  return ns;
}

/** A spec; a restore has no dbName (the snapshot's database comes with it). */
const spec = (extra: Partial<ManagedDBSpec> = {}): ManagedDBSpec => ({
  engine: 'postgres',
  engineVersion: '16',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  ...(extra.restoreFrom === undefined ? { dbName: 'app' } : {}),
  masterUsername: 'app',
  writeConnectionSecretToRef: { name: 'db-conn' },
  ...extra,
});

function create(ns: string, name: string, s: ManagedDBSpec): Promise<ManagedDB> {
  return admin.create(resourcePath(managedDbType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'ManagedDB',
    metadata: { name },
    spec: s,
  });
}

async function waitCondition(
  ns: string,
  name: string,
  type: string,
  status: string,
  reason?: string,
): Promise<ManagedDB> {
  return waitFor(
    async () => {
      const m = await readObject<ManagedDB>(admin, managedDbType, ns, name);
      const c = m?.status?.conditions?.find((x) => x.type === type);
      return c?.status === status && (reason === undefined || c.reason === reason) ? m : undefined;
    },
    {
      timeoutMs: 60_000,
      description: `${ns}/${name} ${type}=${status}${reason !== undefined ? ` ${reason}` : ''}`,
    },
  );
}

async function secret(ns: string, name: string): Promise<Record<string, string>> {
  const s = await admin.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${ns}/secrets/${name}`);
  return Object.fromEntries(
    Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}

describe('ManagedDB', () => {
  it('is Creating while RDS says so, then Ready with a connection Secret; scales; deletes with a final snapshot', async () => {
    const ns = await setup('mdb-life');
    // RDS says "creating" until the test has seen Creating (a new object's progress is written once
    // it lasts longer than the first-status hold, 5 s).
    const slow = proxy.inject(rdsSlowCreate(10_000));
    const m = await create(ns, 'orders', spec());
    await waitCondition(ns, 'orders', 'Ready', 'False', 'Creating');
    slow.remove();
    const ready = await waitCondition(ns, 'orders', 'Ready', 'True');
    const id = dbIdentifier(ns, 'orders', m.metadata.uid ?? '');
    expect(ready.status).toMatchObject({
      identifier: id,
      dbInstanceStatus: 'available',
    });
    expect(String(ready.status?.engineVersion)).toMatch(/^16/);
    const conn = await secret(ns, 'db-conn');
    expect(conn).toMatchObject({
      username: 'app',
      dbname: 'app',
      engine: 'postgres',
      port: '5432',
      host: (ready.status?.endpoint as { address: string }).address,
    });
    expect(conn.password?.length).toBeGreaterThanOrEqual(24);
    expect(conn.uri).toBe(
      `postgresql://app:${encodeURIComponent(conn.password ?? '')}@${conn.host ?? ''}:5432/app`,
    );
    const db = (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id })))
      .DBInstances?.[0];
    expect(db).toMatchObject({
      StorageEncrypted: true,
      PubliclyAccessible: false,
      DBInstanceClass: 'db.t3.micro',
    });
    expect(db?.TagList).toEqual(expect.arrayContaining([{ Key: 'skylift.dev/uid', Value: m.metadata.uid }]));

    // No modify call while nothing changes.
    proxy.resetCalls();
    await admin.patch(
      resourcePath(managedDbType, { namespace: ns, name: 'orders' }),
      { metadata: { labels: { touched: 'yes' } } },
      'merge',
    );
    await admin.patch(
      resourcePath(managedDbType, { namespace: ns, name: 'orders' }),
      { spec: { instanceClass: 'db.t3.small', allocatedStorage: 30, applyImmediately: true } },
      'merge',
    );
    await waitFor(
      async () => {
        const d = (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id })))
          .DBInstances?.[0];
        return d?.DBInstanceClass === 'db.t3.small' && d.AllocatedStorage === 30 ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'scaled instance' },
    );
    await waitCondition(ns, 'orders', 'Ready', 'True');
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(1);

    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'orders' }));
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'orders')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'orders deleted' },
    );
    const gone = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id })).then(
      () => false,
      () => true,
    );
    expect(gone).toBe(true);
    const snaps = await rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: `${id}-final` }));
    expect(snaps.DBSnapshots?.[0]?.DBSnapshotIdentifier).toBe(`${id}-final`);
    // The connection Secret goes with the ManagedDB (owner reference, garbage collector).
    await waitFor(
      () =>
        admin.get(`/api/v1/namespaces/${ns}/secrets/db-conn`).then(
          () => undefined,
          (e: unknown) => (e instanceof KubeApiError && e.statusCode === 404 ? true : undefined),
        ),
      // The garbage collector picks up a new CRD's objects on its next discovery (every 30 s).
      { timeoutMs: 120_000, description: 'connection Secret garbage-collected' },
    );
  });

  it('lets AWS manage the password and puts its secret ARN in the connection Secret', async () => {
    const ns = await setup('mdb-aws-pw');
    await create(ns, 'ledger', spec({ password: { managedByAWS: true } }));
    const ready = await waitCondition(ns, 'ledger', 'Ready', 'True');
    expect(ready.status?.masterUserSecretArn).toMatch(/^arn:aws:secretsmanager:/);
    const conn = await secret(ns, 'db-conn');
    expect(conn.secretArn).toBe(ready.status?.masterUserSecretArn);
    expect(conn.password).toBeUndefined();
  });

  it('finds its own instance when the create answer is lost, instead of looping on DBInstanceAlreadyExists', async () => {
    const ns = await setup('mdb-lost');
    proxy.inject({
      service: 'rds',
      operation: 'CreateDBInstance',
      fault: { kind: 'dropResponse' },
      times: 1,
    });
    const m = await create(ns, 'once', spec());
    await waitCondition(ns, 'once', 'Ready', 'True');
    const id = dbIdentifier(ns, 'once', m.metadata.uid ?? '');
    const all = (await rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [];
    expect(all.filter((d) => d.DBInstanceIdentifier === id)).toHaveLength(1);
    expect(proxy.count({ service: 'rds', operation: 'CreateDBInstance', outcome: 'dropResponse' })).toBe(1);
  });

  it('explains deletion protection, and survives RDS throttling without a terminal condition', async () => {
    const ns = await setup('mdb-guard');
    proxy.inject({ service: 'rds', fault: { kind: 'throttle', code: 'Throttling' }, probability: 0.3 });
    await create(ns, 'safe', spec({ deletionProtection: true }));
    await waitCondition(ns, 'safe', 'Ready', 'True');
    proxy.clearFaults();
    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'safe' }));
    const blocked = await waitCondition(ns, 'safe', 'Synced', 'False', 'Terminal');
    expect(blocked.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'deletion protection is on',
    );
    // Issue 14, item 4: following the message's advice finishes the deletion while the object is being deleted.
    const id = String(blocked.status?.identifier);
    await admin.patch(
      resourcePath(managedDbType, { namespace: ns, name: 'safe' }),
      { spec: { deletionProtection: false } },
      'merge',
    );
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'safe')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'safe deleted' },
    );
    await expect(rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).rejects.toThrow();
  });
});

describe('ManagedDB pure parts', () => {
  it('normalises engine versions so a satisfied spec causes no modify', () => {
    expect(versionSatisfied('16', '16.4')).toBe(true);
    expect(versionSatisfied('16.4', '16.4')).toBe(true);
    expect(versionSatisfied('16', '160.1')).toBe(false);
    expect(versionSatisfied(undefined, '8.0.35')).toBe(true);
  });

  it('computes minimal modifications and refuses shrinking storage or an unapproved major upgrade', () => {
    const mr = { metadata: { name: 'x' }, spec: spec({ instanceClass: 'db.t3.small' }) } as ManagedDB;
    const db = {
      DBInstanceClass: 'db.t3.micro',
      AllocatedStorage: 20,
      EngineVersion: '16.4',
      BackupRetentionPeriod: 7,
      MultiAZ: false,
      DeletionProtection: false,
      PubliclyAccessible: false,
    };
    expect(modificationsFor(mr, db)).toEqual({
      input: { DBInstanceClass: 'db.t3.small' },
      changes: ['class db.t3.micro → db.t3.small'],
    });
    expect(
      modificationsFor(mr, { ...db, PendingModifiedValues: { DBInstanceClass: 'db.t3.small' } }).changes,
    ).toEqual([]);
    expect(() =>
      modificationsFor({ ...mr, spec: spec({ allocatedStorage: 20 }) }, { ...db, AllocatedStorage: 50 }),
    ).toThrow(/cannot shrink/);
    expect(() => modificationsFor({ ...mr, spec: spec({ engineVersion: '17' }) }, db)).toThrow(
      /allowMajorVersionUpgrade/,
    );
    expect(
      modificationsFor({ ...mr, spec: spec({ engineVersion: '17', allowMajorVersionUpgrade: true }) }, db)
        .input,
    ).toMatchObject({ EngineVersion: '17', AllowMajorVersionUpgrade: true });
  });

  it('builds identifiers RDS accepts', () => {
    const id = dbIdentifier('a-very-long-namespace-name-indeed', 'and-a-very-long-database-name-too', 'uid');
    expect(id.length).toBeLessThanOrEqual(63);
    expect(id).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
  });
});

describe('ManagedDB AWS call costs', () => {
  it('measures create, no-op resync and delete, and never modifies on a no-op resync', async () => {
    const ns = await newNamespace(admin, 'mdb-cost');
    const op = await startController((s) => managedDbController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
    });
    running.push(op);
    proxy.resetCalls();
    proxy.inject(rdsSlowCreate(2));
    await create(ns, 'cost', spec());
    await waitCondition(ns, 'cost', 'Ready', 'True');
    const createCalls = proxy.countsByOperation();

    const { counterValue } = await import('../support/gadgetController.ts');
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' });
    proxy.resetCalls();
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' })) >= before + 3
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        description: 'three resyncs',
      },
    );
    const resyncs = (await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' })) - before;
    const resyncCalls = proxy.countsByOperation();
    expect(Object.keys(resyncCalls).filter((k) => !k.includes(':Describe'))).toEqual([]);

    proxy.resetCalls();
    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'cost' }));
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'cost')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'cost deleted' },
    );
    const deleteCalls = proxy.countsByOperation();
    process.stdout.write(
      `[manageddb-cost] create=${JSON.stringify(createCalls)}\n[manageddb-cost] ${resyncs} no-op resyncs=${JSON.stringify(resyncCalls)}\n[manageddb-cost] delete=${JSON.stringify(deleteCalls)}\n`,
    );
    expect(createCalls['rds:CreateDBInstance']).toBe(1);
    expect(deleteCalls['rds:DeleteDBInstance']).toBe(1);
  });
});

describe('ManagedDB on-demand operations', () => {
  it('carries out a requested failover and snapshot exactly once each, and reports them', async () => {
    const ns = await newNamespace(admin, 'mdb-ops');
    const op = await startController((s) => managedDbController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
    });
    running.push(op);
    const m = await create(ns, 'ha', spec({ multiAZ: true }));
    await waitCondition(ns, 'ha', 'Ready', 'True');
    const path = resourcePath(managedDbType, { namespace: ns, name: 'ha' });
    proxy.resetCalls();
    await admin.patch(
      path,
      { metadata: { annotations: { 'aws.skylift.dev/request': 'failover f1' } } },
      'merge',
    );
    const failed = await waitFor(
      async () => {
        const got = await readObject<ManagedDB>(admin, managedDbType, ns, 'ha');
        return (got?.status?.lastRequest as { id?: string } | undefined)?.id === 'f1' ? got : undefined;
      },
      { timeoutMs: 30_000, description: 'failover reported' },
    );
    expect((failed.status?.lastRequest as { result: string }).result).toBe('failover started');
    await admin.patch(
      path,
      { metadata: { annotations: { 'aws.skylift.dev/request': 'snapshot s1' } } },
      'merge',
    );
    await waitFor(
      async () => {
        const got = await readObject<ManagedDB>(admin, managedDbType, ns, 'ha');
        return (got?.status?.lastRequest as { id?: string } | undefined)?.id === 's1' ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'snapshot reported' },
    );
    // Several resyncs later, neither was repeated.
    const { counterValue } = await import('../support/gadgetController.ts');
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' });
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' })) >= before + 3
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'three more resyncs' },
    );
    expect(proxy.count({ service: 'rds', operation: 'RebootDBInstance' })).toBe(1);
    expect(proxy.count({ service: 'rds', operation: 'CreateDBSnapshot' })).toBe(1);
    // Issue 14, item 10: a requested operation is not drift.
    await waitFor(
      async () =>
        (await eventsFor(admin, ns, 'ha')).find((e) => e.reason === 'Updated' && e.note.includes('snapshot')),
      { timeoutMs: 30_000, description: 'a Normal Updated Event for the snapshot' },
    );
    expect((await eventsFor(admin, ns, 'ha')).filter((e) => e.reason === 'DriftCorrected')).toEqual([]);
    expect(await counterValue(op.metrics.driftCorrections, { kind: 'ManagedDB' })).toBe(0);
    const id = dbIdentifier(ns, 'ha', m.metadata.uid ?? '');
    expect(
      (await rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: `${id}-req-s1` }))).DBSnapshots
        ?.length,
    ).toBe(1);
  });

  it('refuses a failover of a single-AZ instance with a clear result', async () => {
    const ns = await setup('mdb-noha');
    await create(ns, 'single', spec());
    await waitCondition(ns, 'single', 'Ready', 'True');
    await admin.patch(
      resourcePath(managedDbType, { namespace: ns, name: 'single' }),
      { metadata: { annotations: { 'aws.skylift.dev/request': 'failover x1' } } },
      'merge',
    );
    const got = await waitFor(
      async () => {
        const m = await readObject<ManagedDB>(admin, managedDbType, ns, 'single');
        return (m?.status?.lastRequest as { id?: string } | undefined)?.id === 'x1' ? m : undefined;
      },
      { timeoutMs: 30_000, description: 'failover refusal reported' },
    );
    expect((got.status?.lastRequest as { result: string }).result).toContain('not Multi-AZ');
  });
});

// Issue 14, items 1 and 8: Skylift took over a hand-made Secret (and got it garbage-collected), two
// objects fought over one Secret, and an unusable Secret name was retried forever.
describe('ManagedDB connection Secrets it does not own', () => {
  const handMade = async (ns: string, name: string, type = 'Opaque'): Promise<void> => {
    await admin.create(`/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name },
      type,
      stringData: type === 'Opaque' ? { password: 'users-own' } : { 'tls.crt': 'x', 'tls.key': 'y' },
    });
  };

  it('refuses a hand-made Secret as a Conflict, creates nothing, and leaves the Secret alone on delete', async () => {
    const ns = await setup('mdb-handmade');
    await handMade(ns, 'db-conn');
    const m = await create(ns, 'mine', spec());
    const conflict = await waitCondition(ns, 'mine', 'Synced', 'False', 'Conflict');
    const message = conflict.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
    expect(message).toContain('db-conn');
    expect(message).toContain('spec.writeConnectionSecretToRef.name');
    expect(await secret(ns, 'db-conn')).toEqual({ password: 'users-own' });
    const id = dbIdentifier(ns, 'mine', m.metadata.uid ?? '');
    await expect(rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).rejects.toThrow();
    // The advice (docs/troubleshooting.md, the message): a name not in use.
    await admin.patch(
      resourcePath(managedDbType, { namespace: ns, name: 'mine' }),
      { spec: { writeConnectionSecretToRef: { name: 'mine-conn' } } },
      'merge',
    );
    await waitCondition(ns, 'mine', 'Ready', 'True');
    expect(Object.keys(await secret(ns, 'mine-conn'))).toContain('password');
    expect(await secret(ns, 'db-conn')).toEqual({ password: 'users-own' });
    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'mine' }));
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'mine')) === undefined ? true : undefined),
      {
        timeoutMs: 60_000,
        description: 'the ManagedDB gone',
      },
    );
    expect(await secret(ns, 'db-conn')).toEqual({ password: 'users-own' });
  });

  it('gives a second object naming the same Secret a Conflict, and the Secret stays the first one’s', async () => {
    const ns = await setup('mdb-twosecrets');
    const first = await create(ns, 'first', spec());
    await waitCondition(ns, 'first', 'Ready', 'True');
    const before = await secret(ns, 'db-conn');
    await create(ns, 'second', spec());
    await waitCondition(ns, 'second', 'Synced', 'False', 'Conflict');
    expect(await secret(ns, 'db-conn')).toEqual(before);
    const owners = (
      await admin.get<{ metadata: { ownerReferences?: { uid: string }[] } }>(
        `/api/v1/namespaces/${ns}/secrets/db-conn`,
      )
    ).metadata.ownerReferences?.map((r) => r.uid);
    expect(owners).toEqual([first.metadata.uid]);
  });

  it('lets one of two objects applied together claim a new Secret: one instance per pair, the other a Conflict (issue 27, item 2)', async () => {
    const ns = await setup('mdb-claimrace');
    const pairs = Array.from({ length: 12 }, (_, i) => i);
    // Both objects of a pair name one Secret that does not exist yet, created at the same moment.
    const created = (
      await Promise.all(
        pairs.flatMap((i) => [
          create(ns, `a-${i}`, spec({ writeConnectionSecretToRef: { name: `conn-${i}` } })),
          create(ns, `b-${i}`, spec({ writeConnectionSecretToRef: { name: `conn-${i}` } })),
        ]),
      )
    ).map((m) => ({ name: m.metadata.name, uid: m.metadata.uid ?? '' }));
    for (const i of pairs) {
      // One of the two is Ready, the other refused with Conflict; the Secret is the winner's.
      const outcome = await waitFor(
        async () => {
          const [a, b] = await Promise.all(
            ['a', 'b'].map((x) => readObject<ManagedDB>(admin, managedDbType, ns, `${x}-${i}`)),
          );
          const cond = (m: ManagedDB | undefined, type: string): string | undefined => {
            const c = m?.status?.conditions?.find((x) => x.type === type);
            return c === undefined ? undefined : `${c.status}/${c.reason}`;
          };
          const states = [a, b].map((m) =>
            cond(m, 'Ready') === 'True/Available'
              ? 'ready'
              : cond(m, 'Synced') === 'False/Conflict'
                ? 'conflict'
                : 'busy',
          );
          return states.includes('busy') ? undefined : { a, b, states };
        },
        { timeoutMs: 90_000, description: `pair ${i} settled` },
      );
      expect([...outcome.states].sort(), `pair ${i}`).toEqual(['conflict', 'ready']);
      const winner = outcome.states[0] === 'ready' ? outcome.a : outcome.b;
      const owners = (
        await admin.get<{ metadata: { ownerReferences?: { uid: string }[] } }>(
          `/api/v1/namespaces/${ns}/secrets/conn-${i}`,
        )
      ).metadata.ownerReferences?.map((r) => r.uid);
      expect(owners, `conn-${i} owners`).toEqual([winner?.metadata.uid]);
    }
    // One RDS instance per pair: the loser never reached AWS.
    const existing = await Promise.all(
      created.map(async (m) => {
        try {
          await rds.send(
            new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbIdentifier(ns, m.name, m.uid) }),
          );
          return 1;
        } catch {
          return 0;
        }
      }),
    );
    expect(existing.reduce((a: number, b: number) => a + b, 0)).toBe(pairs.length);
  });

  it('refuses a Secret of another type, and an unusable Secret name, with a Terminal message naming the field', async () => {
    const ns = await setup('mdb-badsecret');
    await handMade(ns, 'tls-conn', 'kubernetes.io/tls');
    await create(ns, 'tls', spec({ writeConnectionSecretToRef: { name: 'tls-conn' } }));
    const tls = await waitCondition(ns, 'tls', 'Synced', 'False', 'Conflict');
    expect(tls.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'spec.writeConnectionSecretToRef.name',
    );
    // A name whose default Secret name (<name>-connection) is longer than Kubernetes allows.
    const long = `l${'o'.repeat(241)}g`;
    const { writeConnectionSecretToRef: _named, ...unnamed } = spec();
    await create(ns, long, unnamed);
    const terminal = await waitCondition(ns, long, 'Synced', 'False', 'Terminal');
    expect(terminal.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'spec.writeConnectionSecretToRef.name',
    );
  });
});

describe('ManagedDB scheduled snapshots', () => {
  it('takes one snapshot per due run (named after it), prunes beyond keepSnapshots, and reports last and next', async () => {
    const ns = await newNamespace(admin, 'mdb-sched');
    // The schedule's clock is injected: the test moves it forward an hour at a time.
    let now = Date.now();
    const op = await startController((s) => managedDbController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
      clock: { now: () => now, setTimer: (ms, fn) => realClock.setTimer(ms, fn) },
    });
    running.push(op);
    const m = await create(
      ns,
      'nightly',
      spec({ backup: { snapshotSchedule: '0 * * * *', keepSnapshots: 2 } }),
    );
    const id = dbIdentifier(ns, 'nightly', m.metadata.uid ?? '');
    const scheduled = async (): Promise<string[]> =>
      (
        (await rds.send(new DescribeDBSnapshotsCommand({ DBInstanceIdentifier: id, SnapshotType: 'manual' })))
          .DBSnapshots ?? []
      )
        .map((s) => s.DBSnapshotIdentifier ?? '')
        .filter((n) => n.startsWith(`${id}-sched-`))
        .sort();
    await waitCondition(ns, 'nightly', 'Ready', 'True');
    expect(await scheduled()).toEqual([]); // nothing due right after creation
    now = Date.now() + 3_600_000 + 60_000;
    await waitFor(async () => ((await scheduled()).length === 1 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'first scheduled snapshot',
    });
    now += 3_600_000;
    await waitFor(async () => ((await scheduled()).length === 2 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'second scheduled snapshot',
    });
    const two = await scheduled();
    now += 3_600_000;
    await waitFor(
      async () => {
        const names = await scheduled();
        return names.length === 2 && !names.includes(two[0] ?? '') ? names : undefined;
      },
      { timeoutMs: 30_000, description: 'third snapshot taken and the oldest pruned' },
    );
    const got = await waitFor(
      async () => {
        const d = await readObject<ManagedDB>(admin, managedDbType, ns, 'nightly');
        const last = d?.status?.lastSnapshot as { name?: string } | undefined;
        return last?.name === (await scheduled()).at(-1) ? d : undefined;
      },
      { timeoutMs: 30_000, description: 'status showing the newest snapshot' },
    );
    expect(Date.parse(String(got.status?.nextSnapshot))).toBeGreaterThan(now - 3_600_000);
    // One snapshot per hourly run, named after the run: the two newest runs, an hour apart.
    const names = await scheduled();
    const stamps = names.map((n) => n.slice(`${id}-sched-`.length));
    expect(stamps).toHaveLength(2);
    const hour = (st: string): number =>
      Date.UTC(
        Number(st.slice(0, 4)),
        Number(st.slice(4, 6)) - 1,
        Number(st.slice(6, 8)),
        Number(st.slice(8, 10)),
        Number(st.slice(10, 12)),
      );
    expect(hour(stamps[1] ?? '') - hour(stamps[0] ?? '')).toBe(3_600_000);
    expect(stamps.every((st) => st.endsWith('00'))).toBe(true);
  });
});

// Issue 14, item 9: a step after the instance became available (a scheduled snapshot that failed)
// left Ready=False with a stale progress reason; the instance is fine, so Ready follows it.
describe('ManagedDB with a failed scheduled snapshot', () => {
  it('is Ready as the instance is, with Synced=False SnapshotFailed and a Warning', async () => {
    const ns = await newNamespace(admin, 'mdb-snapfail');
    let now = Date.now();
    const op = await startController((s) => managedDbController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
      clock: { now: () => now, setTimer: (ms, fn) => realClock.setTimer(ms, fn) },
    });
    running.push(op);
    const m = await create(
      ns,
      'hourly',
      spec({ backup: { snapshotSchedule: '0 * * * *', keepSnapshots: 2 } }),
    );
    const id = dbIdentifier(ns, 'hourly', m.metadata.uid ?? '');
    await waitCondition(ns, 'hourly', 'Ready', 'True');
    now = Date.now() + 3_600_000 + 60_000;
    await waitFor(
      async () => {
        const snaps = await rds.send(
          new DescribeDBSnapshotsCommand({ DBInstanceIdentifier: id, SnapshotType: 'manual' }),
        );
        return (snaps.DBSnapshots ?? []).some((x) =>
          (x.DBSnapshotIdentifier ?? '').startsWith(`${id}-sched-`),
        )
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, description: 'a scheduled snapshot' },
    );
    const failedSnapshots = {
      service: 'rds',
      operation: 'DescribeDBSnapshots',
      fault: {
        kind: 'rewrite' as const,
        rewrite: (body: string) => body.replace(/<Status>available<\/Status>/g, '<Status>failed</Status>'),
      },
    };
    // RDS busy with the instance (modifying), while the snapshot turns out failed.
    proxy.inject(failedSnapshots);
    proxy.inject({
      service: 'rds',
      operation: 'DescribeDBInstances',
      fault: {
        kind: 'rewrite',
        rewrite: (body) =>
          body.replace(
            /<DBInstanceStatus>available<\/DBInstanceStatus>/g,
            '<DBInstanceStatus>modifying</DBInstanceStatus>',
          ),
      },
    });
    await waitCondition(ns, 'hourly', 'Ready', 'False');
    // The instance is available again; the failed snapshot stays.
    proxy.clearFaults();
    proxy.inject(failedSnapshots);
    const failing = await waitCondition(ns, 'hourly', 'Synced', 'False', 'SnapshotFailed');
    expect(failing.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'scheduled snapshot',
    );
    const settled = await waitCondition(ns, 'hourly', 'Ready', 'True');
    expect(settled.status?.conditions?.find((c) => c.type === 'Synced')).toMatchObject({
      status: 'False',
      reason: 'SnapshotFailed',
    });
    const warnings = (await eventsFor(admin, ns, 'hourly')).filter((e) => e.reason === 'SnapshotFailed');
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((e) => e.type === 'Warning')).toBe(true);
    proxy.clearFaults();
  });
});

// An object naming, through spec.externalName, an instance that another ManagedDB owns must learn
// nothing of it: its connection Secret is never written with that instance's host, nor its status.
// And an instance whose adoption never completed is not Skylift's to delete.
describe('ManagedDB adoption and ownership', () => {
  it('gives an object naming another object’s instance a Conflict and writes it no Secret or endpoint', async () => {
    const ns = await setup('mdb-foreign');
    const first = await create(ns, 'first', spec({ writeConnectionSecretToRef: { name: 'first-conn' } }));
    const ready = await waitCondition(ns, 'first', 'Ready', 'True');
    const firstSecret = await secret(ns, 'first-conn');
    const host = (ready.status?.endpoint as { address: string }).address;
    expect(firstSecret.host).toBe(host);
    const id = dbIdentifier(ns, 'first', first.metadata.uid ?? '');

    await create(
      ns,
      'second',
      spec({ externalName: id, writeConnectionSecretToRef: { name: 'second-conn' } }),
    );
    const conflict = await waitCondition(ns, 'second', 'Synced', 'False', 'Conflict');
    expect(conflict.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      `owned by ${ns}/first`,
    );
    expect(conflict.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
    });
    expect(conflict.status?.endpoint).toBeUndefined();
    expect(conflict.status?.arn).toBeUndefined();
    await expect(admin.get(`/api/v1/namespaces/${ns}/secrets/second-conn`)).rejects.toMatchObject({
      statusCode: 404,
    });
    expect(await secret(ns, 'first-conn')).toEqual(firstSecret);
  });

  async function handMadeInstance(id: string): Promise<void> {
    const { CreateDBInstanceCommand } = await import('@aws-sdk/client-rds');
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: id,
        Engine: 'postgres',
        EngineVersion: '16',
        DBInstanceClass: 'db.t3.micro',
        AllocatedStorage: 20,
        DBName: 'app',
        MasterUsername: 'app',
        MasterUserPassword: 'hand-made-password',
        Tags: [{ Key: 'team', Value: 'ops' }],
      }),
    );
  }

  async function instance(id: string) {
    return (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];
  }

  it('leaves a hand-made instance alone when its adoption failed before tagging, and releases the object', async () => {
    const ns = await setup('mdb-halfadopt');
    const id = `hand-${ns}`;
    await handMadeInstance(id);
    proxy.resetCalls();
    const refused = proxy.inject({
      service: 'rds',
      operation: 'AddTagsToResource',
      fault: { kind: 'error', status: 400, code: 'InvalidParameterValue', message: 'tagging refused' },
    });
    await create(ns, 'adopter', spec({ externalName: id }));
    const terminal = await waitCondition(ns, 'adopter', 'Synced', 'False', 'Terminal');
    expect(terminal.metadata.finalizers).toContain('aws.skylift.dev/cleanup');
    expect(refused.hits).toBeGreaterThanOrEqual(1);
    expect((await instance(id))?.TagList).toEqual([{ Key: 'team', Value: 'ops' }]);

    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'adopter' }));
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'adopter')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'adopter released' },
    );
    expect(await instance(id)).toMatchObject({ DBInstanceStatus: 'available' });
    expect(proxy.count({ service: 'rds', operation: 'DeleteDBInstance' })).toBe(0);
  });

  it('deletes an instance it adopted (tagged with its uid) when the object is deleted', async () => {
    const ns = await setup('mdb-adopt');
    const id = `hand-${ns}`;
    await handMadeInstance(id);
    const m = await create(
      ns,
      'adopter',
      spec({
        externalName: id,
        finalSnapshot: { enabled: false },
        writeConnectionSecretToRef: { name: 'a-conn' },
      }),
    );
    // Its password was never Skylift's: the Secret cannot hold it, and the object says so with a
    // fix that works (issue 27, item 5) instead of being Ready over a Secret without a password.
    const unknown = await waitCondition(ns, 'adopter', 'Ready', 'False', 'PasswordUnknown');
    expect(unknown.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain(
      'set spec.password.managedByAWS to true',
    );
    expect((await instance(id))?.TagList).toEqual(
      expect.arrayContaining([{ Key: 'skylift.dev/uid', Value: m.metadata.uid }]),
    );
    expect((await secret(ns, 'a-conn')).host).toBe((await instance(id))?.Endpoint?.Address);
    expect((await secret(ns, 'a-conn')).password).toBeUndefined();
    await admin.patch(
      resourcePath(managedDbType, { namespace: ns, name: 'adopter' }),
      { spec: { password: { managedByAWS: true } } },
      'merge',
    );
    await waitCondition(ns, 'adopter', 'Ready', 'True');
    await waitFor(async () => ((await secret(ns, 'a-conn')).secretArn !== undefined ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the Secret has the secretArn of the password RDS now manages',
    });

    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'adopter' }));
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'adopter')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'adopter deleted' },
    );
    await expect(instance(id)).rejects.toThrow();
  });
});

describe('ManagedDB orphaning and restoring', () => {
  it('keeps the instance and its connection Secret with deletionPolicy Orphan, and restores a new instance from a snapshot', async () => {
    const ns = await setup('mdb-orphan');
    const m = await create(ns, 'keep', spec({ deletionPolicy: 'Orphan' }));
    await waitCondition(ns, 'keep', 'Ready', 'True');
    const id = dbIdentifier(ns, 'keep', m.metadata.uid ?? '');
    await admin.delete(resourcePath(managedDbType, { namespace: ns, name: 'keep' }));
    await waitFor(
      async () => ((await readObject(admin, managedDbType, ns, 'keep')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'keep deleted' },
    );
    expect(
      (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.length,
    ).toBe(1);
    const kept = await admin.get<{ metadata: { ownerReferences?: unknown[] } }>(
      `/api/v1/namespaces/${ns}/secrets/db-conn`,
    );
    expect(kept.metadata.ownerReferences ?? []).toEqual([]);

    const { CreateDBSnapshotCommand } = await import('@aws-sdk/client-rds');
    await rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: `${id}-golden` }),
    );
    const restored = await create(
      ns,
      'copy',
      spec({
        restoreFrom: { snapshotIdentifier: `${id}-golden` },
        writeConnectionSecretToRef: { name: 'copy-conn' },
      }),
    );
    await waitCondition(ns, 'copy', 'Ready', 'True');
    const copyId = dbIdentifier(ns, 'copy', restored.metadata.uid ?? '');
    expect(
      (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: copyId }))).DBInstances?.[0]
        ?.DBInstanceStatus,
    ).toBe('available');
    expect(
      proxy.count({ service: 'rds', operation: 'RestoreDBInstanceFromDBSnapshot' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

// Issue 14, item 12: a spec lowered from 16.4 to 16.1 on an instance running 16.4 was "in sync"
// silently. It is refused (RDS cannot downgrade), while a spec that RDS's automatic minor upgrade
// moved past stays in sync.
describe('ManagedDB: what RDS changes by itself, and downgrades', () => {
  const path = (ns: string, name: string): string => resourcePath(managedDbType, { namespace: ns, name });
  const synced = (m: ManagedDB | undefined) => m?.status?.conditions?.find((c) => c.type === 'Synced');
  const ready = (m: ManagedDB | undefined) => m?.status?.conditions?.find((c) => c.type === 'Ready');

  /** The object once a reconcile of `generation` has reported Synced with `status`; on timeout, says what it saw. */
  async function syncedAt(ns: string, name: string, generation: number, status: 'True' | 'False') {
    let seen = 'nothing';
    try {
      return await waitFor(
        async () => {
          const m = await readObject<ManagedDB>(admin, managedDbType, ns, name);
          const c = synced(m);
          seen = `generation ${m?.status?.observedGeneration ?? '?'} Synced=${c?.status ?? '?'} ${c?.reason ?? ''} ${c?.message ?? ''}`;
          return m?.status?.observedGeneration === generation && c?.status === status ? m : undefined;
        },
        { timeoutMs: 60_000, description: `${ns}/${name} generation ${generation} Synced=${status}` },
      );
    } catch (err) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${seen}`, {
        cause: err,
      });
    }
  }

  it('refuses a spec lowered from 16.4 to 16.1 as Terminal with a fix, and setting it back makes it Ready again', async () => {
    const ns = await setup('mdb-downgrade');
    await create(ns, 'pinned', spec({ engineVersion: '16.4' }));
    const first = await waitCondition(ns, 'pinned', 'Ready', 'True');
    expect(first.status?.engineVersion).toBe('16.4');
    proxy.resetCalls();

    const lowered = await admin.patch<ManagedDB>(
      path(ns, 'pinned'),
      { spec: { engineVersion: '16.1' } },
      'merge',
    );
    const refused = await syncedAt(ns, 'pinned', lowered.metadata.generation ?? 0, 'False');
    expect(synced(refused)?.reason).toBe('Terminal');
    const message = synced(refused)?.message ?? '';
    expect(message).toContain('spec.engineVersion 16.1 is older than the running 16.4');
    expect(message).toContain('set spec.engineVersion to 16.4 or newer');
    expect(message).toContain('restore a snapshot');
    expect(refused.status?.acceptedEngineVersion).toBe('16.4');
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(0);

    // The message's advice: set it back to the running version.
    const back = await admin.patch<ManagedDB>(
      path(ns, 'pinned'),
      { spec: { engineVersion: '16.4' } },
      'merge',
    );
    const again = await syncedAt(ns, 'pinned', back.metadata.generation ?? 0, 'True');
    expect(ready(again)?.status).toBe('True');
    expect(again.status?.acceptedEngineVersion).toBe('16.4');
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(0);
  });

  it('stays in sync after an automatic minor upgrade (16.4 running 16.6) and refuses a spec lowered below 16.4 naming 16.6', async () => {
    const ns = await newNamespace(admin, 'mdb-autoupgrade');
    running.push(
      await startController((s) => managedDbController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '1s',
      }),
    );
    const m = await create(ns, 'floor', spec({ engineVersion: '16.4' }));
    await waitCondition(ns, 'floor', 'Ready', 'True');
    // RDS's automatic minor upgrade, as the emulator cannot do it: DescribeDBInstances reports 16.6.
    const upgraded = proxy.inject({
      service: 'rds',
      operation: 'DescribeDBInstances',
      fault: {
        kind: 'rewrite',
        rewrite: (body) =>
          body.replace(/<EngineVersion>16\.4<\/EngineVersion>/g, '<EngineVersion>16.6</EngineVersion>'),
      },
    });
    proxy.resetCalls();
    const { counterValue } = await import('../support/gadgetController.ts');
    const op = running.at(-1);
    if (op === undefined) throw new Error('no controller');
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' });
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' })) >= before + 3 &&
        upgraded.hits >= 3
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'three resyncs seeing 16.6' },
    );
    const seen = await syncedAt(ns, 'floor', m.metadata.generation ?? 0, 'True');
    expect(seen.status?.engineVersion).toBe('16.6');
    expect(ready(seen)?.status).toBe('True');
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(0);

    const lowered = await admin.patch<ManagedDB>(
      path(ns, 'floor'),
      { spec: { engineVersion: '16.2' } },
      'merge',
    );
    const refused = await syncedAt(ns, 'floor', lowered.metadata.generation ?? 0, 'False');
    expect(synced(refused)?.reason).toBe('Terminal');
    expect(synced(refused)?.message).toContain(
      'spec.engineVersion 16.2 is older than the running 16.6: RDS cannot downgrade an instance; set spec.engineVersion to 16.6 or newer',
    );
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(0);
  });

  // Issue 14: a Terminal message names the field and a fix, and the fix works.
  it('refuses shrinking storage and an unapproved major upgrade with advice that works when followed', async () => {
    const ns = await setup('mdb-advice');
    const m = await create(ns, 'advised', spec({ engineVersion: '16.4', allocatedStorage: 30 }));
    await waitCondition(ns, 'advised', 'Ready', 'True');
    expect(m.metadata.generation).toBe(1);

    const shrunk = await admin.patch<ManagedDB>(
      path(ns, 'advised'),
      { spec: { allocatedStorage: 20 } },
      'merge',
    );
    const noShrink = await syncedAt(ns, 'advised', shrunk.metadata.generation ?? 0, 'False');
    expect(synced(noShrink)).toMatchObject({ reason: 'Terminal' });
    expect(synced(noShrink)?.message).toContain(
      "spec.allocatedStorage 20 is below the instance's 30 GiB and RDS cannot shrink storage: set spec.allocatedStorage to 30 or more",
    );
    const grown = await admin.patch<ManagedDB>(
      path(ns, 'advised'),
      { spec: { allocatedStorage: 30 } },
      'merge',
    );
    expect(ready(await syncedAt(ns, 'advised', grown.metadata.generation ?? 0, 'True'))?.status).toBe('True');

    proxy.resetCalls();
    const major = await admin.patch<ManagedDB>(
      path(ns, 'advised'),
      { spec: { engineVersion: '17.2' } },
      'merge',
    );
    const unapproved = await syncedAt(ns, 'advised', major.metadata.generation ?? 0, 'False');
    expect(synced(unapproved)?.message).toContain(
      'spec.engineVersion 17.2 is a major upgrade from 16.4: set spec.allowMajorVersionUpgrade to true to allow it',
    );
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(0);
    const approved = await admin.patch<ManagedDB>(
      path(ns, 'advised'),
      { spec: { allowMajorVersionUpgrade: true } },
      'merge',
    );
    await syncedAt(ns, 'advised', approved.metadata.generation ?? 0, 'True');
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBeGreaterThanOrEqual(1);
  });

  // Issue 14, item 13: with maxAllocatedStorage, RDS grows the volume by itself; the spec's smaller
  // allocatedStorage then read as "cannot shrink" (Terminal). It is a floor: the object stays in sync.
  it('stays in sync after storage autoscaling grew the volume past spec.allocatedStorage', async () => {
    const ns = await newNamespace(admin, 'mdb-autoscale');
    running.push(
      await startController((s) => managedDbController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '1s',
      }),
    );
    const m = await create(ns, 'grows', spec({ allocatedStorage: 20, maxAllocatedStorage: 100 }));
    await waitCondition(ns, 'grows', 'Ready', 'True');
    // Storage autoscaling, as the emulator cannot do it: DescribeDBInstances reports 35 GiB.
    const grown = proxy.inject({
      service: 'rds',
      operation: 'DescribeDBInstances',
      fault: {
        kind: 'rewrite',
        rewrite: (body) =>
          body.replace(
            /<AllocatedStorage>20<\/AllocatedStorage>/g,
            '<AllocatedStorage>35</AllocatedStorage>',
          ),
      },
    });
    proxy.resetCalls();
    const { counterValue } = await import('../support/gadgetController.ts');
    const op = running.at(-1);
    if (op === undefined) throw new Error('no controller');
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' });
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'manageddb' })) >= before + 3 &&
        grown.hits >= 3
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'three resyncs seeing 35 GiB' },
    );
    const seen = await syncedAt(ns, 'grows', m.metadata.generation ?? 0, 'True');
    expect(ready(seen)?.status).toBe('True');
    expect(proxy.count({ service: 'rds', operation: 'ModifyDBInstance' })).toBe(0);
  });
});

// Issue 15: a ManagedDB with restoreFrom restored any snapshot in the account — another team's
// final, scheduled or on-request snapshot (their data), or one Skylift never made. By default only
// snapshots Skylift made for the same namespace are restored; anything else is Terminal, naming the
// field, before any restore call.
// Issue 27, items 3 and 4: a connection Secret deleted by a user (or a renamed one) was recreated
// without a password while the object stayed Ready: the only copy of the credentials was gone. A
// new master password is written to the Secret first (marked pending), then given to RDS, then the
// mark goes: the Secret always ends holding the password the instance accepts.
describe('ManagedDB connection Secret lost', () => {
  it('writes a new password to a deleted Secret first, then sets it as the master password', async () => {
    const ns = await newNamespace(admin, 'mdb-secret-lost');
    running.push(
      await startController((s) => managedDbController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '2s',
      }),
    );
    await create(ns, 'orders', spec({ writeConnectionSecretToRef: { name: 'orders-conn' } }));
    await waitCondition(ns, 'orders', 'Ready', 'True');
    const before = await secret(ns, 'orders-conn');
    expect(before.password).toEqual(expect.any(String));
    const passwordsSent: string[] = [];
    const unwatch = proxy.watch((call) => {
      if (call.operation !== 'ModifyDBInstance') return;
      const password = new URLSearchParams(call.body).get('MasterUserPassword');
      if (password !== null) passwordsSent.push(password);
    });
    try {
      await admin.delete(`/api/v1/namespaces/${ns}/secrets/orders-conn`);
      const after = await waitFor(
        async () => {
          const s = await admin
            .get<{ metadata: { annotations?: Record<string, string> } }>(
              `/api/v1/namespaces/${ns}/secrets/orders-conn`,
            )
            .catch(() => undefined);
          if (s === undefined || s.metadata.annotations?.['skylift.dev/password-pending'] !== undefined)
            return undefined;
          const data = await secret(ns, 'orders-conn');
          return (data.password ?? '') !== '' ? data : undefined;
        },
        { timeoutMs: 60_000, description: 'the Secret back with a password RDS was given' },
      );
      expect(after.password).not.toBe(before.password);
      expect(passwordsSent).toEqual([after.password]);
      expect(after.uri).toContain(encodeURIComponent(after.password ?? ''));
      await waitCondition(ns, 'orders', 'Ready', 'True');
    } finally {
      unwatch();
    }
  });
});

describe('ManagedDB restoreFrom', () => {
  it("refuses another namespace's snapshot and one Skylift did not make, restores its own namespace's", async () => {
    const { CreateDBInstanceCommand, CreateDBSnapshotCommand } = await import('@aws-sdk/client-rds');
    const a = await setup('mdb-restore-a');
    const source = await create(a, 'source', spec());
    await waitCondition(a, 'source', 'Ready', 'True');
    const id = dbIdentifier(a, 'source', source.metadata.uid ?? '');
    await rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: `${id}-data` }),
    );
    const hand = `hand-${a}`.slice(0, 60);
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: hand,
        Engine: 'postgres',
        DBInstanceClass: 'db.t3.micro',
        AllocatedStorage: 20,
        MasterUsername: 'app',
        MasterUserPassword: 'made-by-hand-1',
      }),
    );
    await rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: hand, DBSnapshotIdentifier: `${hand}-snap` }),
    );

    const b = await setup('mdb-restore-b');
    const restoresBefore = proxy.count({ service: 'rds', operation: 'RestoreDBInstanceFromDBSnapshot' });
    await create(b, 'thief', spec({ restoreFrom: { snapshotIdentifier: `${id}-data` } }));
    await create(
      b,
      'stray',
      spec({
        restoreFrom: { snapshotIdentifier: `${hand}-snap` },
        writeConnectionSecretToRef: { name: 'stray-conn' },
      }),
    );
    const thief = await waitCondition(b, 'thief', 'Synced', 'False', 'Terminal');
    expect(thief.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      `spec.restoreFrom.snapshotIdentifier "${id}-data" belongs to namespace ${a}: a ManagedDB restores only snapshots Skylift made for its own namespace (${b})`,
    );
    const stray = await waitCondition(b, 'stray', 'Synced', 'False', 'Terminal');
    expect(stray.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      `spec.restoreFrom.snapshotIdentifier "${hand}-snap" was not made by Skylift`,
    );

    await create(
      a,
      'copy',
      spec({
        restoreFrom: { snapshotIdentifier: `${id}-data` },
        writeConnectionSecretToRef: { name: 'copy-conn' },
      }),
    );
    await waitCondition(a, 'copy', 'Ready', 'True');
    expect(proxy.count({ service: 'rds', operation: 'RestoreDBInstanceFromDBSnapshot' })).toBe(
      restoresBefore + 1,
    );
  });

  // Issue 27, item 9: a tenant restored another team's snapshot by its ARN (the ownership lookup
  // did not find it by ARN and let the restore go ahead). A snapshot that cannot be found and
  // checked is refused before any restore call: by ARN, by an ARN of another account, or by a name
  // no snapshot has.
  it("refuses another namespace's snapshot by its ARN, an ARN of another account and a missing snapshot", async () => {
    const { CreateDBSnapshotCommand } = await import('@aws-sdk/client-rds');
    const a = await setup('mdb-arn-a');
    const source = await create(a, 'source', spec());
    await waitCondition(a, 'source', 'Ready', 'True');
    const id = dbIdentifier(a, 'source', source.metadata.uid ?? '');
    const made = await rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: `${id}-arn` }),
    );
    const arn = made.DBSnapshot?.DBSnapshotArn ?? '';
    expect(arn).toMatch(/^arn:aws:rds:[^:]+:\d+:snapshot:/);
    const elsewhere = arn.replace(/:(\d{12}):/, ':999988887777:');

    const b = await setup('mdb-arn-b');
    const restoresBefore = proxy.count({ service: 'rds', operation: 'RestoreDBInstanceFromDBSnapshot' });
    const restoring = (snapshotIdentifier: string, secret: string) =>
      spec({ restoreFrom: { snapshotIdentifier }, writeConnectionSecretToRef: { name: secret } });
    await create(b, 'by-arn', restoring(arn, 'by-arn-conn'));
    await create(b, 'other-account', restoring(elsewhere, 'other-account-conn'));
    await create(b, 'missing', restoring(`${id}-never-made`, 'missing-conn'));
    const message = async (name: string) => {
      try {
        return (await waitCondition(b, name, 'Synced', 'False', 'Terminal')).status?.conditions?.find(
          (c) => c.type === 'Synced',
        )?.message;
      } catch (err) {
        const seen = await readObject<ManagedDB>(admin, managedDbType, b, name);
        throw new Error(`${String(err)}: ${JSON.stringify(seen?.status?.conditions)}`, { cause: err });
      }
    };
    expect(await message('by-arn')).toContain(
      `spec.restoreFrom.snapshotIdentifier ${JSON.stringify(arn)} belongs to namespace ${a}`,
    );
    expect(await message('other-account')).toContain(
      `spec.restoreFrom.snapshotIdentifier ${JSON.stringify(elsewhere)} names no DB snapshot in the account and region this namespace is served in`,
    );
    expect(await message('missing')).toContain(
      `spec.restoreFrom.snapshotIdentifier "${id}-never-made" names no DB snapshot in the account and region`,
    );
    expect(proxy.count({ service: 'rds', operation: 'RestoreDBInstanceFromDBSnapshot' })).toBe(
      restoresBefore,
    );

    // Its own namespace's snapshot by ARN is restored.
    await create(
      a,
      'own-by-arn',
      spec({
        restoreFrom: { snapshotIdentifier: arn },
        writeConnectionSecretToRef: { name: 'own-by-arn-conn' },
      }),
    );
    await waitCondition(a, 'own-by-arn', 'Ready', 'True');
    expect(proxy.count({ service: 'rds', operation: 'RestoreDBInstanceFromDBSnapshot' })).toBe(
      restoresBefore + 1,
    );
  });

  // A restored instance keeps the snapshot's master password — the source's, which the new object's
  // Secret does not hold (its generated password would not work, and whoever knew the old one could
  // still log in). It is set to the Secret's before the object is Ready, once.
  it('refuses a restore whose masterUsername is not the snapshot’s, naming it, and creates nothing (issue 27, item 5)', async () => {
    const { CreateDBSnapshotCommand } = await import('@aws-sdk/client-rds');
    const ns = await setup('mdb-restore-user');
    const source = await create(ns, 'source', spec());
    await waitCondition(ns, 'source', 'Ready', 'True');
    const id = dbIdentifier(ns, 'source', source.metadata.uid ?? '');
    await rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: `${id}-u` }),
    );
    const copy = await create(
      ns,
      'wronguser',
      spec({
        restoreFrom: { snapshotIdentifier: `${id}-u` },
        masterUsername: 'other',
        writeConnectionSecretToRef: { name: 'wu-conn' },
      }),
    );
    const refused = await waitCondition(ns, 'wronguser', 'Synced', 'False', 'Terminal');
    expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'create the ManagedDB again with spec.masterUsername: app',
    );
    await expect(
      rds.send(
        new DescribeDBInstancesCommand({
          DBInstanceIdentifier: dbIdentifier(ns, 'wronguser', copy.metadata.uid ?? ''),
        }),
      ),
    ).rejects.toThrow();
  });

  it("sets the restored instance's master password to the connection Secret's before Ready, once", async () => {
    const { CreateDBSnapshotCommand, ListTagsForResourceCommand } = await import('@aws-sdk/client-rds');
    const ns = await setup('mdb-restore-pw');
    const source = await create(ns, 'source', spec());
    await waitCondition(ns, 'source', 'Ready', 'True');
    const id = dbIdentifier(ns, 'source', source.metadata.uid ?? '');
    await rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: `${id}-pw` }),
    );
    const passwordsSent: { id: string; password: string }[] = [];
    const unwatch = proxy.watch((call) => {
      if (call.operation !== 'ModifyDBInstance') return;
      const q = new URLSearchParams(call.body);
      const password = q.get('MasterUserPassword');
      if (password !== null) passwordsSent.push({ id: q.get('DBInstanceIdentifier') ?? '', password });
    });
    try {
      const copy = await create(
        ns,
        'restored',
        spec({
          restoreFrom: { snapshotIdentifier: `${id}-pw` },
          writeConnectionSecretToRef: { name: 'restored-conn' },
        }),
      );
      const ready = await waitCondition(ns, 'restored', 'Ready', 'True');
      const copyId = dbIdentifier(ns, 'restored', copy.metadata.uid ?? '');
      const { password, username, dbname } = await secret(ns, 'restored-conn');
      expect(password).toEqual(expect.any(String));
      // The restored instance's user and database (the snapshot's), not empty (issue 27, item 5).
      expect({ username, dbname }).toEqual({ username: 'app', dbname: 'app' });
      expect(passwordsSent).toEqual([{ id: copyId, password }]);
      const arn = typeof ready.status?.arn === 'string' ? ready.status.arn : '';
      const tags = (await rds.send(new ListTagsForResourceCommand({ ResourceName: arn }))).TagList ?? [];
      expect(tags).toContainEqual({ Key: 'skylift.dev/restored-password', Value: copy.metadata.uid });
      // A later pass does not set it again: change the spec and wait for that pass.
      await admin.patch(
        resourcePath(managedDbType, { namespace: ns, name: 'restored' }),
        { spec: { tags: { team: 'orders' } } },
        'merge',
      );
      await waitFor(
        async () => {
          const m = await readObject<ManagedDB>(admin, managedDbType, ns, 'restored');
          const ok = m?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
          return m?.status?.observedGeneration === 2 && ok ? true : undefined;
        },
        { timeoutMs: 60_000, description: 'restored Ready at generation 2' },
      );
      expect(passwordsSent).toHaveLength(1);
      // The source kept its own password: nothing was sent for it.
      expect(passwordsSent.map((p) => p.id)).not.toContain(id);
    } finally {
      unwatch();
    }
  });
});
