// Argo CD, for real: its application controller and repo server (built from the
// Go module proxy by hack/install-argocd.sh) sync examples/dnsrecord.yaml,
// myingress.yaml and manageddb.yaml from a local Git repository (file://) into a namespace where
// `skylift run` works on them, with Skylift's health checks installed into
// argocd-cm the way docs/argocd.md says. Route 53 is held PENDING by the AWS
// proxy until the test lets go, so Progressing is observed, not raced.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPendingAnnotation, finalizerName } from '../../src/apis/managed.ts';
import { startArgoCd, type ArgoCd } from '../../dev/argocd.ts';
import { argoCdNamespace, installArgoCd } from '../../dev/argocdInstall.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { emulatorCredentials, awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot, toolPaths } from '../../dev/paths.ts';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';
import type { AwsFaultProxy, InstalledRule } from '../../dev/awsFaultProxy.ts';
import { ensureZone, listRecords, route53At } from '../support/dns.ts';
import { LocalGitRepo } from '../support/gitRepo.ts';
import { kubectl, type KubectlResult } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

/** What the test reads of an Application (argoproj.io/v1alpha1). */
interface Application {
  status?: {
    sync?: { status?: string; revision?: string };
    health?: { status?: string; message?: string };
    reconciledAt?: string;
    operationState?: { phase?: string; message?: string; syncResult?: { revision?: string } };
    history?: { id: number; revision?: string }[];
    conditions?: { type: string; message: string }[];
    resources?: {
      group?: string;
      kind: string;
      name: string;
      status?: string;
      health?: { status?: string; message?: string };
    }[];
  };
}

const appName = 'skylift-examples';
const appPath = `/apis/argoproj.io/v1alpha1/namespaces/${argoCdNamespace}/applications/${appName}`;
/** Seconds between Argo CD's refreshes of the Application (Git polled, live state compared). */
const reconciliationSeconds = 5;
/** The stack's apiserver as an Argo CD cluster (Argo CD runs outside it: no in-cluster destination). */
const clusterName = 'skylift-test';
/** The Skylift objects of examples/dnsrecord.yaml, myingress.yaml and manageddb.yaml. */
const exampleObjects = [
  'DNSRecord/docs',
  'DNSRecord/site-verification',
  'DNSRecord/www',
  'ManagedDB/orders',
  'MyIngress/shop',
];
const skyliftTypes = 'dnsrecords.aws.skylift.dev,myingresses.aws.skylift.dev,manageddbs.aws.skylift.dev';

let ns: string;
let operator: SkyliftProcess | undefined;
let proxy: AwsFaultProxy | undefined;
let argocd: ArgoCd | undefined;
let repo: LocalGitRepo;
let firstRevision: string;
let zoneId: string;

/** Route 53 answers every change PENDING while this rule is installed. */
let route53Held: InstalledRule | undefined;

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-argocd');
  const endpoint = stackInfo().awsEndpoint;
  zoneId = await ensureZone(route53At(endpoint), 'example.com');
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  try {
    await ensureElbSubnets(ec2, emulatorCredentials.region);
  } finally {
    ec2.destroy();
  }
  proxy = await startFaultProxy();
  route53Held = proxy.inject({
    service: 'route53',
    operation: /^(GetChange|ChangeResourceRecordSets)$/,
    fault: {
      kind: 'rewrite',
      rewrite: (body) => body.replace(/<Status>INSYNC<\/Status>/g, '<Status>PENDING</Status>'),
    },
  });
  operator = spawnSkylift(ns, proxy.endpoint, ['--route53-batch-window', '300ms']);

  const argocdDir = toolPaths().argocdDir;
  await installArgoCd(admin, {
    crdDir: join(argocdDir, 'crds'),
    cluster: {
      name: clusterName,
      server: stackInfo().server,
      bearerToken: stackInfo().adminToken,
      caPem: stackInfo().caPem,
    },
  });
  // The health checks, installed exactly as docs/argocd.md tells a user to.
  const patched = await kc([
    'patch',
    'configmap',
    'argocd-cm',
    '-n',
    argoCdNamespace,
    '--type',
    'merge',
    '--patch-file',
    join(repoRoot, 'deploy/argocd/argocd-cm.yaml'),
  ]);
  expect(patched.code, patched.stderr).toBe(0);
  argocd = await startArgoCd({
    dir: join(stackInfo().dir, 'argocd'),
    kubeconfig: stackInfo().adminKubeconfig,
    reconciliationSeconds,
    // Each resource's health in the Application's status, so the test can read it per object.
    controllerArgs: ['--persist-resource-health'],
  });

  repo = await LocalGitRepo.create(join(stackInfo().dir, 'argocd', 'git'));
  firstRevision = await repo.commit(
    {
      'examples/dnsrecord.yaml': await readFile(join(repoRoot, 'examples/dnsrecord.yaml'), 'utf8'),
      'examples/myingress.yaml': await readFile(join(repoRoot, 'examples/myingress.yaml'), 'utf8'),
      'examples/manageddb.yaml': await readFile(join(repoRoot, 'examples/manageddb.yaml'), 'utf8'),
    },
    'Skylift examples',
  );
  await waitFor(() => (operator?.output().includes('controllers started') === true ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start',
  });
}, 180_000);

afterAll(async () => {
  // Argo CD first, so that nothing syncs the objects back while they are deleted.
  await argocd?.stop();
  if (operator !== undefined) {
    await kc(['delete', skyliftTypes, '--all', '-n', ns, '--timeout=60s']);
  }
  await operator?.stop();
  await proxy?.stop();
});

function kc(args: readonly string[], input?: string): Promise<KubectlResult> {
  return kubectl(stackInfo().adminKubeconfig, args, input);
}

async function readApp(): Promise<Application> {
  return kubeClient().get<Application>(appPath);
}

/** The Application's status and the logs, for failure messages. */
async function context(): Promise<string> {
  const app = await readApp().catch((err: unknown) => ({ error: String(err) }));
  return `${JSON.stringify(app, null, 2)}\n${argocd?.tail(30) ?? ''}\n--- operator ---\n${operator?.output().slice(-3000) ?? ''}`;
}

/** Polls the Application until `check` returns a value; the failure message shows its status and the logs. */
async function waitForApp<T>(
  description: string,
  check: (app: Application) => T | undefined,
  timeoutMs = 90_000,
): Promise<T> {
  try {
    return await waitFor(async () => check(await readApp()), { timeoutMs, intervalMs: 250, description });
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await context()}`, {
      cause: err,
    });
  }
}

/** `Kind/name` → health of each Skylift object Argo CD tracks. */
function skyliftHealth(app: Application): Record<string, { status?: string; message?: string }> {
  return Object.fromEntries(
    (app.status?.resources ?? [])
      .filter((r) => r.group === 'aws.skylift.dev')
      .map((r) => [`${r.kind}/${r.name}`, r.health ?? {}]),
  );
}

describe('Argo CD syncs Skylift objects and reads their health', () => {
  it('syncs the examples; Progressing while Route 53 propagates, Healthy once the objects are Ready', async () => {
    const created = await kc(['apply', '-f', '-'], applicationManifest(repo.url, ns));
    expect(created.code, created.stderr).toBe(0);

    // Synced (automated sync applied the commit) while Route 53 answers PENDING: every DNSRecord
    // is Progressing with the operator's own reason, so the application is Progressing.
    const progressing = await waitForApp('Synced, DNSRecords Progressing: Propagating', (app) => {
      const health = skyliftHealth(app);
      const records = Object.entries(health).filter(([k]) => k.startsWith('DNSRecord/'));
      return app.status?.sync?.status === 'Synced' &&
        app.status.operationState?.phase === 'Succeeded' &&
        records.length === 3 &&
        records.every(
          ([, h]) => h.status === 'Progressing' && h.message?.startsWith('Propagating: ') === true,
        )
        ? app
        : undefined;
    });
    expect(progressing.status?.sync?.revision).toBe(firstRevision);
    expect(progressing.status?.health?.status).toBe('Progressing');
    expect(Object.keys(skyliftHealth(progressing)).sort()).toEqual(exampleObjects);
    expect(skyliftHealth(progressing)['DNSRecord/www']?.message).toMatch(
      /^Propagating: Route 53 is propagating change \S+$/,
    );

    // Route 53 reports INSYNC: the operator marks the records Ready, Argo CD calls them Healthy.
    route53Held?.remove();
    const healthy = await waitForApp('Healthy', (app) =>
      app.status?.health?.status === 'Healthy' && app.status.sync?.status === 'Synced' ? app : undefined,
    );
    const { 'MyIngress/shop': ingress, 'ManagedDB/orders': db, ...records } = skyliftHealth(healthy);
    expect(records).toEqual({
      'DNSRecord/docs': { status: 'Healthy', message: 'Route 53 record docs.example.com. CNAME is in sync' },
      'DNSRecord/site-verification': {
        status: 'Healthy',
        message: 'Route 53 record example.com. TXT is in sync',
      },
      'DNSRecord/www': { status: 'Healthy', message: 'Route 53 record www.example.com. A is in sync' },
    });
    expect(ingress?.status).toBe('Healthy');
    expect(ingress?.message).toMatch(/^Load balancer \S+\.elb\.amazonaws\.com is active$/);
    expect(db?.status).toBe('Healthy');
    expect(db?.message).toMatch(/^DB instance \S+ is available at \S+:5432$/);
  });

  it('stays Synced through resyncs: the operator’s finalizer, annotations and status are no diff', async () => {
    const start = await readApp();
    const syncs = start.status?.history?.length;
    expect(syncs).toBe(1);
    // Four resync periods, each ending in a comparison with Git and the live objects; every look
    // in between finds the application Synced and Healthy.
    const from = Date.parse(start.status?.reconciledAt ?? '');
    const compared = new Set<string>();
    await waitForApp(
      `four resyncs (${reconciliationSeconds} s apart), Synced throughout`,
      (app) => {
        if (app.status?.sync?.status !== 'Synced' || app.status.health?.status !== 'Healthy') {
          const drifted = (app.status?.resources ?? []).filter((r) => r.status !== 'Synced');
          throw new AbortWait(
            `after ${compared.size} comparisons: sync ${String(app.status?.sync?.status)}, health ${String(app.status?.health?.status)}; not Synced: ${JSON.stringify(drifted)}`,
          );
        }
        const at = app.status.reconciledAt;
        if (at !== undefined) compared.add(at);
        return at !== undefined && Date.parse(at) - from >= 4 * reconciliationSeconds * 1000
          ? true
          : undefined;
      },
      60_000,
    );
    expect(compared.size).toBeGreaterThanOrEqual(4);
    // What the comparison had to leave alone is there: the operator's finalizer, annotation and
    // status, and Argo CD's own tracking annotation, on an object whose spec nobody rewrote.
    const www = await readObject<DNSRecord>(kubeClient(), dnsRecordType, ns, 'www');
    expect(www?.metadata.finalizers).toEqual([finalizerName]);
    expect(Object.keys(www?.metadata.annotations ?? {})).toEqual(
      expect.arrayContaining([createPendingAnnotation, 'argocd.argoproj.io/tracking-id']),
    );
    expect(www?.metadata.generation).toBe(1);
    expect(www?.status?.observedGeneration).toBe(1);
    // No sync since the first: automated sync would have run one for any difference (self-heal).
    expect((await readApp()).status?.history?.length).toBe(syncs);
  });

  it('is Degraded while a synced DNSRecord has a Terminal condition, and Healthy again once Git drops it', async () => {
    const broken = [
      'apiVersion: aws.skylift.dev/v1alpha1',
      'kind: DNSRecord',
      'metadata:',
      '  name: lost',
      'spec:',
      '  zoneName: no-such-zone.example',
      '  name: www',
      '  type: A',
      '  records:',
      '    - 192.0.2.20',
      '',
    ].join('\n');
    const withBroken = await repo.commit({ 'examples/lost.yaml': broken }, 'A record in a zone nobody has');
    const degraded = await waitForApp('Degraded', (app) =>
      app.status?.sync?.revision === withBroken &&
      app.status.sync.status === 'Synced' &&
      app.status.health?.status === 'Degraded'
        ? app
        : undefined,
    );
    const health = skyliftHealth(degraded);
    expect(health['DNSRecord/lost']?.status).toBe('Degraded');
    expect(health['DNSRecord/lost']?.message).toContain('no hosted zone of that name in this account');
    expect(health['DNSRecord/www']?.status).toBe('Healthy');

    const without = await repo.commit({ 'examples/lost.yaml': null }, 'Drop the record again');
    const healthy = await waitForApp('pruned and Healthy', (app) =>
      app.status?.sync?.revision === without &&
      app.status.sync.status === 'Synced' &&
      app.status.health?.status === 'Healthy' &&
      skyliftHealth(app)['DNSRecord/lost'] === undefined
        ? app
        : undefined,
    );
    expect(Object.keys(skyliftHealth(healthy)).sort()).toEqual(exampleObjects);
    // Pruned means deleted: the operator let go of it (nothing in AWS to delete) and it is gone.
    await waitFor(
      async () => ((await kc(['get', 'dnsrecord', 'lost', '-n', ns])).code !== 0 ? true : undefined),
      { timeoutMs: 30_000, description: 'DNSRecord lost deleted' },
    );
    // The rest of the application stayed: its records are still in Route 53.
    const names = (await listRecords(route53At(stackInfo().awsEndpoint), zoneId)).map((r) => r.Name);
    expect(names).toEqual(expect.arrayContaining(['www.example.com.', 'docs.example.com.']));
  });
});

/** The Application: the repository's examples/ folder, synced automatically (prune, self-heal) into `namespace`. */
function applicationManifest(repoURL: string, namespace: string): string {
  return JSON.stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: appName, namespace: argoCdNamespace },
    spec: {
      project: 'default',
      source: { repoURL, targetRevision: 'main', path: 'examples' },
      destination: { name: clusterName, namespace },
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    },
  });
}
