// The `skylift` command as a user runs it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installCrds } from '../../src/dev/installCrds.ts';
import { managedDbType } from '../../src/kinds/manageddb/api.ts';
import { repoRoot } from '../../src/dev/paths.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
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
  it('records an on-demand request on the ManagedDB for the operator to carry out', async () => {
    const admin = kubeClient();
    await installCrds(admin);
    const ns = await newNamespace(admin, 'cli-db');
    await admin.create(resourcePath(managedDbType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'ManagedDB',
      metadata: { name: 'orders' },
      spec: { engine: 'postgres', instanceClass: 'db.t3.micro', allocatedStorage: 20, masterUsername: 'app' },
    });
    const r = skylift(['db', 'snapshot', 'orders', '-n', ns, '--kubeconfig', stackInfo().adminKubeconfig]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const id = /request (\S+)\)/.exec(r.stdout)?.[1];
    expect(id).toBeDefined();
    const got = await admin.get<{ metadata: { annotations?: Record<string, string> } }>(
      resourcePath(managedDbType, { namespace: ns, name: 'orders' }),
    );
    expect(got.metadata.annotations?.['aws.skylift.dev/request']).toBe(`snapshot ${id ?? ''}`);
    const bad = skylift(['db', 'explode', 'orders', '-n', ns, '--kubeconfig', stackInfo().adminKubeconfig]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: skylift db snapshot|reboot|failover NAME');
  });

  // Issue 14, item 15: these printed a Node stack and exited 1.
  it('answers --help, a bad flag, a missing object and an unreachable apiserver with a line, not a stack', () => {
    const kubeconfig = stackInfo().adminKubeconfig;
    const help = skylift(['db', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('skylift db snapshot|reboot|failover NAME');
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
