// `skylift dev` as a user runs it: the workshop's entry point as `make dev` runs it
// (`node dev/cli.ts`), or `skylift dev` from a clone, which starts that as its child; its printed
// progress, the cluster and AWS checked directly, then Ctrl-C (SIGINT), leaving nothing running.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeDBInstancesCommand, RDSClient } from '@aws-sdk/client-rds';
import { describe, expect, it } from 'vitest';
import { operatorNodeFlags } from '../../tools/nodeFlags.ts';
import { parseEnvFile, pinnedVersions, repoRoot } from '../../dev/paths.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';
import { ensureZone, findRecord, listRecords, route53At } from '../support/dns.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { scratchDir } from '../support/scratch.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

/** A running `skylift dev` and what it printed so far. */
interface DevProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<[number | null, string | null]>;
  output(): string;
}

/** The workshop's entry point, as `make dev` runs it; `skylift dev` starts the same as its child. */
const makeDev = ['dev/cli.ts'];
const skyliftDev = ['src/cli/main.ts', 'dev'];

function spawnDev(dir: string, args: readonly string[] = [], entry: readonly string[] = makeDev): DevProcess {
  const [script = '', ...command] = entry;
  const child = spawn(process.execPath, [...operatorNodeFlags, join(repoRoot, script), ...command, ...args], {
    env: { ...process.env, SKYLIFT_DEV_DIR: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return { child, exited: once(child, 'exit') as Promise<[number | null, string | null]>, output: () => out };
}

/**
 * `skylift dev` (through the CLI, which starts the workshop as its child) on the test stack with no
 * operator and no samples, once it has printed its banner.
 */
async function bareSkyliftDev(dir: string): Promise<DevProcess> {
  const info = stackInfo();
  const dev = spawnDev(
    dir,
    [
      '--kubeconfig',
      info.adminKubeconfig,
      '--aws-endpoint',
      info.awsEndpoint,
      '--no-operator',
      '--no-samples',
    ],
    skyliftDev,
  );
  await waitFor(
    () => {
      if (dev.child.exitCode !== null) throw new AbortWait(`skylift dev exited early:\n${dev.output()}`);
      return dev.output().includes('Press Ctrl-C') ? true : undefined;
    },
    { timeoutMs: 60_000, description: 'skylift dev --no-operator to print its banner' },
  );
  return dev;
}

/** Waits for the summary `skylift dev` prints once every sample is Ready. */
async function waitForSamplesReady(dev: DevProcess): Promise<void> {
  try {
    await waitFor(
      () => {
        if (dev.child.exitCode !== null) throw new AbortWait('skylift dev exited early');
        return dev.output().includes('All samples Ready') ? true : undefined;
      },
      { timeoutMs: 180_000, description: 'skylift dev to print that the samples are Ready' },
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; it printed:\n${dev.output()}`, {
      cause: err,
    });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids recorded in `*.pid` files under `dir` (one per process the stack started). */
async function recordedPids(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.pid'))
      pids.push(Number((await readFile(join(e.parentPath, e.name), 'utf8')).split(' ')[0]));
  }
  return pids;
}

/** Direct children of a process, from /proc/<pid>/stat (field 4 is the parent pid). */
async function childrenOf(parent: number): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The command name (field 2) is in parentheses and may contain spaces.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent) out.push(Number(entry));
  }
  return out;
}

/** The Ready condition's status of an object, as kubectl reports it. */
async function readyStatus(kubeconfig: string, ns: string, ref: string): Promise<string> {
  const r = await kubectl(kubeconfig, [
    'get',
    '-n',
    ns,
    ref,
    '-o',
    'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
  ]);
  return r.stdout;
}

async function jsonpath(kubeconfig: string, ns: string, ref: string, path: string): Promise<string> {
  return (await kubectl(kubeconfig, ['get', '-n', ns, ref, '-o', `jsonpath={${path}}`])).stdout;
}

describe('skylift dev', () => {
  it('starts the stack and the operator, shows the samples becoming Ready, and stops everything on Ctrl-C', async () => {
    const dir = await scratchDir('dev');
    const dev = spawnDev(dir);
    await waitForSamplesReady(dev);
    const out = dev.output();
    const kc = join(dir, 'kubeconfig');
    expect(out).toContain(`export KUBECONFIG=${kc}`);
    expect(out).toMatch(/hosted zone example\.com \([A-Z0-9]+\)/);
    // The Gateway API's CRDs of the pinned release, from hack/install-gateway-api.sh's copy.
    const gatewayApi = pinnedVersions().GATEWAY_API_VERSION;
    expect(out).toContain(`installed from src/kinds and the Gateway API ${gatewayApi} standard channel`);
    expect(
      await kubectl(kc, [
        'get',
        'crd/gatewayclasses.gateway.networking.k8s.io',
        '-o',
        'jsonpath={.metadata.annotations.gateway\\.networking\\.k8s\\.io/bundle-version}',
      ]),
    ).toMatchObject({ code: 0, stdout: gatewayApi });
    // One transition line per sample reaching Ready, as it happened.
    for (const what of ['MyIngress/shop', 'DNSRecord/shop', 'ManagedDB/orders'])
      expect(out).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d {2}${what} +Ready=True +Available`, 'm'));
    expect(out).toMatch(/^\d\d:\d\d:\d\d {2}DNSRecord\/shop +Ready=False +WaitingForReference/m);

    for (const ref of ['myingress/shop', 'dnsrecord/shop', 'manageddb/orders'])
      expect(await readyStatus(kc, 'default', ref)).toBe('True');

    // What the summary says is what is in AWS.
    const awsEnv = parseEnvFile((await readFile(join(dir, 'aws.env'), 'utf8')).replace(/^export /gm, ''));
    const endpoint = awsEnv.AWS_ENDPOINT_URL ?? '';
    const dnsName = await jsonpath(kc, 'default', 'myingress/shop', '.status.dnsName');
    expect(out).toContain(`Load balancer  ${dnsName}`);
    const lbs = await new ElasticLoadBalancingV2Client(awsClientConfig(endpoint)).send(
      new DescribeLoadBalancersCommand({}),
    );
    expect(lbs.LoadBalancers?.map((l) => l.DNSName)).toEqual([dnsName]);
    const r53 = route53At(endpoint);
    const record = findRecord(
      await listRecords(r53, await ensureZone(r53, 'example.com')),
      'shop.example.com',
      'A',
    );
    expect(record?.AliasTarget?.DNSName?.replace(/\.$/, '')).toBe(dnsName);
    const dbId = await jsonpath(kc, 'default', 'manageddb/orders', '.status.identifier');
    const db = await new RDSClient(awsClientConfig(endpoint)).send(
      new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbId }),
    );
    const address = db.DBInstances?.[0]?.Endpoint?.Address ?? '';
    expect(address).not.toBe('');
    expect(out).toContain(`Database       ${address}:5432`);
    expect(out).toContain('Secret         orders-db');
    expect(await jsonpath(kc, 'default', 'secret/orders-db', '.data.host')).toBe(
      Buffer.from(address).toString('base64'),
    );

    const pids = await recordedPids(dir);
    expect(pids).toHaveLength(4); // etcd, kube-apiserver, kube-controller-manager, moto
    expect(pids.every(alive)).toBe(true);
    // The helper the --kubeconfig test relies on sees them as this process's children.
    expect((await childrenOf(dev.child.pid ?? -1)).sort()).toEqual([...pids].sort());

    dev.child.kill('SIGINT');
    const [code] = await dev.exited;
    expect(code, dev.output().slice(-3000)).toBe(0);
    expect(dev.output()).toContain('Stopped.');
    expect(pids.filter(alive)).toEqual([]);
    expect(await recordedPids(dir)).toEqual([]);
    expect(existsSync(join(dir, 'operator.in-process'))).toBe(false);
  });

  it('with --teams serves two teams from two AWS accounts under TeamPolicies, refuses one team’s name to the other, and still serves the samples', async () => {
    const dir = await scratchDir('dev-teams');
    // vitest.config.ts makes operators ignore policies unless told which: these are the example's.
    const dev = spawnDev(dir, ['--teams', '--team-policy-selector', 'skylift.dev/example=dev-teams']);
    await waitForSamplesReady(dev);
    await waitFor(() => (dev.output().includes('Teams:') ? true : undefined), {
      timeoutMs: 120_000,
      description: 'the teams outcome',
    });
    const out = dev.output();
    expect(out).toContain(
      'Applied examples/dev-teams.yaml: namespaces team-a and team-b, TeamPolicies team-a (account 111111111111) and team-b (account 222222222222), and dev-samples for namespace default',
    );
    expect(out).toContain('  team-a/www: Ready');
    expect(out).toContain('  team-b/www: Ready');
    expect(out).toContain(
      '  team-a/login-of-team-b: Forbidden — TeamPolicy team-a forbids spec.name: login.team-b.example.com is not within the names this namespace may write (team-a.example.com)',
    );
    const kc = join(dir, 'kubeconfig');
    expect(await jsonpath(kc, 'team-a', 'dnsrecord/www', '.status.location.account')).toBe('111111111111');
    expect(await jsonpath(kc, 'team-b', 'dnsrecord/www', '.status.location.account')).toBe('222222222222');
    const policies = await kubectl(kc, ['get', 'teampolicies']);
    expect(policies.stdout).toMatch(/^team-a\s+1\s+arn:aws:iam::111111111111:role\/skylift-team-a\s/m);
    dev.child.kill('SIGINT');
    const [code] = await dev.exited;
    expect(code, dev.output().slice(-3000)).toBe(0);
  });

  it('with --kubeconfig and --aws-endpoint uses them and starts nothing', async () => {
    const info = stackInfo();
    const ns = await newNamespace(kubeClient(), 'e2e-dev');
    const dir = await scratchDir('dev-existing');
    const dev = spawnDev(dir, [
      '--kubeconfig',
      info.adminKubeconfig,
      '--aws-endpoint',
      info.awsEndpoint,
      '-n',
      ns,
      // An operator flag, passed through: watch only this test's namespace of the shared stack.
      '--namespaces',
      ns,
    ]);
    await waitForSamplesReady(dev);
    expect(dev.output()).toContain(
      `Using the cluster in ${info.adminKubeconfig} and AWS at ${info.awsEndpoint}.`,
    );
    expect(dev.output()).not.toContain('Starting');
    // Nothing started: no pid files, no files pointing elsewhere, no child processes.
    expect(await recordedPids(dir)).toEqual([]);
    expect(existsSync(join(dir, 'kubeconfig'))).toBe(false);
    expect(existsSync(join(dir, 'aws.env'))).toBe(false);
    expect(await childrenOf(dev.child.pid ?? -1)).toEqual([]);
    for (const ref of ['myingress/shop', 'dnsrecord/shop', 'manageddb/orders'])
      expect(await readyStatus(info.adminKubeconfig, ns, ref)).toBe('True');

    // Leave the shared zone as it was: delete the samples while the operator still runs.
    const deleted = await kubectl(info.adminKubeconfig, [
      'delete',
      '-n',
      ns,
      '-f',
      join(repoRoot, 'examples/app.yaml'),
      '--timeout=120s',
    ]);
    expect(deleted.code, deleted.stderr).toBe(0);

    dev.child.kill('SIGINT');
    const [code] = await dev.exited;
    expect(code, dev.output().slice(-3000)).toBe(0);
    expect(dev.output()).toContain('Stopped.');
    // Not a throwaway stack: it says the samples outlive it, and how to delete them.
    expect(dev.output()).toContain(`The samples stay in namespace ${ns}`);
    // The shared stack is still up.
    const namespaces = await kubectl(info.adminKubeconfig, ['get', 'namespace', ns, '-o', 'name']);
    expect(namespaces.stdout.trim()).toBe(`namespace/${ns}`);
  });

  it('with --no-operator runs no operator, and still stops cleanly on Ctrl-C', async () => {
    const dir = await scratchDir('dev-no-operator');
    // Through `skylift dev`: the Ctrl-C sent to it reaches the workshop it started, once.
    const dev = await bareSkyliftDev(dir);
    expect(dev.output()).toContain('Operator    not started (--no-operator)');
    // `make run` would be allowed: no live in-process operator is recorded.
    expect(existsSync(join(dir, 'operator.in-process'))).toBe(false);
    dev.child.kill('SIGINT');
    const [code] = await dev.exited;
    expect(code, dev.output()).toBe(0);
    expect(dev.output()).toContain('Stopped.');
  });
  it('through skylift dev, SIGKILLed: the workshop it started notices and stops what it started', async () => {
    const dir = await scratchDir('dev-killed');
    const dev = await bareSkyliftDev(dir);
    const pid = dev.child.pid ?? 0;
    const [workshop] = await childrenOf(pid);
    expect(workshop).toBeGreaterThan(0);
    dev.child.kill('SIGKILL');
    await dev.exited;
    await waitFor(() => (alive(workshop ?? 0) ? undefined : true), {
      timeoutMs: 30_000,
      description: 'the workshop to stop after skylift dev was killed',
    });
    expect(dev.output()).toContain('Stopped.');
  });
});
