// The `skylift` command as a user runs it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeDBSnapshotsCommand, RDSClient } from '@aws-sdk/client-rds';
import { describe, expect, it } from 'vitest';
import { emulatorEnv, awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { managedDbType, type ManagedDB } from '../../src/kinds/manageddb/api.ts';
import { repoRoot } from '../../dev/paths.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { spawnSkylift } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

function skylift(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(repoRoot, 'src/cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `skylift ARGS` without blocking this process (a command that waits, beside an operator whose
 * output this process reads), with the stack's admin kubeconfig; resolves when it exits.
 */
function skyliftAsync(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'src/cli/main.ts'), ...args, '--kubeconfig', stackInfo().adminKubeconfig],
    { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A ManagedDB `orders` in `ns`. */
function createOrders(admin: KubeClient, ns: string): Promise<ManagedDB> {
  return admin.create(resourcePath(managedDbType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'ManagedDB',
    metadata: { name: 'orders' },
    spec: { engine: 'postgres', instanceClass: 'db.t3.micro', allocatedStorage: 20, masterUsername: 'app' },
  });
}

describe('skylift CLI', () => {
  // Issue 14, item 14: from a clone, with the system's older Node first on the PATH,
  // `node src/cli/main.ts` fails on the .ts extension; bin/skylift finds Node 24 itself.
  it('runs from a clone as bin/skylift whatever node is first on the PATH', () => {
    const r = spawnSync(join(repoRoot, 'bin', 'skylift'), ['help'], {
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: process.env.HOME,
        ...(process.env.XDG_CACHE_HOME !== undefined ? { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME } : {}),
        ...(process.env.SKYLIFT_CACHE_DIR !== undefined
          ? { SKYLIFT_CACHE_DIR: process.env.SKYLIFT_CACHE_DIR }
          : {}),
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: skylift <command>');
  });

  it('documents run flags and their environment variables', () => {
    const r = skylift(['run', '--help']);
    expect(r.code).toBe(0);
    for (const flag of [
      '--region',
      '--namespaces',
      '--label-selector',
      '--workers',
      '--resync-period',
      '--probe-address',
      '--leader-elect',
      '--log-format',
    ]) {
      expect(r.stdout).toContain(flag);
    }
  });

  it.each([
    {
      reason: 'no region',
      args: ['run'],
      env: {},
      message: 'skylift: no AWS region: set --region or AWS_REGION',
    },
    {
      reason: 'an unknown flag',
      args: ['run', '--bogus'],
      env: { AWS_REGION: 'us-east-1' },
      message: "Unknown option '--bogus'",
    },
    {
      reason: 'a bad duration',
      args: ['run', '--resync-period', 'soon'],
      env: { AWS_REGION: 'us-east-1' },
      message: 'invalid duration "soon"',
    },
    { reason: 'an unknown command', args: ['fly'], env: {}, message: 'unknown command "fly"' },
  ])('exits 2 with a clear message on $reason', ({ args, env, message }) => {
    const r = skylift(args, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toContain('    at ');
  });
});

describe('skylift db', () => {
  // Issue 14, item 15: with no operator running it said "requested" and exited 0, and nothing
  // showed that the request was still waiting for someone to carry it out.
  it('without an operator: waits the default 30s, says in one line the request is pending, exits 3, and trace shows it', async () => {
    const admin = kubeClient();
    await installCrds(admin);
    const ns = await newNamespace(admin, 'cli-db');
    await createOrders(admin, ns);
    const started = Date.now();
    const r = await skyliftAsync(['db', 'snapshot', 'orders', '-n', ns]);
    const waited = Date.now() - started;
    expect(r.stdout).toBe('');
    expect(r.code, r.stderr).toBe(3);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const pending = new RegExp(
      `^skylift: snapshot of manageddb ${ns}/orders \\(request (\\S+)\\) is still pending after 30s: no operator acknowledged the annotation aws\\.skylift\\.dev/request; is skylift running and watching namespace ${ns}\\?`,
    ).exec(lines[0] ?? '');
    expect(pending, r.stderr).not.toBeNull();
    expect(waited).toBeGreaterThanOrEqual(30_000);
    const id = pending?.[1] ?? '';
    const got = await admin.get<ManagedDB>(resourcePath(managedDbType, { namespace: ns, name: 'orders' }));
    expect(got.metadata.annotations?.['aws.skylift.dev/request']).toBe(`snapshot ${id}`);

    // The request stays on the object, and trace shows it pending.
    const t = await skyliftAsync(
      ['trace', 'manageddb/orders', '-n', ns],
      emulatorEnv(stackInfo().awsEndpoint),
    );
    expect(t.stdout, t.stderr).toMatch(
      new RegExp(
        `Request/${id} +Pending +snapshot {2}annotation aws\\.skylift\\.dev/request {2}no operator has acknowledged it yet`,
      ),
    );

    // --no-wait only asks, as before.
    const noWait = await skyliftAsync(['db', 'snapshot', 'orders', '-n', ns, '--no-wait']);
    expect(noWait.stderr).toBe('');
    expect(noWait.code).toBe(0);
    expect(noWait.stdout).toMatch(
      new RegExp(
        `^requested snapshot of manageddb ${ns}/orders \\(request \\S+\\); watch status.lastRequest\n$`,
      ),
    );
    const bad = skylift(['db', 'explode', 'orders', '-n', ns, '--kubeconfig', stackInfo().adminKubeconfig]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: skylift db snapshot|reboot|failover NAME');
    const both = skylift(['db', 'snapshot', 'orders', '--wait', '5s', '--no-wait']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--wait and --no-wait exclude each other');
  });

  it('with an operator: prints the outcome in one line once the operator acknowledged it (0), a refusal exits 1', async () => {
    const admin = kubeClient();
    await installCrds(admin);
    const ns = await newNamespace(admin, 'cli-db-op');
    const operator = spawnSkylift(ns, stackInfo().awsEndpoint, ['--rds-poll-interval', '1s']);
    try {
      await waitFor(() => (operator.output().includes('controllers started') ? true : undefined), {
        timeoutMs: 30_000,
        description: 'skylift run started',
      });
      await createOrders(admin, ns);
      const ready = await waitFor(
        async () => {
          const m = await readObject<ManagedDB>(admin, managedDbType, ns, 'orders');
          return m?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? m : undefined;
        },
        { timeoutMs: 90_000, description: 'orders Ready' },
      );
      const snap = await skyliftAsync(['db', 'snapshot', 'orders', '-n', ns, '--wait', '90s']);
      expect(snap.stderr, operator.output().slice(-2000)).toBe('');
      expect(snap.code).toBe(0);
      const done = new RegExp(
        `^snapshot of manageddb ${ns}/orders \\(request (\\S+)\\): snapshot (\\S+-req-\\S+) started\n$`,
      ).exec(snap.stdout);
      expect(done, snap.stdout).not.toBeNull();
      expect(done?.[2]).toBe(`${String(ready.status?.identifier)}-req-${done?.[1] ?? ''}`);
      const rds = new RDSClient(awsClientConfig(stackInfo().awsEndpoint));
      expect(
        (await rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: done?.[2] ?? '' })))
          .DBSnapshots?.length,
      ).toBe(1);

      // Acknowledged but refused (a single-AZ instance cannot fail over): one line, exit 1.
      const failover = await skyliftAsync(['db', 'failover', 'orders', '-n', ns, '--wait', '90s']);
      expect(failover.stdout).toBe('');
      expect(failover.code).toBe(1);
      expect(failover.stderr).toMatch(
        new RegExp(
          `^skylift: failover of manageddb ${ns}/orders \\(request \\S+\\): failover refused: the instance is not Multi-AZ .*\n$`,
        ),
      );
    } finally {
      await operator.stop();
    }
  });

  // Issue 14, item 15: these printed a Node stack and exited 1.
  it('answers --help, a bad flag, a missing object and an unreachable apiserver with a line, not a stack', () => {
    const kubeconfig = stackInfo().adminKubeconfig;
    const help = skylift(['db', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('skylift db snapshot|reboot|failover NAME');
    expect(help.stdout).toContain('--wait DURATION');
    expect(help.stdout).toMatch(/^ {2}3 {2}still pending after --wait: no operator acknowledged it/m);
    const flag = skylift(['db', 'snapshot', 'x', '--bogus', '--kubeconfig', kubeconfig]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--bogus'");
    const missing = skylift(['db', 'snapshot', 'nonexistent', '-n', 'default', '--kubeconfig', kubeconfig]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('manageddb default/nonexistent not found');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const unreachable = skylift(['db', 'snapshot', 'orders', '-n', 'default'], {
      KUBECONFIG: join(repoRoot, 'test', 'support', 'fixtures', 'unreachable.kubeconfig'),
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the Kubernetes API server');
    expect(unreachable.stderr).not.toMatch(/\n\s+at /);
  });
});

/**
 * A kubeconfig for an apiserver that hangs (`silent`: it accepts connections and never answers) or
 * is down (`refused`: a loopback port nobody listens on any more).
 */
async function brokenApiserver(
  how: 'silent' | 'refused',
): Promise<{ kubeconfig: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const stop = (): Promise<void> =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  if (how === 'refused') await stop();
  const dir = await mkdtemp(join(tmpdir(), 'skylift-broken-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const fixture = await readFile(
    join(repoRoot, 'test', 'support', 'fixtures', 'unreachable.kubeconfig'),
    'utf8',
  );
  await writeFile(kubeconfig, fixture.replace('https://127.0.0.1:1', `https://127.0.0.1:${port}`));
  return {
    kubeconfig,
    close: async () => {
      if (how === 'silent') await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// Issue 27, item 18: `skylift db --wait 5s` took 30 s against an apiserver that never answers: its
// calls had the client's default deadline, not what was left of --wait.
describe('skylift db with an apiserver that never answers', () => {
  it('gives up within --wait, saying the apiserver did not answer', async () => {
    const apiserver = await brokenApiserver('silent');
    try {
      const started = Date.now();
      const child = spawn(
        process.execPath,
        [
          join(repoRoot, 'src/cli/main.ts'),
          'db',
          'snapshot',
          'orders',
          '-n',
          'default',
          '--wait',
          '3s',
          '--kubeconfig',
          apiserver.kubeconfig,
        ],
        { env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const tookMs = Date.now() - started;
      expect(code).toBe(1);
      expect(stderr).toMatch(/the Kubernetes API server \S+ did not answer PATCH \S+ within 3 s/);
      expect(stderr).not.toMatch(/\n\s+at /);
      // --wait plus the start of a Node process on a loaded machine; the client's default deadline is 30 s.
      expect(tookMs).toBeLessThan(15_000);
    } finally {
      await apiserver.close();
    }
  });
});

// Issue 14, item 7: `skylift run` with the apiserver unreachable ignored SIGTERM (still running 11
// minutes later, the shutdown deadline being 20 s), and its only log line was "fetch failed".
describe('skylift run with an apiserver that does not answer', () => {
  it.each([
    { what: 'refused connections, leader election on', silent: false, leaderElect: 'true' },
    { what: 'refused connections, leader election off', silent: false, leaderElect: 'false' },
    { what: 'a server that never answers, leader election on', silent: true, leaderElect: 'true' },
    { what: 'a server that never answers, leader election off', silent: true, leaderElect: 'false' },
  ])('says why in its log and stops within the shutdown deadline on SIGTERM: $what', async (c) => {
    const apiserver = await brokenApiserver(c.silent ? 'silent' : 'refused');
    const kubeconfig = apiserver.kubeconfig;
    const child = spawn(
      process.execPath,
      [
        join(repoRoot, 'src/cli/main.ts'),
        'run',
        '--kubeconfig',
        kubeconfig,
        '--region',
        'us-east-1',
        '--probe-address',
        '127.0.0.1:0',
        '--leader-elect',
        c.leaderElect,
        '--leader-election-namespace',
        'default',
        '--kube-timeout',
        '1s',
        '--shutdown-deadline',
        '3s',
      ],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    let exit: number | null | undefined;
    child.on('close', (code) => (exit = code));
    try {
      const why = c.silent ? 'did not answer' : 'cannot reach the Kubernetes API server https://127.0.0.1:';
      await waitFor(() => (output.includes(why) ? true : undefined), {
        timeoutMs: 20_000,
        description: `a log line saying "${why}"`,
      });
      expect(output).toContain(c.silent ? 'within 1 s' : 'ECONNREFUSED');
      child.kill('SIGTERM');
      // The deadline is 3 s; the bound leaves room for a loaded machine, not for a process that hangs.
      await waitFor(() => (exit !== undefined ? true : undefined), {
        timeoutMs: 15_000,
        description: 'skylift run to exit after SIGTERM',
      });
      expect(exit).toBe(0);
      expect(output).toContain('shutting down');
    } finally {
      child.kill('SIGKILL');
      await apiserver.close();
    }
  });
});
