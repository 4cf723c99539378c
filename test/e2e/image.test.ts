// The operator image as `make image` builds it (hack/build-image.sh: the
// Dockerfile built by buildah on a base assembled from Debian and npm
// packages; no Docker engine, no registry), checked in the OCI archive a
// node's containerd imports: its name, user and entry point agree with the
// chart; /app holds package.json, production dependencies and dist/ compiled
// from src/, and nothing of the build (sources, tests, .git, npm's cache, the
// build host's CA) is anywhere in it; its size is reported and bounded; run by
// runc as uid 65532 with a read-only root filesystem and no capabilities (the
// chart's securityContext), it reconciles a DNSRecord and exits 0 on SIGTERM;
// and it loads into a containerd. Needs root (buildah, runc, containerd), as
// `make image` does, and fails saying so otherwise. The Dockerfile's text is checked too.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureHostedZone } from '../../dev/awsAccount.ts';
import { emulatorEnv } from '../../dev/emulator.ts';
import { simpleRequest } from '../../dev/http.ts';
import { skyliftImage } from '../../dev/images.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { renderKubeconfig } from '../../dev/kubeconfig.ts';
import { pinnedVersions, repoRoot } from '../../dev/paths.ts';
import { ManagedProcess } from '../../dev/process.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';
import { operatorNodeFlags } from '../../tools/nodeFlags.ts';
import { route53At } from '../support/dns.ts';
import { checkSelfContained, compiledFrom, formatViolation, listFiles } from '../support/importRules.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { openOciArchive, treeBytes, unpackLayers, type OciImage } from '../support/ociImage.ts';
import { startRuncContainer, type RuncContainer } from '../support/runc.ts';
import { scratchDir } from '../support/scratch.ts';
import { stackInfo } from '../support/stack.ts';

const run = promisify(execFile);

/** Measured when introduced: 261 MiB unpacked, an 86 MiB archive (Node 24.21.0, 60 packages in /app); ×1.5. */
const maxUnpackedMiB = 392;
const maxArchiveMiB = 129;
/** The chart's securityContext: the uid and gid the image runs as. */
const nonRootId = 65532;

interface PackageJson {
  version: string;
  bin: { skylift: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
interface LockPackage {
  dev?: boolean;
  optional?: boolean;
}

const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T;

let work = '';
let image: OciImage;
let rootfs: string;
let container: RuncContainer | undefined;

describe('the image make image builds', () => {
  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error('the image tests need root (buildah, runc and containerd), as make image does');
    // Warm (nothing changed since the last build) this returns in about a second.
    const t0 = Date.now();
    const built = await run(join(repoRoot, 'hack', 'build-image.sh'), ['image'], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    });
    const summary = built.stderr.trim().split('\n').slice(-2).join('\n');
    console.log(`[image] hack/build-image.sh image: ${Date.now() - t0} ms\n${summary}`);
    expect(built.stdout.trim()).toBe(skyliftImage().archive);
    work = await scratchDir('image');
    await mkdir(join(work, 'oci'));
    image = await openOciArchive(skyliftImage().archive, join(work, 'oci'));
    rootfs = join(work, 'bundle', 'rootfs');
    await mkdir(rootfs, { recursive: true });
    await unpackLayers(image, rootfs);
  }, 900_000);

  afterAll(async () => {
    await container?.remove();
    // The unpacked image is ~280 MiB: not kept among the test runs' logs.
    if (work !== '') await rm(work, { recursive: true, force: true });
  });

  it('is named as the chart expects, runs as the non-root user under tini, and is built on the pinned Node', async () => {
    const pkg = await readJson<PackageJson>(join(repoRoot, 'package.json'));
    const chart = parse(await readFile(join(repoRoot, 'deploy/helm/skylift/Chart.yaml'), 'utf8')) as {
      appVersion: string;
    };
    const values = parse(await readFile(join(repoRoot, 'deploy/helm/skylift/values.yaml'), 'utf8')) as {
      image: { repository: string };
      podSecurityContext: { runAsUser: number; runAsGroup: number };
    };
    expect(image.manifestDescriptor.annotations?.['org.opencontainers.image.ref.name']).toBe(
      `${values.image.repository}:${chart.appVersion}`,
    );
    expect(skyliftImage().name).toBe(`${values.image.repository}:${pkg.version}`);
    const { config } = image;
    expect([config.os, config.architecture]).toEqual(['linux', 'amd64']);
    expect(config.config.User).toBe(
      `${values.podSecurityContext.runAsUser}:${values.podSecurityContext.runAsGroup}`,
    );
    expect(config.config.User).toBe(`${nonRootId}:${nonRootId}`);
    expect(config.config.Entrypoint).toEqual([
      '/usr/bin/tini',
      '--',
      'node',
      ...operatorNodeFlags,
      join('/app', pkg.bin.skylift),
    ]);
    expect(config.config.Cmd).toEqual(['run']);
    expect(config.config.WorkingDir).toBe('/app');
    expect(config.config.Env).toContain('NODE_ENV=production');
    expect(config.config.Env).toContain(`NODE_VERSION=${pinnedVersions().NODE_VERSION}`);
    expect(config.config.Labels?.['org.opencontainers.image.version']).toBe(pkg.version);
    // The binaries the entry point names are there.
    expect(existsSync(join(rootfs, 'usr/bin/tini'))).toBe(true);
    expect(existsSync(join(rootfs, 'usr/local/bin/node'))).toBe(true);
  });

  it('holds package.json, production dependencies and dist/ compiled from src/ in /app, and nothing of the build', async () => {
    const app = join(rootfs, 'app');
    expect((await readdir(app)).sort()).toEqual(['dist', 'node_modules', 'package.json']);
    const pkg = await readJson<PackageJson>(join(app, 'package.json'));
    expect(pkg).toEqual(await readJson<PackageJson>(join(repoRoot, 'package.json')));

    // node_modules: exactly the lockfile's packages that are not dev-only.
    const lock = await readJson<{ packages: Record<string, LockPackage> }>(
      join(repoRoot, 'package-lock.json'),
    );
    const production = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.dev !== true)
      .map(([path]) => path);
    const installed = Object.keys(
      (
        await readJson<{ packages: Record<string, LockPackage> }>(
          join(app, 'node_modules/.package-lock.json'),
        )
      ).packages,
    );
    expect(installed.filter((path) => !production.includes(path))).toEqual([]);
    const missing = production.filter((path) => !installed.includes(path));
    // Only optional packages for other platforms may be missing.
    expect(missing.filter((path) => lock.packages[path]?.optional !== true)).toEqual([]);
    for (const path of installed) expect(existsSync(join(app, path, 'package.json')), path).toBe(true);
    for (const dep of Object.keys(pkg.devDependencies))
      expect(existsSync(join(app, 'node_modules', dep)), `devDependency ${dep}`).toBe(false);
    for (const dep of Object.keys(pkg.dependencies))
      expect(existsSync(join(app, 'node_modules', dep, 'package.json')), dep).toBe(true);
    console.log(
      `[image] /app/node_modules: ${installed.length} packages (${production.length} in the lockfile)`,
    );

    // dist/: compiled from src/ only, no tests, importing only itself, builtins and production dependencies.
    const dist = join(app, 'dist');
    const built = listFiles(dist);
    expect(built.filter((path) => /\.test\.js(\.map)?$/.test(path))).toEqual([]);
    const sources = new Set(listFiles(join(repoRoot, 'src')));
    expect(
      built.filter((path) => {
        const source = compiledFrom(path);
        return source === undefined || !sources.has(source);
      }),
    ).toEqual([]);
    expect(built).toContain(pkg.bin.skylift.replace(/^(\.\/)?dist\//, ''));
    const modules = await Promise.all(
      built
        .filter((path) => path.endsWith('.js'))
        .map(async (path) => ({ path, text: await readFile(join(dist, path), 'utf8') })),
    );
    expect(checkSelfContained(modules, Object.keys(pkg.dependencies)).map(formatViolation)).toEqual([]);

    // Nothing of the clone or the build stage anywhere: sources, tests, tooling, git, npm's cache and config.
    const { stdout } = await run(
      'find',
      [
        rootfs,
        '(',
        '-name',
        '.git',
        '-o',
        '-name',
        'tsconfig*.json',
        '-o',
        '-name',
        'Dockerfile',
        '-o',
        '-name',
        '.npmrc',
        '-o',
        '-name',
        'npmrc',
        '-o',
        '-name',
        '*.test.ts',
        '-o',
        '-name',
        'host-ca.crt',
        '-o',
        '-path',
        `${rootfs}/src`,
        '-o',
        '-path',
        `${rootfs}/app/src`,
        '-o',
        '-path',
        `${rootfs}/app/test`,
        '-o',
        '-path',
        `${rootfs}/root/.npm`,
        ')',
        '-print',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    expect(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((path) => relative(rootfs, path))
        // npm itself is in the base (the build stage runs npm ci); packages ship their own tsconfig and test files.
        .filter((path) => !/^usr\/local\/lib\/node_modules\/npm\//.test(path))
        .filter((path) => !/^app\/node_modules\/.*\/(tsconfig[^/]*\.json|[^/]*\.test\.ts)$/.test(path)),
    ).toEqual([]);
    // apt's lists are gone (the Dockerfile removes them); the build's CA never reached the image.
    expect(await readdir(join(rootfs, 'var/lib/apt/lists'))).toEqual([]);
    expect(existsSync(join(rootfs, 'etc/ssl/certs/ca-certificates.crt'))).toBe(false);
  });

  it('has a size within the bound measured when it was introduced', async () => {
    const unpacked = await treeBytes(rootfs);
    const app = await treeBytes(join(rootfs, 'app'));
    const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
    const layers = image.layers.map((l) => mib(l.size)).join(' + ');
    console.log(
      `[image] ${skyliftImage().name}: ${mib(unpacked)} MiB unpacked (/app ${mib(app)} MiB), ` +
        `archive ${mib(image.archiveBytes)} MiB (layers ${layers} MiB gzip)`,
    );
    expect(unpacked / 1024 / 1024).toBeLessThan(maxUnpackedMiB);
    expect(image.archiveBytes / 1024 / 1024).toBeLessThan(maxArchiveMiB);
  });

  it('holds nothing of the local-stack workshop (dev/), and its skylift dev says to run it from a clone', async () => {
    // No folder named dev/ under /app but in packages; dist/ is compiled from src/ (checked above).
    const app = listFiles(join(rootfs, 'app'));
    expect(app.filter((path) => !path.startsWith('node_modules/') && /(^|\/)dev\//.test(path))).toEqual([]);
    // No function or class the workshop defines (and the product does not) was compiled in under any name.
    const definitions = (text: string): string[] =>
      [...text.matchAll(/^export (?:async )?(?:function|class) (\w+)/gm)].map((m) => m[1] ?? '');
    const read = (root: string, path: string): Promise<string> => readFile(join(root, path), 'utf8');
    const productNames = new Set(
      (
        await Promise.all(
          listFiles(join(repoRoot, 'src'))
            .filter((path) => path.endsWith('.ts'))
            .map((path) => read(join(repoRoot, 'src'), path)),
        )
      ).flatMap(definitions),
    );
    const workshopNames = (
      await Promise.all(
        listFiles(join(repoRoot, 'dev'))
          .filter((path) => path.endsWith('.ts'))
          .map((path) => read(join(repoRoot, 'dev'), path)),
      )
    )
      .flatMap(definitions)
      .filter((name) => !productNames.has(name));
    expect(workshopNames).toEqual(expect.arrayContaining(['startDevStack', 'startControlPlane', 'runDev']));
    const dist = join(rootfs, 'app', 'dist');
    const compiled = (
      await Promise.all(
        listFiles(dist)
          .filter((path) => path.endsWith('.js'))
          .map((path) => read(dist, path)),
      )
    ).join('\n');
    expect(workshopNames.filter((name) => new RegExp(`(function|class) ${name}\\b`).test(compiled))).toEqual(
      [],
    );

    // `skylift dev` in the image: refused with where to run it, exit 2, nothing started.
    const dev = await startRuncContainer({
      id: `skylift-image-dev-${process.pid}`,
      bundle: join(work, 'bundle'),
      stateDir: join(work, 'runc'),
      args: [...(image.config.config.Entrypoint ?? []), 'dev'],
      env: [...(image.config.config.Env ?? [])],
      cwd: image.config.config.WorkingDir ?? '/',
      uid: nonRootId,
      gid: nonRootId,
      tmpMiB: 16,
    });
    try {
      expect(await dev.exited(), dev.output()).toBe(2);
      expect(dev.output()).toContain(
        'skylift: dev runs the local stack from a clone of the repository (make dev)',
      );
    } finally {
      await dev.remove();
    }
  });

  it('runs as uid 65532 on a read-only root filesystem: a DNSRecord becomes Ready, and SIGTERM exits 0', async () => {
    const admin = kubeClient();
    await installCrds(admin);
    const ns = await newNamespace(admin, 'e2e-image');
    await ensureHostedZone(route53At(stackInfo().awsEndpoint), 'example.com');
    // The admin kubeconfig, readable by the container's user only (the stack's copy is root's, 0600).
    const kubeconfig = join(work, 'kubeconfig');
    const info = stackInfo();
    await writeFile(
      kubeconfig,
      renderKubeconfig([
        {
          clusterName: 'skylift-local',
          server: info.server,
          caPem: info.caPem,
          user: 'skylift-admin',
          token: info.adminToken,
        },
      ]),
      { mode: 0o400 },
    );
    await chown(kubeconfig, nonRootId, nonRootId);
    const { config } = image.config;
    const policySelector = process.env.SKYLIFT_TEAM_POLICY_SELECTOR;
    container = await startRuncContainer({
      id: `skylift-image-${process.pid}`,
      bundle: join(work, 'bundle'),
      stateDir: join(work, 'runc'),
      // A Pod's args replace the image's CMD (`run`), the entry point stays.
      args: [
        ...(config.Entrypoint ?? []),
        'run',
        '--namespaces',
        ns,
        '--leader-elect=false',
        '--probe-address',
        '127.0.0.1:0',
      ],
      env: [
        ...(config.Env ?? []),
        'KUBECONFIG=/etc/skylift/kubeconfig',
        ...Object.entries(emulatorEnv(stackInfo().awsEndpoint)).map(([k, v]) => `${k}=${v}`),
        ...(policySelector !== undefined ? [`SKYLIFT_TEAM_POLICY_SELECTOR=${policySelector}`] : []),
      ],
      cwd: config.WorkingDir ?? '/',
      uid: nonRootId,
      gid: nonRootId,
      tmpMiB: 64,
      binds: [{ source: kubeconfig, destination: '/etc/skylift/kubeconfig' }],
    });
    const c = container;
    const address = await waitFor(
      () => {
        if (c.child.exitCode !== null)
          throw new AbortWait(`the container exited ${c.child.exitCode}:\n${c.output()}`);
        return /"address":"([^"]+)","msg":"serving \/metrics/.exec(c.output())?.[1];
      },
      { timeoutMs: 60_000, description: 'the operator in the container to serve its probes' },
    );

    // Every process in it (tini and node) runs as 65532 with no capabilities.
    const processes = await c.processes();
    expect(processes.map((p) => p.cmdline[0])).toEqual(expect.arrayContaining(['/usr/bin/tini', 'node']));
    for (const p of processes) {
      expect(p.uids, p.cmdline.join(' ')).toEqual([nonRootId, nonRootId, nonRootId, nonRootId]);
      expect(p.gids, p.cmdline.join(' ')).toEqual([nonRootId, nonRootId, nonRootId, nonRootId]);
      expect(p.capEff, p.cmdline.join(' ')).toBe('0000000000000000');
    }
    // The root filesystem is read-only: even uid 0, which owns / and /app, cannot write there; /tmp is the tmpfs.
    const probe = await c.exec('0:0', [
      '/usr/local/bin/node',
      '-e',
      `const fs = require('fs'); const r = {};
       for (const p of ['/probe', '/app/probe', '/tmp/probe'])
         try { fs.writeFileSync(p, 'x'); r[p] = 'written'; } catch (e) { r[p] = e.code; }
       console.log(JSON.stringify(r));`,
    ]);
    expect(probe.code, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toEqual({
      '/probe': 'EROFS',
      '/app/probe': 'EROFS',
      '/tmp/probe': 'written',
    });

    const applied = await kubectl(
      info.adminKubeconfig,
      ['apply', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'DNSRecord',
        metadata: { name: 'from-image' },
        spec: { zoneName: 'example.com', name: `image-${ns}`, type: 'A', records: ['192.0.2.9'] },
      }),
    );
    expect(applied.code, applied.stderr).toBe(0);
    const ready = await kubectl(info.adminKubeconfig, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord/from-image',
      '--timeout=90s',
    ]);
    expect(ready.code, `${ready.stderr}\n${c.output().slice(-2000)}`).toBe(0);
    expect((await simpleRequest(`http://${address}/healthz`)).status).toBe(200);
    // Deleted while the operator runs: the shared zone keeps nothing of this test.
    const deleted = await kubectl(info.adminKubeconfig, [
      'delete',
      '-n',
      ns,
      'dnsrecord/from-image',
      '--timeout=60s',
    ]);
    expect(deleted.code, `${deleted.stderr}\n${c.output().slice(-2000)}`).toBe(0);

    // Stopped as the kubelet's runtime stops it: SIGTERM to PID 1 (tini), which passes it to node.
    await c.kill('TERM');
    expect(await c.exited(), c.output().slice(-2000)).toBe(0);
    expect(c.output()).not.toMatch(/EROFS|read-only file system/i);
  });

  it('loads into a containerd under its name (make image CONTAINERD_ADDRESS=…)', async () => {
    // Short: a unix socket's path has at most 107 bytes.
    const dir = join(work, 'ctrd');
    await mkdir(dir);
    const socket = join(dir, 'sock');
    await writeFile(
      join(dir, 'config.toml'),
      `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(dir, 'opt')}"
`,
    );
    const containerd = await ManagedProcess.start({
      name: 'containerd',
      command: 'containerd',
      args: ['--config', join(dir, 'config.toml')],
      logFile: join(dir, 'containerd.log'),
      pidFile: join(dir, 'containerd.pid'),
    });
    try {
      await waitFor(
        async () => {
          await run('ctr', ['--address', socket, 'version']);
          return true;
        },
        { timeoutMs: 30_000, description: 'containerd answering' },
      );
      const loaded = await run(join(repoRoot, 'hack', 'build-image.sh'), ['load', socket], { cwd: repoRoot });
      expect(loaded.stderr).toContain(`loaded ${skyliftImage().name}`);
      const { stdout } = await run('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'ls']);
      const row = stdout.split('\n').find((line) => line.startsWith(`${skyliftImage().name} `));
      expect(row, stdout).toBeDefined();
      // The very manifest of the archive.
      expect(row).toContain(image.manifestDescriptor.digest);
    } finally {
      await containerd.stop(10_000);
    }
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
