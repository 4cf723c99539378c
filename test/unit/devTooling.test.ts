import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tokenAuthFile, newIdentity } from '../../dev/certs.ts';
import { emulatorEnv } from '../../dev/emulator.ts';
import { skyliftImage } from '../../dev/images.ts';
import { corednsImage } from '../../dev/nodeCluster.ts';
import { renderKubeconfig } from '../../dev/kubeconfig.ts';
import { parseEnvFile, pinnedVersions, repoRoot, toolPaths } from '../../dev/paths.ts';

describe('pinned versions', () => {
  const v = pinnedVersions();
  it('agree between hack/versions.env, the Go wrapper modules and the moto requirements', () => {
    const kubeMod = readFileSync(join(repoRoot, 'hack/kubebins/go.mod'), 'utf8');
    expect(kubeMod).toContain(`k8s.io/kubernetes ${v.KUBE_VERSION}`);
    const staging = v.KUBE_VERSION.replace(/^v1\./, 'v0.');
    const replaces = kubeMod.split('\n').filter((l) => l.includes(' => '));
    expect(replaces.length).toBeGreaterThan(20);
    for (const line of replaces)
      expect(line.trim()).toMatch(new RegExp(`^(\\S+) => \\1 ${staging.replace(/\./g, '\\.')}$`));
    expect(readFileSync(join(repoRoot, 'hack/etcd/go.mod'), 'utf8')).toContain(
      `go.etcd.io/etcd/server/v3 ${v.ETCD_VERSION}`,
    );
    expect(readFileSync(join(repoRoot, 'hack/helm/go.mod'), 'utf8')).toContain(
      `helm.sh/helm/v4 ${v.HELM_VERSION}`,
    );
    const argoMod = readFileSync(join(repoRoot, 'hack/argocd/go.mod'), 'utf8');
    expect(argoMod).toContain(`github.com/argoproj/argo-cd/v3 ${v.ARGOCD_VERSION}`);
    // Argo CD's own replaces, repeated: every Kubernetes staging module at one and the same release.
    const argoStaging = argoMod
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^k8s\.io\/\S+ => /.test(l));
    expect(argoStaging.length).toBeGreaterThan(20);
    const releases = new Set(argoStaging.map((l) => /^(\S+) => \1 (v0\.\d+\.\d+)$/.exec(l)?.[2]));
    expect([...releases]).toEqual([expect.stringMatching(/^v0\.\d+\.\d+$/)]);
    // One version for the CRDs and the conformance suite: the suite refuses CRDs of another release.
    const gatewayMod = readFileSync(join(repoRoot, 'hack/gatewayapi/go.mod'), 'utf8');
    for (const module of ['sigs.k8s.io/gateway-api', 'sigs.k8s.io/gateway-api/conformance'])
      expect(gatewayMod).toMatch(
        new RegExp(`^\\s*(require )?${module.replace(/\./g, '\\.')} ${v.GATEWAY_API_VERSION}( //.*)?$`, 'm'),
      );
    // The chart depends on its Gateway API subchart (make generate writes it) at that version.
    const chart = parse(readFileSync(join(repoRoot, 'deploy/helm/skylift/Chart.yaml'), 'utf8')) as {
      dependencies: { name: string; version: string }[];
    };
    expect(chart.dependencies.find((d) => d.name === 'gateway-api-crds')?.version).toBe(
      v.GATEWAY_API_VERSION.replace(/^v/, ''),
    );
    expect(readFileSync(join(repoRoot, 'localstack/requirements.txt'), 'utf8')).toContain(
      `moto[server]==${v.MOTO_VERSION}\n`,
    );
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toContain(`>=${v.NODE_VERSION.split('.')[0]}`);
  });

  it('give the conformance CoreDNS image the tag of the CoreDNS module it is built from', () => {
    // The suite's manifests name registry.k8s.io/coredns/coredns:vX; the image built under that
    // name is github.com/coredns/coredns vX, pinned by hack/coredns/go.mod.
    const mod = readFileSync(join(repoRoot, 'hack/coredns/go.mod'), 'utf8');
    const version = /^\s*(?:require )?github\.com\/coredns\/coredns (v\S+)/m.exec(mod)?.[1];
    expect(version).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(corednsImage.name).toBe(`registry.k8s.io/coredns/coredns:${version ?? ''}`);
    const script = readFileSync(join(repoRoot, 'hack/install-node-runtime.sh'), 'utf8');
    expect(script).toContain(`\nCOREDNS_IMAGE=${corednsImage.name}\n`);
  });

  it('rejects malformed env files', () => {
    expect(() => parseEnvFile('NOEQUALS')).toThrow(/malformed/);
    expect(parseEnvFile('# c\n\nA=1\nB=x=y\n')).toEqual({ A: '1', B: 'x=y' });
  });
});

describe('toolPaths', () => {
  const versions = {
    KUBE_VERSION: 'v1.2.3',
    ETCD_VERSION: 'v3',
    NODE_VERSION: '24.0.0',
    MOTO_VERSION: '9.9',
    HELM_VERSION: 'v4.0.0',
    ARGOCD_VERSION: 'v3.0.0',
    GATEWAY_API_VERSION: 'v1.0.0',
  };
  it.each([
    {
      reason: 'XDG cache',
      env: { XDG_CACHE_HOME: '/x' },
      kube: '/x/skylift/kube/v1.2.3',
      venv: '/x/skylift/venv/moto-9.9',
    },
    {
      reason: 'explicit cache dir wins',
      env: { XDG_CACHE_HOME: '/x', SKYLIFT_CACHE_DIR: '/c' },
      kube: '/c/kube/v1.2.3',
      venv: '/c/venv/moto-9.9',
    },
    {
      reason: 'binary dir override',
      env: { SKYLIFT_CACHE_DIR: '/c', SKYLIFT_KUBE_BIN_DIR: '/k' },
      kube: '/k',
      venv: '/c/venv/moto-9.9',
    },
  ])('$reason', ({ env, kube, venv }) => {
    const p = toolPaths(env, versions);
    expect(p.kubeBinDir).toBe(kube);
    expect(p.venvDir).toBe(venv);
    expect(p.gatewayApiDir).toBe(join(p.cacheDir, 'gateway-api', 'v1.0.0'));
  });

  it('finds the Gateway API CRDs and conformance suite where hack/install-gateway-api.sh --print says', () => {
    const env = { ...process.env, SKYLIFT_CACHE_DIR: '/c' };
    const printed = execFileSync(join(repoRoot, 'hack/install-gateway-api.sh'), ['--print'], {
      env,
      encoding: 'utf8',
    });
    const dir = toolPaths(env).gatewayApiDir;
    expect(dir).toBe(`/c/gateway-api/${pinnedVersions().GATEWAY_API_VERSION}`);
    expect(printed.trim().split('\n')).toEqual([join(dir, 'crds'), join(dir, 'conformance.test')]);
  });
});

describe('skyliftImage', () => {
  it('names the image and archive as hack/build-image.sh does, under the chart’s repository and appVersion', () => {
    const env = { ...process.env, SKYLIFT_CACHE_DIR: '/c' };
    const printed = execFileSync(join(repoRoot, 'hack/build-image.sh'), ['print'], { env, encoding: 'utf8' });
    const image = skyliftImage(toolPaths(env));
    expect(printed.trim().split('\n')).toEqual([image.name, image.archive]);
    expect(image.archive).toMatch(/^\/c\/images\/skylift-[^/]+\.oci\.tar$/);
    const values = readFileSync(join(repoRoot, 'deploy/helm/skylift/values.yaml'), 'utf8');
    const chart = readFileSync(join(repoRoot, 'deploy/helm/skylift/Chart.yaml'), 'utf8');
    const repository = /^ {2}repository: (\S+)$/m.exec(values)?.[1];
    const appVersion = /^appVersion: '([^']+)'$/m.exec(chart)?.[1];
    expect(image.name).toBe(`${repository ?? '?'}:${appVersion ?? '?'}`);
  });
});

describe('renderKubeconfig', () => {
  it('writes one cluster, a user and context per identity, first context current', () => {
    const base = { clusterName: 'c', server: 'https://127.0.0.1:1', caPem: 'PEM' };
    const cfg = JSON.parse(
      renderKubeconfig([
        { ...base, user: 'a', token: 't1' },
        { ...base, user: 'b', token: 't2', context: 'ctx-b' },
      ]),
    ) as {
      clusters: unknown[];
      users: { name: string; user: { token: string } }[];
      contexts: { name: string }[];
      'current-context': string;
    };
    expect(cfg.clusters).toHaveLength(1);
    expect(cfg.users.map((u) => u.user.token)).toEqual(['t1', 't2']);
    expect(cfg.contexts.map((c) => c.name)).toEqual(['c-a', 'ctx-b']);
    expect(cfg['current-context']).toBe('c-a');
    expect(() => renderKubeconfig([])).toThrow();
  });
});

describe('tokenAuthFile', () => {
  it('quotes the group list and gives every identity its own token', () => {
    const a = newIdentity('alice', ['g1', 'g2']);
    const b = newIdentity('bob', []);
    expect(a.token).not.toBe(b.token);
    expect(tokenAuthFile([a, b])).toBe(`${a.token},alice,uid-alice,"g1,g2"\n${b.token},bob,uid-bob,""\n`);
  });
});

describe('emulatorEnv', () => {
  it('points the SDK at the endpoint with test credentials', () => {
    expect(emulatorEnv('http://127.0.0.1:9')).toMatchObject({
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_REGION: 'us-east-1',
    });
  });
});
