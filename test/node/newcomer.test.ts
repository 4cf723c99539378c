// A newcomer's first run of the node mode, as the README tells it: a fresh
// clone, `make dev DEV_FLAGS=--node` (the tool cache warm, as after `make
// test`), the sample app's load balancer sending traffic to real Pods, then
// Ctrl-C leaving nothing behind. It runs beside this project's own node
// cluster, so it also shows two node clusters on one host (two slots).
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEnvFile, repoRoot } from '../../dev/paths.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { nodeInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

const run = promisify(execFile);
let clone: string | undefined;
let makePid: number | undefined;

afterAll(async () => {
  // Only after a failure is anything still running: stop it as Ctrl-C would, then remove the clone.
  if (makePid !== undefined) {
    try {
      process.kill(-makePid, 'SIGINT');
    } catch {
      /* gone */
    }
  }
  if (clone !== undefined) await rm(clone, { recursive: true, force: true });
});

/** Whether a network namespace exists under /run/netns. */
function netnsExists(name: string): boolean {
  return existsSync(join('/run/netns', name));
}

async function pidFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && e.name.endsWith('.pid')).map((e) => e.name);
}

describe('make dev DEV_FLAGS=--node from a fresh clone', () => {
  it('serves the sample app from real Pods behind the load balancer, and Ctrl-C stops everything', async () => {
    clone = await mkdtemp(join(tmpdir(), 'skylift-newcomer-'));
    await run('git', ['clone', '-q', repoRoot, clone]);
    const child = spawn('make', ['dev', 'DEV_FLAGS=--node'], {
      cwd: clone,
      // Its own process group, as a terminal gives it: Ctrl-C goes to make and everything under it.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    makePid = child.pid;
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));

    await waitFor(
      () => {
        if (child.exitCode !== null) throw new AbortWait(`make dev exited early:\n${out}`);
        return /sends traffic to the Pods[^\n]*\n(( {2}\S+ +Pod \S+\n)+)/.exec(out) ?? undefined;
      },
      { timeoutMs: 480_000, description: 'make dev to print the targets', intervalMs: 500 },
    );
    const devDir = join(clone, '.skylift', 'dev');
    const kc = join(devDir, 'kubeconfig');
    expect(out).toContain('Node        skylift-node Ready');
    expect(out).toContain(`export KUBECONFIG=${kc}`);
    // A second node cluster on this host: not the test project's slot.
    const slot = /in network namespace (skylift-\d+)/.exec(out)?.[1] ?? '';
    expect(slot).toMatch(/^skylift-\d+$/);
    expect(slot).not.toBe(nodeInfo().netns);
    expect(netnsExists(slot)).toBe(true);

    // The printed targets are the Ready Pods of Deployment web, and AWS has exactly those.
    const printed = [...out.matchAll(/^ {2}(\d+\.\d+\.\d+\.\d+):8080 +Pod (web-\S+)$/gm)].map((m) => ({
      ip: m[1] ?? '',
      pod: m[2] ?? '',
    }));
    expect(printed).toHaveLength(2);
    const pods = JSON.parse((await kubectl(kc, ['get', 'pods', '-l', 'app=web', '-o', 'json'])).stdout) as {
      items: { metadata: { name: string }; status: { podIP?: string } }[];
    };
    expect(
      pods.items
        .map((p) => ({ ip: p.status.podIP ?? '', pod: p.metadata.name }))
        .sort((a, b) => a.ip.localeCompare(b.ip)),
    ).toEqual(printed);
    const awsEnv = parseEnvFile((await readFile(join(devDir, 'aws.env'), 'utf8')).replace(/^export /gm, ''));
    const tgArn = (
      await kubectl(kc, ['get', 'myingress', 'shop', '-o', 'jsonpath={.status.targetGroups[0].arn}'])
    ).stdout;
    const health = await new ElasticLoadBalancingV2Client(
      awsClientConfig(awsEnv.AWS_ENDPOINT_URL ?? ''),
    ).send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
    expect((health.TargetHealthDescriptions ?? []).map((t) => t.Target?.Id).sort()).toEqual(
      printed.map((p) => p.ip),
    );
    expect(await pidFilesUnder(devDir)).not.toEqual([]);

    // Ctrl-C: SIGINT to the whole process group, as a terminal sends it.
    process.kill(-(child.pid ?? 0), 'SIGINT');
    await exited;
    makePid = undefined;
    expect(out).toContain('Stopped.');
    expect(netnsExists(slot)).toBe(false);
    expect(await pidFilesUnder(devDir)).toEqual([]);
  });
});
