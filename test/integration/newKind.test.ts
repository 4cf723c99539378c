// A kind defined outside src/ — Queue, an SQS queue (test/support/queueKind/) — added by the steps
// of docs/architecture.md ("Adding a kind"), each checked here on the real apiserver and moto:
// - what make generate renders from a registry that lists it (test/support/queueKind/registry.ts):
//   its CRD, its TeamPolicy guardrail section, the chart's RBAC rules on it and its admission
//   policy, all accepted by kube-apiserver;
// - its Argo CD health check, rendered as a product kind's, through the luahealth runner;
// - the operator's own wiring (parseRunOptions with the kind as the registry, startOperator in
//   this process) running as the limited operator identity with only the RBAC that chart renders:
//   create, drift correction, spec change, delete, trace;
// - its adapter and SDK loaded by its first object and not before (an operator process);
// - its objects served under a TeamPolicy through the tenancy connector: the policy's AWS account,
//   its guardrail refused before any AWS change, and at admission in the same words.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  SQSClient,
  UntagQueueCommand,
} from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { crdFileName } from '../../src/apis/crd.ts';
import { finalizerName, ownershipTagKeys } from '../../src/apis/managed.ts';
import { userTagKeysTag } from '../../src/providers/aws/tags.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { parseRunOptions, UsageError } from '../../src/operator/options.ts';
import { simpleRequest } from '../../dev/http.ts';
import { waitFor } from '../../dev/wait.ts';
import type { ConfiguredKind } from '../../src/kinds/module.ts';
import { allCrds, kinds, teamPolicyDefinition } from '../../src/kinds/registry.ts';
import { startOperator, type RunningOperator } from '../../src/operator/start.ts';
import { createAwsClients } from '../../src/providers/aws/clients.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { ConditionType, getCondition, Reason } from '../../src/runtime/conditions.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot } from '../../dev/paths.ts';
import {
  applyTeamPolicy,
  deleteTeamPolicies,
  policySelector,
  readTeamPolicy,
  testPolicyLabel,
} from '../../dev/teamPolicies.ts';
import { argoCdKinds, configMapKey, healthCheckDir, renderArgoCdFiles } from '../../tools/argocdHealth.ts';
import { helmTemplate } from '../../tools/chart.ts';
import { renderGeneratedFiles } from '../../tools/generatedFiles.ts';
import { chartFor, type GeneratedChart } from '../support/generatedChart.ts';
import { eventsFor, ensureCrd, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { healthCasesIn, luahealthPath, readYaml, runHealthScript } from '../support/luaHealth.ts';
import { isQueueAbsent, queueName } from '../support/queueKind/adapter.ts';
import { queueCrd, queueType, type Queue, type QueueSpec } from '../support/queueKind/api.ts';
import { queueKind } from '../support/queueKind/index.ts';
import { kindsWithQueue } from '../support/queueKind/registry.ts';
import { spawnSkyliftRun, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig, emulatorAccountId, emulatorEnv } from '../../dev/emulator.ts';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}
interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** This file's TeamPolicies' group and its chart release (names of the RBAC objects it makes). */
const group = `newkind-${randomBytes(3).toString('hex')}`;
const release = group;
const fullname = `${release}-skylift`;

let admin: KubeClient;
let sqs: SQSClient;
let ns: string;
let nsTeam: string;
let nsLazy: string;
let op: RunningOperator | undefined;
let spawned: SkyliftProcess | undefined;
let configured: ConfiguredKind;
let chart: GeneratedChart | undefined;
/** The chart generated for the registry with Queue, rendered for this file's namespaces. */
let renderedText: string;
let rendered: Manifest[];
let scratch = '';
let luahealth: string;
/** The Queue health check as make generate renders it for a registry that lists the kind. */
let healthScript: string;

const env = { AWS_REGION: 'us-east-1' };
const ready = (q: Queue | undefined): boolean =>
  getCondition(q?.status?.conditions, ConditionType.Ready)?.status === 'True';

function docs(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
}
function one(all: readonly Manifest[], kind: string, name: string, namespace?: string): Manifest {
  const found = all.filter(
    (m) =>
      m.kind === kind &&
      m.metadata.name === name &&
      (namespace === undefined || m.metadata.namespace === namespace),
  );
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0] as Manifest;
}
const rulesOf = (role: Manifest): PolicyRule[] => (role as unknown as { rules: PolicyRule[] }).rules;

/**
 * Gives the stack's limited operator identity what the chart gives the operator's ServiceAccount:
 * the chart's own Roles (each watched namespace) and tenancy ClusterRole, bound to that user.
 */
async function grantChartRbac(all: readonly Manifest[]): Promise<void> {
  const subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: stackInfo().operatorUser }];
  const roles = all.filter(
    (m) =>
      (m.kind === 'Role' && (m.metadata.name === fullname || m.metadata.name === `${fullname}-teams`)) ||
      (m.kind === 'ClusterRole' && m.metadata.name === `${fullname}-tenancy`),
  );
  const bindings = all
    .filter(
      (m) =>
        (m.kind === 'RoleBinding' &&
          (m.metadata.name === fullname || m.metadata.name === `${fullname}-teams`)) ||
        (m.kind === 'ClusterRoleBinding' && m.metadata.name === `${fullname}-tenancy`),
    )
    // Named apart from the chart's own bindings, which the server-side dry run below creates.
    .map((m) => ({ ...m, metadata: { ...m.metadata, name: `${m.metadata.name}-operator-user` }, subjects }));
  // The kinds' Role in each watched namespace, the teams marker's in the release namespace.
  expect(roles.map((r) => r.kind).sort()).toEqual(['ClusterRole', 'Role', 'Role', 'Role', 'Role']);
  expect(bindings).toHaveLength(5);
  const r = await kubectl(
    stackInfo().adminKubeconfig,
    ['apply', '--server-side', '--field-manager=skylift-test', '-f', '-'],
    [...roles, ...bindings].map((m) => stringify(m)).join('---\n'),
  );
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(async () => {
  const endpoint = stackInfo().awsEndpoint;
  // The operator in this process finds AWS (moto) the way `skylift run` does: from the environment.
  for (const [name, value] of Object.entries(emulatorEnv(endpoint))) vi.stubEnv(name, value);
  admin = kubeClient();
  sqs = new SQSClient(awsClientConfig(endpoint));
  // The CRDs of the registry with Queue: the kinds', Queue's, and TeamPolicy with its section.
  await installCrds(admin, allCrds(kindsWithQueue));
  await ensureCrd(admin, queueCrd(), queueType);
  ns = await newNamespace(admin, 'queue');
  nsTeam = await newNamespace(admin, 'queue-team');
  nsLazy = await newNamespace(admin, 'queue-lazy');

  chart = await chartFor(kindsWithQueue);
  renderedText = await helmTemplate({
    chart: chart.dir,
    release,
    namespace: ns,
    values: { watchNamespaces: [ns, nsTeam, nsLazy], teamPolicySelector: { [testPolicyLabel]: group } },
  });
  rendered = docs(renderedText);
  await grantChartRbac(rendered);

  scratch = await mkdtemp(join(tmpdir(), 'skylift-newkind-'));
  luahealth = await luahealthPath();
  const queueHealth = argoCdKinds([queueKind])[0];
  if (queueHealth === undefined) throw new Error('the Queue kind has no health check');
  healthScript = join(scratch, 'health.lua');
  await writeFile(
    healthScript,
    renderArgoCdFiles(repoRoot, kindsWithQueue).get(`${healthCheckDir(queueHealth)}/health.lua`) ?? '',
  );

  const options = parseRunOptions(
    [
      '--kubeconfig',
      stackInfo().operatorKubeconfig,
      '--namespaces',
      `${ns},${nsTeam}`,
      '--team-policy-selector',
      policySelector(group),
      '--leader-elect=false',
      // Where the chart's Role lets it record that it serves teams: the release namespace.
      '--leader-election-namespace',
      ns,
      '--probe-address',
      '127.0.0.1:0',
      '--cluster-id',
      'test-cluster',
      '--resync-period',
      '2s',
      '--queue-poll-interval',
      '300ms',
      '--shutdown-deadline',
      '5s',
      '--log-level',
      process.env.SKYLIFT_TEST_LOG_LEVEL ?? 'warn',
    ],
    env,
    [queueKind],
  );
  expect(options.kinds.map((k) => k.module.type)).toEqual([queueType]);
  configured = options.kinds[0] as ConfiguredKind;
  const running = startOperator(options);
  op = running;
  // Ready once the manager has started the Queue controller and its informer has listed (which
  // the chart's Roles must allow the operator identity).
  await waitFor(
    async () => {
      const address = running.manager.probeAddress;
      if (address === undefined) return undefined;
      return (await simpleRequest(`http://${address}/readyz`)).status === 200 ? true : undefined;
    },
    { timeoutMs: 30_000, description: 'the operator ready' },
  );
});

afterAll(async () => {
  op?.manager.stop();
  await op?.done;
  await spawned?.stop();
  await deleteTeamPolicies(admin, group);
  await kubectl(stackInfo().adminKubeconfig, [
    'delete',
    'clusterrolebinding,clusterrole',
    `${fullname}-tenancy`,
    `${fullname}-tenancy-operator-user`,
    '--ignore-not-found',
  ]);
  // The product's TeamPolicy CRD again, for the files that follow.
  await installCrds(admin, [teamPolicyDefinition()]);
  await chart?.remove();
  if (scratch !== '') await rm(scratch, { recursive: true, force: true });
  sqs.destroy();
  vi.unstubAllEnvs();
});

async function readQueue(namespace: string, name: string): Promise<Queue | undefined> {
  return readObject<Queue>(admin, queueType, namespace, name);
}

async function createQueue(namespace: string, name: string, spec: QueueSpec): Promise<void> {
  await admin.create(resourcePath(queueType, { namespace }), queueManifest(namespace, name, spec));
}

function queueManifest(namespace: string, name: string, spec: QueueSpec): Manifest {
  return {
    apiVersion: `${queueType.group}/${queueType.version}`,
    kind: queueType.kind,
    metadata: { name, namespace },
    spec,
  };
}

/** Deletes Queue `namespace/name` and waits until it is gone from Kubernetes. */
async function deleteQueue(namespace: string, name: string): Promise<void> {
  await admin.delete(resourcePath(queueType, { namespace, name }));
  await waitFor(async () => ((await readQueue(namespace, name)) === undefined ? true : undefined), {
    timeoutMs: 30_000,
    description: `the Queue ${namespace}/${name} gone from Kubernetes`,
  });
}

async function visibility(url: string): Promise<string | undefined> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }),
  );
  return out.Attributes?.VisibilityTimeout;
}

async function tags(url: string): Promise<Record<string, string>> {
  return (await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags ?? {};
}

/** The queue's URL in the account `client` reaches, or 'absent'. */
async function urlIn(client: SQSClient, name: string): Promise<string> {
  return client.send(new GetQueueUrlCommand({ QueueName: name })).then(
    (out) => out.QueueUrl ?? '',
    (err: unknown) => {
      if (isQueueAbsent(err)) return 'absent';
      throw err;
    },
  );
}

async function eventWith(namespace: string, name: string, reason: string, note: string) {
  return waitFor(
    async () =>
      (await eventsFor(admin, namespace, name)).find((e) => e.reason === reason && e.note.includes(note)),
    { timeoutMs: 30_000, description: `a ${reason} Event mentioning ${JSON.stringify(note)}` },
  );
}

async function metricsOf(address: string | undefined): Promise<string> {
  return (await simpleRequest(`http://${address ?? ''}/metrics`)).body;
}

describe('a kind defined outside src/ (Queue → SQS)', () => {
  it('takes its own flag through parseRunOptions, and only when it is in the registry', () => {
    const kind = queueKind;
    expect(() => parseRunOptions(['--queue-poll-interval', 'soon'], env, [kind])).toThrow(
      /--queue-poll-interval: invalid duration "soon"/,
    );
    expect(() => parseRunOptions([], { ...env, SKYLIFT_QUEUE_POLL_INTERVAL: 'soon' }, [kind])).toThrow(
      UsageError,
    );
    expect(parseRunOptions(['--queue-poll-interval', '1s'], env, [kind]).kinds).toHaveLength(1);
    // The product's registry does not know the flag.
    expect(() => parseRunOptions(['--queue-poll-interval', '1s'], env)).toThrow(UsageError);
  });

  it('is in what make generate renders from a registry that lists it: CRD, TeamPolicy section, the chart’s RBAC and admission policy, all accepted by kube-apiserver', async () => {
    const files = renderGeneratedFiles(repoRoot, kindsWithQueue);
    const crdFile = crdFileName(queueCrd());
    expect(parse(files.get(`crds/${crdFile}`) ?? '')).toEqual(queueCrd());
    expect(files.get(`deploy/helm/skylift/files/crds/${crdFile}`)).toBe(files.get(`crds/${crdFile}`));
    expect(parse(files.get('crds/kustomization.yaml') ?? '')).toMatchObject({
      resources: expect.arrayContaining([crdFile]) as unknown,
    });
    expect(files.get('docs/reference/README.md')).toContain('- [Queue](queue.md)');
    // The TeamPolicy CRD carries the kind's guardrail section and names the kind.
    const teamPolicy = teamPolicyDefinition(kindsWithQueue).spec.versions[0]?.schema.openAPIV3Schema;
    expect(teamPolicy?.description).toContain('DNSRecords, MyIngresses, ManagedDBs and Queues may use');
    expect(
      teamPolicy?.properties?.spec?.properties?.guardrails?.properties?.queues?.properties,
    ).toHaveProperty('maxVisibilityTimeoutSeconds');

    // The operator's Role in every watched namespace: the kind's resource and its status, beside
    // the product's kinds; the aggregated edit and view roles have it too.
    const product = kinds.map((k) => k.type.plural);
    for (const namespace of [ns, nsTeam, nsLazy]) {
      const rules = rulesOf(one(rendered, 'Role', fullname, namespace));
      expect(rules).toContainEqual({
        apiGroups: ['aws.skylift.dev'],
        resources: product,
        verbs: ['get', 'list', 'watch', 'patch'],
      });
      expect(rules).toContainEqual({
        apiGroups: [queueType.group],
        resources: ['queues'],
        verbs: ['get', 'list', 'watch', 'patch'],
      });
      expect(rules).toContainEqual({
        apiGroups: [queueType.group],
        resources: ['queues/status'],
        verbs: ['get', 'patch'],
      });
    }
    for (const role of [`${fullname}-edit`, `${fullname}-view`]) {
      const rule = rulesOf(one(rendered, 'ClusterRole', role)).find((r) =>
        r.apiGroups.includes(queueType.group),
      );
      expect(rule?.resources, role).toEqual(['queues']);
    }
    // Its CRD and its admission policy (on queues, with TeamPolicy as the param) come with the chart.
    expect(one(rendered, 'CustomResourceDefinition', `queues.${queueType.group}`)).toBeDefined();
    const vap = one(rendered, 'ValidatingAdmissionPolicy', `${fullname}-queues`);
    expect(vap).toMatchObject({
      spec: {
        paramKind: { apiVersion: 'aws.skylift.dev/v1alpha1', kind: 'TeamPolicy' },
        matchConstraints: { resourceRules: [{ apiGroups: [queueType.group], resources: ['queues'] }] },
      },
    });
    expect(one(rendered, 'ValidatingAdmissionPolicyBinding', vap.metadata.name)).toBeDefined();

    const r = await kubectl(
      stackInfo().adminKubeconfig,
      ['apply', '--server-side', '--field-manager=skylift-test', '--dry-run=server', '-f', '-'],
      renderedText,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `customresourcedefinition.apiextensions.k8s.io/queues.${queueType.group} serverside-applied (server dry run)`,
    );
    expect(r.stdout).toContain(
      `validatingadmissionpolicy.admissionregistration.k8s.io/${vap.metadata.name} serverside-applied (server dry run)`,
    );
  });

  it('has an Argo CD health check rendered like a product kind’s, which gives each case’s status in luahealth', async () => {
    const [k] = argoCdKinds([queueKind]);
    expect(k).toMatchObject({ group: queueType.group, kind: queueType.kind });
    if (k === undefined) return;
    const files = renderArgoCdFiles(repoRoot, kindsWithQueue);
    expect(healthCheckDir(k)).toBe('deploy/argocd/resource_customizations/test.skylift.dev/Queue');
    const cm = parse(files.get('deploy/argocd/argocd-cm.yaml') ?? '') as { data: Record<string, string> };
    expect(cm.data[configMapKey(k)]).toBe(await readFile(healthScript, 'utf8'));
    const dir = join(repoRoot, 'test/support/queueKind/argocd');
    const cases = healthCasesIn(dir);
    expect(new Set(cases.map((c) => c.healthStatus.status))).toEqual(
      new Set(['Healthy', 'Progressing', 'Degraded']),
    );
    for (const c of cases) {
      const obj = readYaml(join(dir, c.inputPath));
      expect(await runHealthScript(luahealth, healthScript, obj), c.inputPath).toEqual(c.healthStatus);
    }
  });

  it('creates the queue, corrects drift, follows the spec, and deletes it, with only the RBAC the chart renders', async () => {
    const name = 'orders';
    // No SQS client before the first Queue connects: the adapter is built then (adapterFor.ts).
    expect(await metricsOf(op?.manager.probeAddress)).not.toMatch(/service="sqs"/);
    const spec: QueueSpec = { visibilityTimeoutSeconds: 45, tags: { team: 'payments' } };
    await createQueue(ns, name, spec);

    // Create: Ready, identity in status, the finalizer, the queue in SQS as specified and owned.
    const created = await waitFor(
      async () => {
        const q = await readQueue(ns, name);
        return ready(q) && typeof q?.status?.arn === 'string' ? q : undefined;
      },
      { timeoutMs: 30_000, description: 'the Queue Ready with its ARN' },
    );
    const uid = created.metadata.uid ?? '';
    expect(uid).not.toBe('');
    expect(created.metadata.finalizers).toContain(finalizerName);
    expect(getCondition(created.status?.conditions, ConditionType.Synced)?.status).toBe('True');
    // No TeamPolicy serves this namespace: the operator's own account, as the connector found it.
    expect(created.status?.location).toEqual({ account: emulatorAccountId, region: 'us-east-1' });
    const url = created.status?.url;
    if (typeof url !== 'string') throw new Error(`status.url is ${JSON.stringify(url)}`);
    expect(url.endsWith(`/${queueName(ns, name, uid)}`)).toBe(true);
    expect(await sqs.send(new GetQueueUrlCommand({ QueueName: queueName(ns, name, uid) }))).toMatchObject({
      QueueUrl: url,
    });
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn', 'VisibilityTimeout'] }),
    );
    expect(attrs.Attributes).toMatchObject({ VisibilityTimeout: '45', QueueArn: created.status?.arn });
    expect(await tags(url)).toEqual({
      team: 'payments',
      [userTagKeysTag]: 'team',
      [ownershipTagKeys.owner]: `${ns}/${name}`,
      [ownershipTagKeys.uid]: uid,
      [ownershipTagKeys.cluster]: 'test-cluster',
    });
    await eventWith(ns, name, 'Created', `created queue ${queueName(ns, name, uid)}`);
    // The kind's own client was adopted by the plumbing: its calls are counted like the product's.
    const metrics = await metricsOf(op?.manager.probeAddress);
    expect(metrics).toMatch(
      /skylift_aws_api_calls_total\{service="sqs",operation="CreateQueue",outcome="success",account="own"\} [1-9]/,
    );
    expect(metrics).toMatch(/skylift_aws_client_rate_limit\{service="sqs",account="own"\} /);

    // The rest of the contract, as `skylift trace`, `skylift dev` and Argo CD would use it.
    const aws = createAwsClients({
      region: 'us-east-1',
      clock: realClock,
      metrics: new Metrics(),
      endpoint: stackInfo().awsEndpoint,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    try {
      const [node] = await configured.trace(created, { kube: admin, aws, now: Date.now() });
      expect(node).toMatchObject({ kind: 'SQSQueue', name: url, status: 'exists', ready: true });
      expect(node?.details).toContain('visibilityTimeout=45s');
    } finally {
      aws.destroy();
    }
    expect(configured.module.summarize(created, ns).join('\n')).toContain(url);
    expect(await runHealthScript(luahealth, healthScript, created)).toEqual({
      status: 'Healthy',
      message: `SQS queue ${url} is in sync (visibility timeout 45 s)`,
    });

    // Drift: changed behind Skylift's back, put back within the resync period, with a Warning Event.
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: '300' } }),
    );
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ['team'] }));
    // One Event or two, depending on whether a resync falls between the two calls.
    const drift = await eventWith(ns, name, 'DriftCorrected', 'visibilityTimeoutSeconds 300 → 45');
    expect(drift.type).toBe('Warning');
    expect((await eventWith(ns, name, 'DriftCorrected', 'tags team')).type).toBe('Warning');
    await waitFor(async () => ((await visibility(url)) === '45' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'VisibilityTimeout back at 45',
    });
    expect((await tags(url)).team).toBe('payments');

    // Spec change: SQS follows, the new generation is observed, an Updated (not drift) Event.
    await admin.patch(
      resourcePath(queueType, { namespace: ns, name }),
      { spec: { visibilityTimeoutSeconds: 120, tags: { team: null, env: 'prod' } } },
      'merge',
    );
    await waitFor(async () => ((await visibility(url)) === '120' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'VisibilityTimeout 120 in SQS',
    });
    await waitFor(
      async () => {
        const q = await readQueue(ns, name);
        return ready(q) && q?.status?.observedGeneration === 2 ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'generation 2 observed and Ready' },
    );
    const updated = await eventWith(ns, name, 'Updated', 'visibilityTimeoutSeconds 45 → 120');
    expect(updated.type).toBe('Normal');
    // A tag dropped from the spec leaves the queue; the new one and the record of the keys follow.
    expect(await tags(url)).toEqual({
      env: 'prod',
      [userTagKeysTag]: 'env',
      [ownershipTagKeys.owner]: `${ns}/${name}`,
      [ownershipTagKeys.uid]: uid,
      [ownershipTagKeys.cluster]: 'test-cluster',
    });

    // Delete: the queue goes, then the finalizer, then the CR.
    await deleteQueue(ns, name);
    expect(await urlIn(sqs, queueName(ns, name, uid))).toBe('absent');
    await eventWith(ns, name, 'Deleted', 'deleted the AWS resource');
  });

  it('loads its adapter and the SQS SDK with its first object, not before (an operator process)', async () => {
    const log = join(scratch, 'modules.log');
    const hook = pathToFileURL(join(repoRoot, 'test/support/recordModules.ts')).href;
    spawned = spawnSkyliftRun({
      entry: join(repoRoot, 'test/support/queueKind/operator.ts'),
      kubeconfig: stackInfo().operatorKubeconfig,
      args: [
        '--namespaces',
        nsLazy,
        '--team-policy-selector',
        policySelector(group),
        '--leader-elect=false',
        '--leader-election-namespace',
        ns,
        '--queue-poll-interval',
        '300ms',
      ],
      env: {
        ...emulatorEnv(stackInfo().awsEndpoint),
        NODE_OPTIONS: `--import=${hook}`,
        SKYLIFT_LOADED_MODULES_LOG: log,
      },
    });
    const running = spawned;
    const address = await waitFor(() => probeAddress(running.output()), {
      timeoutMs: 30_000,
      description: 'the operator process to log its probe address',
    });
    await waitFor(
      async () => ((await simpleRequest(`http://${address}/readyz`)).status === 200 ? true : undefined),
      { timeoutMs: 30_000, description: `the operator process ready: ${running.output()}` },
    );
    const own = (path: string): string => pathToFileURL(join(repoRoot, path)).href;
    const loaded = async (): Promise<string[]> => (await readFile(log, 'utf8')).split('\n');
    const sdks = (urls: readonly string[]): string[] =>
      [
        '@aws-sdk/client-sqs',
        '@aws-sdk/client-route-53',
        '@aws-sdk/client-elastic-load-balancing-v2',
        '@aws-sdk/client-rds',
      ].filter((p) => urls.some((u) => u.includes(`/node_modules/${p}/`)));
    const lazy = ['adapterFor.ts', 'adapter.ts', 'trace.ts'].map((f) => own(`test/support/queueKind/${f}`));

    const before = await loaded();
    expect(before).toContain(own('test/support/queueKind/controller.ts'));
    expect(before).toContain(own('src/tenancy/connector.ts'));
    expect(lazy.filter((u) => before.includes(u))).toEqual([]);
    expect(sdks(before)).toEqual([]);

    await createQueue(nsLazy, 'first', {});
    await waitFor(async () => (ready(await readQueue(nsLazy, 'first')) ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the first Queue Ready',
    });
    const after = await loaded();
    // Its adapter and its SDK, and nothing of the kinds it has no object of (nor its trace).
    expect(lazy.filter((u) => after.includes(u))).toEqual(lazy.slice(0, 2));
    expect(sdks(after)).toEqual(['@aws-sdk/client-sqs']);

    await deleteQueue(nsLazy, 'first');
    await running.stop();
    expect(running.child.exitCode, running.output()).toBe(0);
  });

  it('serves its objects under a TeamPolicy through the tenancy connector: the policy’s account, its guardrail before any AWS change and at admission', async () => {
    const account = '210000000042';
    const policy = `${group}-team`;
    const applied = await applyTeamPolicy(admin, group, policy, {
      namespaces: { names: [nsTeam] },
      aws: { roleArn: `arn:aws:iam::${account}:role/skylift-${group}` },
      guardrails: { queues: { maxVisibilityTimeoutSeconds: 60 } },
    });
    // Kept by the apiserver: the TeamPolicy CRD of this registry has the kind's section.
    expect(applied.spec.guardrails?.queues).toEqual({ maxVisibilityTimeoutSeconds: 60 });
    await waitFor(
      async () =>
        (await readTeamPolicy(admin, policy)).status?.selectedNamespaces?.includes(nsTeam) === true
          ? true
          : undefined,
      { timeoutMs: 30_000, description: `TeamPolicy ${policy} serving ${nsTeam}` },
    );

    await createQueue(nsTeam, 'allowed', { visibilityTimeoutSeconds: 45 });
    await createQueue(nsTeam, 'too-long', { visibilityTimeoutSeconds: 300 });

    // Allowed: created with the policy's role, in its account, and recorded there.
    const allowed = await waitFor(
      async () => {
        const q = await readQueue(nsTeam, 'allowed');
        return ready(q) && typeof q?.status?.url === 'string' ? q : undefined;
      },
      { timeoutMs: 30_000, description: 'the allowed Queue Ready' },
    );
    expect(allowed.status?.location).toEqual({ account, region: 'us-east-1' });
    const allowedName = queueName(nsTeam, 'allowed', allowed.metadata.uid ?? '');
    const team = await sqsAs(`arn:aws:iam::${account}:role/skylift-${group}`);
    try {
      expect(await urlIn(team, allowedName)).toBe(allowed.status?.url);
      expect(await urlIn(sqs, allowedName)).toBe('absent');
      expect(await metricsOf(op?.manager.probeAddress)).toMatch(
        new RegExp(
          `skylift_aws_api_calls_total\\{service="sqs",operation="CreateQueue",outcome="success",account="${account}"\\} [1-9]`,
        ),
      );

      // Too long for the policy: refused before any AWS change, naming the policy, field and limit.
      const refusal = `TeamPolicy ${policy} forbids spec.visibilityTimeoutSeconds: 300 seconds is above the longest visibility timeout this namespace may use (60 seconds); lower spec.visibilityTimeoutSeconds, or ask the platform team to raise spec.guardrails.queues.maxVisibilityTimeoutSeconds`;
      const tooLong = await waitFor(
        async () => {
          const q = await readQueue(nsTeam, 'too-long');
          const synced = getCondition(q?.status?.conditions, ConditionType.Synced);
          return synced?.status === 'False' && synced.reason === Reason.Forbidden ? q : undefined;
        },
        { timeoutMs: 30_000, description: 'the too-long Queue Forbidden' },
      );
      expect(getCondition(tooLong.status?.conditions, ConditionType.Synced)?.message).toBe(refusal);
      expect((await eventWith(nsTeam, 'too-long', 'Forbidden', refusal)).type).toBe('Warning');
      const tooLongName = queueName(nsTeam, 'too-long', tooLong.metadata.uid ?? '');
      expect(await urlIn(team, tooLongName)).toBe('absent');
      expect(await urlIn(sqs, tooLongName)).toBe('absent');

      // At admission, the chart's policy for the kind refuses the same spec in the same words.
      await refusedAtAdmission(queueManifest(nsTeam, 'probe', { visibilityTimeoutSeconds: 300 }), refusal);

      await deleteQueue(nsTeam, 'too-long');
      await deleteQueue(nsTeam, 'allowed');
      expect(await urlIn(team, allowedName)).toBe('absent');
    } finally {
      team.destroy();
      await deleteTeamPolicies(admin, group);
    }
  });
});

/** The address a `skylift run` process logged when its probe server started listening. */
function probeAddress(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; address?: string };
    if (entry.msg?.startsWith('serving /metrics') === true) return entry.address;
  }
  return undefined;
}

/** An SQS client with the credentials of `roleArn` (moto puts what it makes in the role's account). */
async function sqsAs(roleArn: string): Promise<SQSClient> {
  const config = awsClientConfig(stackInfo().awsEndpoint);
  const sts = new STSClient(config);
  try {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: `test-${group}` }));
    const c = out.Credentials;
    if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined || c.SessionToken === undefined)
      throw new Error('moto answered AssumeRole without credentials');
    return new SQSClient({
      ...config,
      credentials: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
      },
    });
  } finally {
    sts.destroy();
  }
}

/**
 * Installs the chart's admission policy and binding for queues (rendered for the registry with
 * Queue), checks that creating `obj` is refused with `message` and that the same object within the
 * policy is admitted (server-side dry runs: nothing is created), then removes them.
 */
async function refusedAtAdmission(obj: Manifest, message: string): Promise<void> {
  const admission = rendered.filter(
    (m) => m.kind.startsWith('ValidatingAdmissionPolicy') && m.metadata.name === `${fullname}-queues`,
  );
  expect(admission.map((m) => m.kind).sort()).toEqual([
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ]);
  const kc = stackInfo().adminKubeconfig;
  const applied = await kubectl(
    kc,
    ['apply', '--server-side', '--field-manager=skylift-test', '-f', '-'],
    admission.map((m) => stringify(m)).join('---\n'),
  );
  expect(applied.code, applied.stderr).toBe(0);
  const dryRun = (m: Manifest) => kubectl(kc, ['create', '--dry-run=server', '-f', '-'], stringify(m));
  try {
    // The apiserver enforces a new policy a moment after it is stored: until it refuses, look again.
    const refused = await waitFor(
      async () => {
        const r = await dryRun(obj);
        return r.code !== 0 ? r.stderr : undefined;
      },
      { timeoutMs: 30_000, description: 'the queues admission policy enforced' },
    );
    expect(refused).toContain(`denied request: ${message}`);
    const within = structuredClone(obj) as Manifest & { spec: QueueSpec };
    within.spec.visibilityTimeoutSeconds = 60;
    const admitted = await dryRun(within);
    expect(admitted.stderr).toBe('');
    expect(admitted.code).toBe(0);
  } finally {
    await kubectl(kc, [
      'delete',
      'validatingadmissionpolicybinding,validatingadmissionpolicy',
      `${fullname}-queues`,
      '--ignore-not-found',
    ]);
  }
}
