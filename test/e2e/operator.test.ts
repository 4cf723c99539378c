// The operator as a process, driven the way a cluster drives it: SIGKILL at
// the worst moment (between the AWS create and the status write), SIGTERM for
// a graceful stop that hands the Lease over, SIGKILL of a leader.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { ConditionType } from '../../src/runtime/conditions.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { createPendingAnnotation } from '../../src/apis/managed.ts';
import { FakeCloud, gadgetCrd, gadgetType, type Gadget } from '../support/gadget.ts';
import { ensureCrd, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo } from '../support/stack.ts';

interface OperatorProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

const running: OperatorProcess[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
});

let admin: KubeClient;
beforeAll(async () => {
  admin = kubeClient();
  await ensureCrd(admin, gadgetCrd, gadgetType);
});

function startOperator(opts: {
  cloudFile: string;
  namespace: string;
  leaderElect: boolean;
  crashAfterCreate?: boolean;
}): OperatorProcess {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'test/support/gadgetOperator.ts'),
      '--probe-address',
      '127.0.0.1:0',
      '--namespaces',
      opts.namespace,
      '--leader-elect',
      String(opts.leaderElect),
      '--leader-election-namespace',
      opts.namespace,
      '--shutdown-deadline',
      '5s',
    ],
    {
      env: {
        ...process.env,
        KUBECONFIG: stackInfo().adminKubeconfig,
        AWS_REGION: 'us-east-1',
        GADGET_CLOUD_FILE: opts.cloudFile,
        GADGET_CRASH_AFTER_CREATE: opts.crashAfterCreate === true ? '1' : '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const p = {
    child,
    output: () => out,
    exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>,
  };
  running.push(p);
  return p;
}

async function createGadget(ns: string, name: string): Promise<void> {
  await admin.create(resourcePath(gadgetType, { namespace: ns }), {
    apiVersion: 'test.skylift.dev/v1',
    kind: 'Gadget',
    metadata: { name },
    spec: { size: 1 },
  });
}

async function waitReady(ns: string, name: string): Promise<Gadget> {
  return waitFor(
    async () => {
      const g = await readObject<Gadget>(admin, gadgetType, ns, name);
      return g?.status?.conditions?.some((c) => c.type === ConditionType.Ready && c.status === 'True') ===
        true
        ? g
        : undefined;
    },
    { timeoutMs: 30_000, description: `${ns}/${name} Ready` },
  );
}

async function leaseHolder(ns: string): Promise<string | undefined> {
  const l = await admin
    .get<{ spec?: { holderIdentity?: string | null } }>(
      `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/skylift-leader`,
    )
    .catch(() => undefined);
  return l?.spec?.holderIdentity ?? undefined;
}

describe('operator process', () => {
  it('killed with SIGKILL between the AWS create and the status write, leaves exactly one resource after restart', async () => {
    const ns = await newNamespace(admin, 'crash');
    const cloudFile = join(await mkdtemp(join(tmpdir(), 'skylift-cloud-')), 'cloud.json');
    const first = startOperator({ cloudFile, namespace: ns, leaderElect: false, crashAfterCreate: true });
    await createGadget(ns, 'survivor');
    const [, signal] = await first.exited;
    expect(signal).toBe('SIGKILL');

    const cloud = new FakeCloud(cloudFile, { reuse: true });
    expect(cloud.all()).toHaveLength(1);
    const crashed = await readObject<Gadget>(admin, gadgetType, ns, 'survivor');
    expect(crashed?.metadata.annotations?.[createPendingAnnotation]).toBeDefined();
    expect(crashed?.status?.id).toBeUndefined();

    startOperator({ cloudFile, namespace: ns, leaderElect: false });
    const ready = await waitReady(ns, 'survivor');
    expect(cloud.all()).toHaveLength(1);
    expect(ready.status?.id).toBe(cloud.all()[0]?.id);
    // The marker stays where the crash left it; it no longer holds anything back (it is older than
    // the create grace, or the resource was seen since).
    expect(ready.metadata.annotations?.[createPendingAnnotation]).toBe(
      crashed?.metadata.annotations?.[createPendingAnnotation],
    );

    await admin.delete(resourcePath(gadgetType, { namespace: ns, name: 'survivor' }));
    await waitFor(
      async () => ((await readObject(admin, gadgetType, ns, 'survivor')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'survivor deleted' },
    );
    expect(cloud.all()).toHaveLength(0);
  });

  it('hands the lease over at once on SIGTERM (exit 0), and after expiry when the leader is SIGKILLed', async () => {
    const ns = await newNamespace(admin, 'handover');
    const cloudFile = join(await mkdtemp(join(tmpdir(), 'skylift-cloud-')), 'cloud.json');
    const a = startOperator({ cloudFile, namespace: ns, leaderElect: true });
    const aIdentity = await waitFor(leaseHolder.bind(null, ns), {
      timeoutMs: 30_000,
      description: 'a leader',
    });
    const b = startOperator({ cloudFile, namespace: ns, leaderElect: true });
    await createGadget(ns, 'first');
    await waitReady(ns, 'first');

    a.child.kill('SIGTERM');
    const [code] = await a.exited;
    expect(code).toBe(0);
    expect(a.output()).toContain('released leadership');
    const bIdentity = await waitFor(
      async () => {
        const h = await leaseHolder(ns);
        return h !== undefined && h !== aIdentity ? h : undefined;
      },
      { timeoutMs: 15_000, description: 'b takes over' },
    );
    await createGadget(ns, 'second');
    await waitReady(ns, 'second');

    const c = startOperator({ cloudFile, namespace: ns, leaderElect: true });
    b.child.kill('SIGKILL');
    await b.exited;
    await waitFor(
      async () => {
        const h = await leaseHolder(ns);
        return h !== undefined && h !== bIdentity ? h : undefined;
      },
      { timeoutMs: 30_000, description: 'c takes over after the lease expires' },
    );
    await createGadget(ns, 'third');
    await waitReady(ns, 'third');
    expect(c.output()).toContain('acquired leadership');
    expect(new FakeCloud(cloudFile, { reuse: true }).all()).toHaveLength(3);
  });
});
