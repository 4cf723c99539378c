// ManagedDB the way a user meets it: `skylift run` as a process, the example
// applied with kubectl, an application reading the connection Secret under
// its own (limited) identity, and deletion leaving a final snapshot.
import { once } from 'node:events';
import { join } from 'node:path';
import { DescribeDBInstancesCommand, DescribeDBSnapshotsCommand, RDSClient } from '@aws-sdk/client-rds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { AwsFaultProxy, rdsSlowCreate, type InstalledRule } from '../../dev/awsFaultProxy.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { kubeConfig, stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';

let ns: string;
let proxy: AwsFaultProxy;
let operator: SkyliftProcess;
let slowCreate: InstalledRule;

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-mdb');
  proxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint });
  // RDS says "creating" until the test has seen Creating (a new object's progress is written once it
  // lasts longer than the first-status hold, 5 s).
  slowCreate = proxy.inject(rdsSlowCreate(10_000));
  operator = spawnSkylift(ns, proxy.endpoint, ['--rds-poll-interval', '1s']);
  await waitFor(() => (operator.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run started',
  });
});

afterAll(async () => {
  await operator.stop();
  await proxy.stop();
});

describe('ManagedDB with kubectl', () => {
  it('becomes Ready after Creating, serves its Secret to an application, and leaves a final snapshot', async () => {
    const kc = stackInfo().adminKubeconfig;
    const applied = await kubectl(kc, ['apply', '-n', ns, '-f', join(repoRoot, 'examples/manageddb.yaml')]);
    expect(applied.code, applied.stderr).toBe(0);
    const creating = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=Creating',
      'manageddb/orders',
      '--timeout=60s',
    ]);
    expect(creating.code, creating.stderr).toBe(0);
    slowCreate.remove();
    const ready = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'manageddb/orders',
      '--timeout=120s',
    ]);
    expect(ready.code, `${ready.stderr}\n${operator.output().slice(-2000)}`).toBe(0);
    const get = await kubectl(kc, ['get', 'mdb', '-n', ns]);
    expect(get.stdout).toMatch(/NAME\s+ENGINE\s+VERSION\s+CLASS\s+STATUS\s+ENDPOINT\s+READY\s+SYNCED\s+AGE/);
    expect(get.stdout).toMatch(
      /orders\s+postgres\s+16\S*\s+db\.t3\.micro\s+available\s+\S+rds\.amazonaws\.com\s+True\s+True/,
    );

    // The application reads the Secret under its own identity, allowed exactly that Secret.
    const admin = kubeClient();
    const info = stackInfo();
    await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      metadata: { name: 'read-orders-db' },
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['orders-db'], verbs: ['get'] }],
    });
    await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'read-orders-db' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-orders-db' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: info.operatorUser }],
    });
    const app = new KubeClient(kubeConfig('operator'));
    const secret = await waitFor(
      () =>
        app
          .get<{ data: Record<string, string> }>(`/api/v1/namespaces/${ns}/secrets/orders-db`)
          .catch(() => undefined),
      {
        timeoutMs: 15_000,
        description: 'the application can read its Secret',
      },
    );
    const env = Object.fromEntries(
      Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
    const url = new URL(env.uri ?? '');
    expect(url.protocol).toBe('postgresql:');
    expect(url.hostname).toBe(env.host);
    expect(url.pathname).toBe('/orders');
    expect(decodeURIComponent(url.password)).toBe(env.password);

    const id = (await kubectl(kc, ['get', 'mdb', 'orders', '-n', ns, '-o', 'jsonpath={.status.identifier}']))
      .stdout;
    const deleted = await kubectl(kc, ['delete', '-n', ns, 'manageddb/orders', '--timeout=120s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const rds = new RDSClient(awsClientConfig(stackInfo().awsEndpoint));
    expect(
      await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id })).then(
        () => 'exists',
        (e: unknown) => (e instanceof Error ? e.name : String(e)),
      ),
    ).toBe('DBInstanceNotFoundFault');
    expect(
      (await rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: `${id}-final` }))).DBSnapshots
        ?.length,
    ).toBe(1);
  });
});

describe('ManagedDB operator crash', () => {
  it('killed with SIGKILL the moment CreateDBInstance reaches AWS, leaves exactly one instance after restart', async () => {
    const admin = kubeClient();
    const crashNs = await newNamespace(admin, 'e2e-mdb-crash');
    const crashProxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint });
    const start = (): SkyliftProcess =>
      spawnSkylift(crashNs, crashProxy.endpoint, ['--rds-poll-interval', '1s']);
    const first = start();
    crashProxy.inject({
      service: 'rds',
      operation: 'CreateDBInstance',
      times: 1,
      match: () => {
        first.child.kill('SIGKILL');
        return false;
      },
      fault: { kind: 'latency', ms: 0 },
    });
    const second: { p?: SkyliftProcess } = {};
    try {
      await waitFor(() => (first.output().includes('controllers started') ? true : undefined), {
        timeoutMs: 30_000,
        description: 'first operator started',
      });
      const kc = stackInfo().adminKubeconfig;
      expect(
        (await kubectl(kc, ['apply', '-n', crashNs, '-f', join(repoRoot, 'examples/manageddb.yaml')])).code,
      ).toBe(0);
      const [, signal] = (await once(first.child, 'exit')) as [number | null, string | null];
      expect(signal).toBe('SIGKILL');
      second.p = start();
      const ready = await kubectl(kc, [
        'wait',
        '-n',
        crashNs,
        '--for=condition=Ready',
        'manageddb/orders',
        '--timeout=120s',
      ]);
      expect(ready.code, `${ready.stderr}\n${second.p.output().slice(-2000)}`).toBe(0);
      const id = (
        await kubectl(kc, ['get', 'mdb', 'orders', '-n', crashNs, '-o', 'jsonpath={.status.identifier}'])
      ).stdout;
      const rds = new RDSClient(awsClientConfig(stackInfo().awsEndpoint));
      const all = (await rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [];
      expect(all.filter((d) => d.DBInstanceIdentifier === id)).toHaveLength(1);
      expect(all.filter((d) => (d.DBInstanceIdentifier ?? '').includes(crashNs.slice(0, 12)))).toHaveLength(
        1,
      );
    } finally {
      await second.p?.stop();
      await crashProxy.stop();
    }
  });
});
