// `make dev` as a user runs it: the dev entry point as a process, used with
// the files it writes, stopped with Ctrl-C (SIGINT), leaving nothing running.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simpleRequest } from '../../src/dev/http.ts';
import { parseEnvFile, repoRoot } from '../../src/dev/paths.ts';
import { waitFor } from '../../src/dev/wait.ts';
import { kubectl } from '../support/kubectl.ts';
import { scratchDir } from '../support/scratch.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('make dev', () => {
  it('starts the stack, writes kubeconfig and aws.env, and stops everything on Ctrl-C', async () => {
    const dir = await scratchDir('dev');
    const dev = spawn(process.execPath, [join(repoRoot, 'src/dev/main.ts')], {
      env: { ...process.env, SKYLIFT_DEV_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    dev.stdout.on('data', (c: Buffer) => (output += c.toString()));
    dev.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = once(dev, 'exit') as Promise<[number | null, string | null]>;

    await waitFor(() => (output.includes('Press Ctrl-C') ? true : undefined), {
      timeoutMs: 90_000,
      description: 'the dev stack to print its ready banner',
    });
    expect(output).toContain(`export KUBECONFIG=${join(dir, 'kubeconfig')}`);

    const crds = await kubectl(join(dir, 'kubeconfig'), [
      'get',
      'crd',
      'dnsrecords.aws.skylift.dev',
      '-o',
      'name',
    ]);
    expect(crds.stdout.trim()).toBe(
      'customresourcedefinition.apiextensions.k8s.io/dnsrecords.aws.skylift.dev',
    );
    expect(output).toMatch(/hosted zone example\.com \([A-Z0-9]+\)/);
    const namespaces = await kubectl(join(dir, 'kubeconfig'), ['get', 'namespaces', '-o', 'name']);
    expect(namespaces.stderr).toBe('');
    expect(namespaces.stdout).toContain('namespace/default');

    const awsEnv = parseEnvFile((await readFile(join(dir, 'aws.env'), 'utf8')).replace(/^export /gm, ''));
    expect(awsEnv.AWS_ACCESS_KEY_ID).toBe('testing');
    const reset = await simpleRequest(`${awsEnv.AWS_ENDPOINT_URL ?? ''}/moto-api/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);

    const pids: number[] = [];
    for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (e.isFile() && e.name.endsWith('.pid')) {
        pids.push(Number((await readFile(join(e.parentPath, e.name), 'utf8')).split(' ')[0]));
      }
    }
    expect(pids).toHaveLength(4); // etcd, kube-apiserver, kube-controller-manager, moto
    expect(pids.every(alive)).toBe(true);

    dev.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(output).toContain('Stopped.');
    expect(pids.filter(alive)).toEqual([]);
  });
});
