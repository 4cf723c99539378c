// The operator process never loads @kubernetes/client-node (issue 16: importing it cost the process
// ~73 MiB RSS); Skylift reads kubeconfigs itself (src/runtime/kube/kubeconfig*.ts). Nor undici
// (~28 MiB): the Kubernetes client speaks node:https (src/runtime/kube/transport.ts). Checked on what
// a real Node process resolves, so a package that pulled either in would be seen too; the
// architecture test forbids the client-node import in src/ statically. Likewise the SDKs of EC2
// (~48 MiB), ACM and STS are loaded only by the calls that need them (src/providers/aws/lazyClient.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../dev/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'skylift-imports-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const hook = pathToFileURL(join(repoRoot, 'test', 'support', 'recordModules.ts')).href;
let runs = 0;

/** The module URLs a Node process started with `args` resolved before it exited, and its output. */
function recordedRun(args: readonly string[]): { urls: string[]; stdout: string } {
  const out = join(dir, `loaded-${++runs}.json`);
  const r = spawnSync(process.execPath, ['--import', hook, ...args], {
    cwd: repoRoot,
    env: { ...process.env, SKYLIFT_LOADED_MODULES: out },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.error, r.stderr).toBeUndefined();
  expect(r.status, r.stderr).toBe(0);
  return { urls: JSON.parse(readFileSync(out, 'utf8')) as string[], stdout: r.stdout };
}

/** The module URLs a Node process started with `args` resolved before it exited. */
const modulesLoadedBy = (args: readonly string[]): string[] => recordedRun(args).urls;

const fromPackage = (urls: readonly string[], name: string): string[] =>
  urls.filter((u) => u.includes(`/node_modules/${name}/`));
const own = (path: string): string => pathToFileURL(join(repoRoot, path)).href;

/**
 * The SDK packages loaded only on first use: every AWS SDK client the product depends on (a new
 * kind's SDK, once in package.json `dependencies`, is checked here without another edit).
 */
const lazySdks = Object.keys(
  (
    JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    }
  ).dependencies,
).filter((name) => name.startsWith('@aws-sdk/client-'));
/** The SDKs loaded only by some calls of a kind (its lookups, TeamPolicies), not by its adapter. */
const lookupSdks = [
  '@aws-sdk/client-ec2',
  '@aws-sdk/client-acm',
  '@aws-sdk/client-sts',
  '@aws-sdk/client-wafv2',
  '@aws-sdk/client-resource-groups-tagging-api',
] as const;
/** Which of `among` (default {@link lazySdks}) a process loaded. */
const lazySdksIn = (urls: readonly string[], among: readonly string[] = lazySdks): string[] =>
  among.filter((p) => fromPackage(urls, p).length > 0);

describe('the operator process', () => {
  it('has the SDKs of every kind and lookup among the packages checked', () => {
    expect(lazySdks).toEqual(
      expect.arrayContaining([
        '@aws-sdk/client-route-53',
        '@aws-sdk/client-elastic-load-balancing-v2',
        '@aws-sdk/client-rds',
        ...lookupSdks,
      ]),
    );
  });

  it('`skylift run --help` loads neither client-node, undici nor the dev stack (nor the yaml parser it uses)', () => {
    const urls = modulesLoadedBy([join(repoRoot, 'src', 'cli', 'main.ts'), 'run', '--help']);
    expect(urls).toContain(own('src/operator/start.ts'));
    expect(urls).toContain(own('src/runtime/kube/client.ts'));
    expect(fromPackage(urls, '@kubernetes/client-node')).toEqual([]);
    expect(fromPackage(urls, 'undici')).toEqual([]);
    expect(urls.filter((u) => u.startsWith(own('dev/')))).toEqual([]);
    expect(fromPackage(urls, 'yaml')).toEqual([]);
    expect(lazySdksIn(urls)).toEqual([]);
  });

  it('importing src/operator/start.ts loads no client-node, no undici and no AWS SDK', () => {
    const urls = modulesLoadedBy([
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(own('src/operator/start.ts'))});`,
    ]);
    expect(urls).toContain(own('src/runtime/kube/kubeconfigLoad.ts'));
    expect(urls).toContain(own('src/runtime/kube/transport.ts'));
    expect(fromPackage(urls, '@kubernetes/client-node')).toEqual([]);
    expect(urls).toContain(own('src/providers/aws/lazyClient.ts'));
    expect(lazySdksIn(urls)).toEqual([]);
    expect(fromPackage(urls, '@smithy/core')).toEqual([]);
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

/**
 * A script that runs `body` with `aws`, a set of AWS clients whose every call fails at once
 * (nothing listens on the endpoint; one attempt), and `settle(p)`, which prints how `p` ended.
 */
function withAwsClients(body: string): string[] {
  const imports = {
    clients: own('src/providers/aws/clients.ts'),
    metrics: own('src/runtime/metrics.ts'),
    clock: own('src/runtime/clock.ts'),
    accounts: own('src/tenancy/accounts.ts'),
    loadBalancer: own('src/kinds/myingress/loadBalancer.ts'),
    describe: own('src/providers/elbv2/describeBatcher.ts'),
    guardrails: own('src/kinds/myingress/guardrails.ts'),
    webAcl: own('src/kinds/myingress/webAcl.ts'),
    securityGroup: own('src/kinds/myingress/securityGroup.ts'),
    tagged: own('src/providers/aws/taggedResources.ts'),
  };
  return [
    '--input-type=module',
    '-e',
    `
    const { createAwsClients } = await import(${JSON.stringify(imports.clients)});
    const { Metrics } = await import(${JSON.stringify(imports.metrics)});
    const { realClock } = await import(${JSON.stringify(imports.clock)});
    const { AwsAccounts } = await import(${JSON.stringify(imports.accounts)});
    const { LoadBalancers } = await import(${JSON.stringify(imports.loadBalancer)});
    const { LoadBalancerDescriber, TagDescriber } = await import(${JSON.stringify(imports.describe)});
    const { checkMyIngress, guardLookups } = await import(${JSON.stringify(imports.guardrails)});
    const { WebAcls, wafv2Of } = await import(${JSON.stringify(imports.webAcl)});
    const { SecurityGroups } = await import(${JSON.stringify(imports.securityGroup)});
    const { taggedResourcesOf } = await import(${JSON.stringify(imports.tagged)});
    const clientOptions = {
      clock: realClock,
      metrics: new Metrics(),
      endpoint: 'http://127.0.0.1:1',
      maxAttempts: 1,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    };
    const aws = createAwsClients({ ...clientOptions, region: 'us-east-1' });
    const accounts = new AwsAccounts({ own: aws, clientOptions });
    const settle = (p) => p.then(() => console.log('ok'), (e) => console.log('failed: ' + e.message));
    const elbv2 = await aws.elbv2();
    const loadBalancers = new LoadBalancers({
      elbv2,
      elbv2Create: await aws.elbv2Create(),
      ec2: () => aws.ec2(),
      describer: new LoadBalancerDescriber(elbv2, realClock),
      tagDescriber: new TagDescriber(elbv2, realClock),
    });
    const ctx = { ownership: { cluster: 'c', owner: 'shop/web', uid: 'u1' }, clock: realClock };
    const ingress = (spec) => ({ metadata: { namespace: 'shop', name: 'web', uid: 'u1' }, spec: { listeners: [], ...spec } });
    const policy = (loadBalancers, aws) => ({
      metadata: { name: 'team' },
      spec: { namespaces: { names: ['shop'] }, guardrails: { loadBalancers }, ...(aws ? { aws } : {}) },
    });
    try {
      ${body}
    } finally {
      accounts.destroy();
      aws.destroy();
    }
    `,
  ];
}

describe('the AWS SDKs loaded on first use (EC2, ACM, STS, WAFv2, Tagging)', () => {
  const subnets = "['subnet-0a', 'subnet-0b']";
  it.each([
    {
      reason: 'building the clients and serving a namespace without a TeamPolicy calls none of them',
      body: 'await settle(accounts.clientsFor(undefined));',
      says: /^ok$/,
      loads: [],
    },
    {
      reason: 'a MyIngress load balancer created in listed subnets and given groups needs no EC2',
      body: `await settle(loadBalancers.create(ingress({ subnets: ${subnets} }), ctx, 'web', [], { subnets: ${subnets}, securityGroups: ['sg-0a'] }));`,
      says: /^failed: create load balancer web/,
      loads: [],
    },
    {
      reason: 'a MyIngress created by subnetSelector finds its subnets in EC2',
      body: "await settle(loadBalancers.subnets(ingress({ subnetSelector: { tags: { tier: 'web' } } })));",
      says: /^failed: find subnets by tag/,
      loads: ['@aws-sdk/client-ec2'],
    },
    {
      reason: 'the managed security group part, built and unused (spec.securityGroups given), loads no EC2',
      body: "new SecurityGroups({ elbv2, ec2: () => aws.ec2(), pollMs: 1000 }); console.log('ok');",
      says: /^ok$/,
      loads: [],
    },
    {
      reason: 'looking for the managed security group asks EC2',
      body: `await settle(new SecurityGroups({ elbv2, ec2: () => aws.ec2(), pollMs: 1000 }).find(ingress({ subnets: ${subnets} })));`,
      says: /^failed: find the managed security group/,
      loads: ['@aws-sdk/client-ec2'],
    },
    {
      reason: 'the web ACL part of the MyIngress adapter, built and unused (no spec.waf), loads no WAFv2',
      body: "new WebAcls({ elbv2, wafv2: wafv2Of(aws) }); console.log('ok');",
      says: /^ok$/,
      loads: [],
    },
    {
      reason: "reading a load balancer's web ACL (spec.waf) loads WAFv2",
      body: "await settle(new WebAcls({ elbv2, wafv2: wafv2Of(aws) }).attached('arn:aws:elasticloadbalancing:us-east-1:111122223333:loadbalancer/app/web/1'));",
      says: /^failed: read web ACL of load balancer/,
      loads: ['@aws-sdk/client-wafv2'],
    },
    {
      reason: 'the lookups by tag, built and unused, load no Tagging API SDK',
      body: "taggedResourcesOf(aws); console.log('ok');",
      says: /^ok$/,
      loads: [],
    },
    {
      reason: 'finding target groups by ownership tag (a full look, a deletion) loads the Tagging API SDK',
      body: "await settle(taggedResourcesOf(aws).find('find target groups by ownership tag', { resourceTypes: ['elasticloadbalancing:targetgroup'], tags: { 'skylift.dev/uid': 'u1' } }));",
      says: /^failed: find target groups by ownership tag/,
      loads: ['@aws-sdk/client-resource-groups-tagging-api'],
    },
    {
      reason: 'a TeamPolicy check that looks nothing up (scheme, subnets by ID against IDs)',
      body: `await settle(checkMyIngress(policy({ schemes: ['internal'], subnets: { ids: ${subnets} } }), ingress({ scheme: 'internal', subnets: ${subnets} }).spec, guardLookups(aws)));`,
      says: /^ok$/,
      loads: [],
    },
    {
      reason: 'a TeamPolicy allowing subnets by tag, checked against a selector, asks EC2',
      body: "await settle(checkMyIngress(policy({ subnets: { tags: { team: 'a' } } }), ingress({ subnetSelector: { tags: { tier: 'web' } } }).spec, guardLookups(aws)));",
      says: /^failed: find subnets by tag for the TeamPolicy check/,
      loads: ['@aws-sdk/client-ec2'],
    },
    {
      reason: 'a TeamPolicy allowing certificates by tag asks ACM for an unlisted certificate',
      body: `await settle(checkMyIngress(policy({ certificates: { tags: { team: 'a' } } }), ingress({ subnets: ${subnets}, listeners: [{ port: 443, protocol: 'HTTPS', certificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/x' }] }).spec, guardLookups(aws)));`,
      says: /^failed: read certificate tags for the TeamPolicy check/,
      loads: ['@aws-sdk/client-acm'],
    },
    {
      reason: "the operator's own account (status.location) is asked of STS GetCallerIdentity",
      body: 'await settle(accounts.accountOf(aws));',
      says: /^failed: /,
      loads: ['@aws-sdk/client-sts'],
    },
    {
      reason: "a TeamPolicy's role is assumed with STS",
      body: "await settle(accounts.clientsFor(policy({}, { roleArn: 'arn:aws:iam::111122223333:role/team' })));",
      says: /^failed: TeamPolicy team: cannot assume role/,
      loads: ['@aws-sdk/client-sts'],
    },
  ])('$reason', ({ body, says, loads }) => {
    const { urls, stdout } = recordedRun(withAwsClients(body));
    expect(stdout.trim()).toMatch(says);
    expect(urls).toContain(own('src/providers/aws/lazyClient.ts'));
    // The script imports the MyIngress parts it drives, and with them the ELBv2 SDK.
    expect(lazySdksIn(urls, lookupSdks)).toEqual(loads);
  });
});
