// What the container image holds, checked without a Docker engine: the
// compiled dist/ with production dependencies only (as the Dockerfile's
// `npm ci` + `npm prune --omit=dev` leave them) runs the operator, which
// reconciles a DNSRecord and exits 0 on SIGTERM; dist/ holds only code
// compiled from src/, importing nothing but its own files, node: builtins and
// production dependencies; and the Dockerfile agrees with package.json, the
// pinned Node version and the chart.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { installCrds } from '../../src/dev/installCrds.ts';
import { operatorNodeFlags } from '../../tools/nodeFlags.ts';
import { ensureHostedZone } from '../../src/dev/awsAccount.ts';
import { emulatorEnv } from '../../src/dev/emulator.ts';
import { simpleRequest } from '../../src/dev/http.ts';
import { pinnedVersions, repoRoot } from '../../src/dev/paths.ts';
import { waitFor } from '../../src/dev/wait.ts';
import { route53At } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { kubectl } from '../support/kubectl.ts';
import { checkSelfContained, compiledFrom, formatViolation, listFiles } from '../support/importRules.ts';
import { scratchDir } from '../support/scratch.ts';
import { spawnSkyliftRun, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

const run = promisify(execFile);
let appDir: string;
let operator: SkyliftProcess | undefined;

beforeAll(async () => {
  // The image's /app: package.json, production node_modules, dist/ — nothing else from the repository.
  appDir = await scratchDir('image');
  await run('npx', ['tsc', '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', join(appDir, 'dist')], {
    cwd: repoRoot,
  });
  await cp(join(repoRoot, 'package.json'), join(appDir, 'package.json'));
  await cp(join(repoRoot, 'package-lock.json'), join(appDir, 'package-lock.json'));
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: appDir,
    maxBuffer: 16 * 1024 * 1024,
  });
}, 300_000);

afterAll(async () => {
  await operator?.stop();
});

describe('the image contents', () => {
  it('hold production dependencies only', async () => {
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const present = (name: string): boolean => existsSync(join(appDir, 'node_modules', name, 'package.json'));
    for (const tool of [
      'typescript',
      'vitest',
      'eslint',
      'prettier',
      'aws-sdk-client-mock',
      'typescript-eslint',
    ]) {
      expect(pkg.devDependencies[tool], `${tool} is a devDependency`).toBeDefined();
      expect(present(tool), `${tool} installed`).toBe(false);
    }
    for (const dep of Object.keys(pkg.dependencies)) expect(present(dep), `${dep} installed`).toBe(true);
  });

  it('holds only what skylift runs: no tooling, no test code', async () => {
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      bin: { skylift: string };
    };
    const dist = join(appDir, 'dist');
    const built = listFiles(dist);
    let bytes = 0;
    for (const path of built) bytes += (await stat(join(dist, path))).size;
    console.log(`[image] dist/: ${built.length} files, ${(bytes / 1024).toFixed(1)} KiB`);
    // rootDir is src/: dist/ mirrors it, so tooling or tests would show up as these folders.
    expect(built.filter((path) => /^(tools|test|bench|hack)\//.test(path))).toEqual([]);
    expect(built.filter((path) => /\.test\.js(\.map)?$/.test(path))).toEqual([]);
    // Every file is compiled (a .js, or its source map) from a .ts of src/.
    const sources = new Set(listFiles(join(repoRoot, 'src')));
    expect(
      built.filter((path) => {
        const source = compiledFrom(path);
        return source === undefined || !sources.has(source);
      }),
    ).toEqual([]);
    expect(built).toContain(pkg.bin.skylift.replace(/^(\.\/)?dist\//, ''));
    // What the .js files import: files of dist/, node: builtins and production dependencies only.
    const modules = await Promise.all(
      built
        .filter((path) => path.endsWith('.js'))
        .map(async (path) => ({ path, text: await readFile(join(dist, path), 'utf8') })),
    );
    expect(checkSelfContained(modules, Object.keys(pkg.dependencies)).map(formatViolation)).toEqual([]);
  });

  it('run the operator: a DNSRecord becomes Ready, and SIGTERM exits 0', async () => {
    const admin = kubeClient();
    await installCrds(admin);
    const ns = await newNamespace(admin, 'e2e-image');
    await ensureHostedZone(route53At(stackInfo().awsEndpoint), 'example.com');
    operator = spawnSkyliftRun({
      entry: join(appDir, 'dist/cli/main.js'),
      cwd: appDir,
      args: ['--namespaces', ns, '--leader-elect=false'],
      env: { ...emulatorEnv(stackInfo().awsEndpoint), NODE_ENV: 'production' },
    });
    const op = operator;
    const address = await waitFor(
      () => /"address":"([^"]+)","msg":"serving \/metrics/.exec(op.output())?.[1],
      { timeoutMs: 30_000, description: 'the built operator to serve its probes' },
    );
    const applied = await kubectl(
      stackInfo().adminKubeconfig,
      ['apply', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'DNSRecord',
        metadata: { name: 'built' },
        spec: { zoneName: 'example.com', name: `built-${ns}`, type: 'A', records: ['192.0.2.8'] },
      }),
    );
    expect(applied.code, applied.stderr).toBe(0);
    const ready = await kubectl(stackInfo().adminKubeconfig, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord/built',
      '--timeout=90s',
    ]);
    expect(ready.code, `${ready.stderr}\n${op.output().slice(-2000)}`).toBe(0);
    expect((await simpleRequest(`http://${address}/healthz`)).status).toBe(200);
    // Deleted while the operator runs: the shared zone keeps nothing of this test.
    const deleted = await kubectl(stackInfo().adminKubeconfig, [
      'delete',
      '-n',
      ns,
      'dnsrecord/built',
      '--timeout=60s',
    ]);
    expect(deleted.code, `${deleted.stderr}\n${op.output().slice(-2000)}`).toBe(0);
    const exited = once(op.child, 'exit') as Promise<[number | null, string | null]>;
    op.child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  });
});

describe('Dockerfile', () => {
  it('builds on the pinned Node, runs as the chart’s non-root user under tini, with the package’s entry point', async () => {
    const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`ARG NODE_VERSION=${pinnedVersions().NODE_VERSION}`);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    const user = /^USER (\d+):(\d+)$/m.exec(dockerfile);
    const values = parse(await readFile(join(repoRoot, 'deploy/helm/skylift/values.yaml'), 'utf8')) as {
      podSecurityContext: { runAsUser: number; runAsGroup: number };
    };
    expect(Number(user?.[1])).toBe(values.podSecurityContext.runAsUser);
    expect(Number(user?.[2])).toBe(values.podSecurityContext.runAsGroup);
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      bin: { skylift: string };
    };
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]';
    expect(JSON.parse(entry)).toEqual([
      '/usr/bin/tini',
      '--',
      'node',
      ...operatorNodeFlags,
      join('/app', pkg.bin.skylift),
    ]);
    // `make run` and `make dev` start the operator with the same flags, and so does a clone's bin/skylift.
    const makefile = await readFile(join(repoRoot, 'Makefile'), 'utf8');
    expect(/^OPERATOR_NODE_FLAGS := (.*)$/m.exec(makefile)?.[1]).toBe(operatorNodeFlags.join(' '));
    const wrapper = await readFile(join(repoRoot, 'bin', 'skylift'), 'utf8');
    expect(wrapper).toContain(`/node" ${operatorNodeFlags.join(' ')} "$root/src/cli/main.ts"`);
  });
});
