// The operator process never loads @kubernetes/client-node (issue 16: importing it cost the process
// ~73 MiB RSS); Skylift reads kubeconfigs itself (src/runtime/kube/kubeconfig*.ts). Nor undici
// (~28 MiB): the Kubernetes client speaks node:https (src/runtime/kube/transport.ts). Checked on what
// a real Node process resolves, so a package that pulled either in would be seen too; the
// architecture test forbids the client-node import in src/ statically.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/dev/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'skylift-imports-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const hook = pathToFileURL(join(repoRoot, 'test', 'support', 'recordModules.ts')).href;
let runs = 0;

/** The module URLs a Node process started with `args` resolved before it exited. */
function modulesLoadedBy(args: readonly string[]): string[] {
  const out = join(dir, `loaded-${++runs}.json`);
  const r = spawnSync(process.execPath, ['--import', hook, ...args], {
    cwd: repoRoot,
    env: { ...process.env, SKYLIFT_LOADED_MODULES: out },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.error, r.stderr).toBeUndefined();
  return JSON.parse(readFileSync(out, 'utf8')) as string[];
}

const fromPackage = (urls: readonly string[], name: string): string[] =>
  urls.filter((u) => u.includes(`/node_modules/${name}/`));
const own = (path: string): string => pathToFileURL(join(repoRoot, path)).href;

describe('the operator process', () => {
  it('`skylift run --help` loads neither client-node, undici nor the dev stack (nor the yaml parser it uses)', () => {
    const urls = modulesLoadedBy([join(repoRoot, 'src', 'cli', 'main.ts'), 'run', '--help']);
    expect(urls).toContain(own('src/operator.ts'));
    expect(urls).toContain(own('src/runtime/kube/client.ts'));
    expect(fromPackage(urls, '@kubernetes/client-node')).toEqual([]);
    expect(fromPackage(urls, 'undici')).toEqual([]);
    expect(urls.filter((u) => u.startsWith(own('src/dev/')))).toEqual([]);
    expect(fromPackage(urls, 'yaml')).toEqual([]);
  });

  it('importing src/operator.ts loads neither client-node nor undici', () => {
    const urls = modulesLoadedBy([
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(own('src/operator.ts'))});`,
    ]);
    expect(urls).toContain(own('src/runtime/kube/kubeconfigLoad.ts'));
    expect(urls).toContain(own('src/runtime/kube/transport.ts'));
    expect(fromPackage(urls, '@kubernetes/client-node')).toEqual([]);
    expect(fromPackage(urls, 'undici')).toEqual([]);
  });

  it('loads the yaml parser only for a kubeconfig that is not JSON', () => {
    const json = join(dir, 'kubeconfig.json');
    const kubeconfig = {
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      contexts: [{ name: 'x', context: { cluster: 'c' } }],
      'current-context': 'x',
    };
    writeFileSync(json, JSON.stringify(kubeconfig));
    const yamlFile = join(dir, 'kubeconfig.yaml');
    writeFileSync(
      yamlFile,
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncurrent-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n',
    );
    const load = (file: string): string[] =>
      modulesLoadedBy([
        '--input-type=module',
        '-e',
        `const { loadKubeconfig } = await import(${JSON.stringify(own('src/runtime/kube/kubeconfigLoad.ts'))}); loadKubeconfig(${JSON.stringify(file)});`,
      ]);
    expect(fromPackage(load(json), 'yaml')).toEqual([]);
    expect(fromPackage(load(yamlFile), 'yaml').length).toBeGreaterThan(0);
  });

  it.each(['@kubernetes/client-node', 'undici'])(
    'the recording sees %s when something does load it',
    (name) => {
      const urls = modulesLoadedBy(['--input-type=module', '-e', `await import(${JSON.stringify(name)});`]);
      expect(fromPackage(urls, name).length).toBeGreaterThan(0);
    },
  );
});
