// GitOps the way Argo CD does it: the samples applied (server-side, then in a
// second namespace client-side, Argo CD's default) while `skylift run` works
// on them, and afterwards nothing to diff. The operator adds its finalizer and
// writes status, yet the objects still match what was applied: defaults live
// in the CRD schema, status is a subresource, and the operator never writes
// spec (generation stays 1). A repeated apply is a no-op (no resourceVersion
// changes). Deleting (what Argo CD's prune does) waits for the finalizer and
// leaves no Route 53 record behind.
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { emulatorCredentials, awsClientConfig } from '../../dev/emulator.ts';
import { repoRoot } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { ensureZone, listRecords, route53At } from '../support/dns.ts';
import { kubectl, type KubectlResult } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

const samples = ['examples/dnsrecord.yaml', 'examples/myingress.yaml'];
const files = samples.flatMap((f) => ['-f', join(repoRoot, f)]);
/** Everything the samples create, as kubectl names the types. */
const sampleTypes = 'services,dnsrecords.aws.skylift.dev,myingresses.aws.skylift.dev';

interface Listed {
  items: {
    kind: string;
    metadata: {
      name: string;
      generation?: number;
      resourceVersion: string;
      finalizers?: string[];
    };
    status?: { observedGeneration?: number };
  }[];
}

let operator: SkyliftProcess;
let serverSideNs: string;
let clientSideNs: string;
let zoneId: string;

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  serverSideNs = await newNamespace(admin, 'e2e-gitops-ssa');
  clientSideNs = await newNamespace(admin, 'e2e-gitops-csa');
  const endpoint = stackInfo().awsEndpoint;
  zoneId = await ensureZone(route53At(endpoint), 'example.com');
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  try {
    await ensureElbSubnets(ec2, emulatorCredentials.region);
  } finally {
    ec2.destroy();
  }
  operator = spawnSkylift(`${serverSideNs},${clientSideNs}`, endpoint, ['--route53-batch-window', '300ms']);
  await waitFor(() => (operator.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start',
  });
});

afterAll(async () => {
  await operator.stop();
});

function kc(args: readonly string[]): Promise<KubectlResult> {
  return kubectl(stackInfo().adminKubeconfig, args);
}

/** kubectl's output and the operator's last words, for failure messages. */
function context(r: KubectlResult): string {
  return `${r.stdout}\n${r.stderr}\n--- operator ---\n${operator.output().slice(-3000)}`;
}

async function listSamples(ns: string): Promise<Listed['items']> {
  const r = await kc(['get', sampleTypes, '-n', ns, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as Listed).items;
}

/** resourceVersion by kind/name. */
async function resourceVersions(ns: string): Promise<Record<string, string>> {
  return Object.fromEntries(
    (await listSamples(ns)).map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]),
  );
}

async function waitReady(ns: string): Promise<void> {
  const waited = await kc([
    'wait',
    '-n',
    ns,
    '--for=condition=Ready',
    'dnsrecords.aws.skylift.dev,myingresses.aws.skylift.dev',
    '--all',
    '--timeout=120s',
  ]);
  expect(waited.code, context(waited)).toBe(0);
}

/** The operator marked every CR (finalizer, status for generation 1) and never touched a spec. */
async function expectSpecUntouched(ns: string): Promise<void> {
  const crs = (await listSamples(ns)).filter((o) => o.kind !== 'Service');
  expect(crs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
    'DNSRecord/docs',
    'DNSRecord/site-verification',
    'DNSRecord/www',
    'MyIngress/shop',
  ]);
  for (const o of crs) {
    expect(o.metadata.generation, o.metadata.name).toBe(1);
    expect(o.status?.observedGeneration, o.metadata.name).toBe(1);
    expect(o.metadata.finalizers, o.metadata.name).toEqual(['aws.skylift.dev/cleanup']);
  }
}

/** What Argo CD's prune does: delete; the finalizer holds each CR until AWS has let go. */
async function pruneAndExpectRecordsGone(ns: string): Promise<void> {
  const deleted = await kc(['delete', '-n', ns, ...files, '--wait=true', '--timeout=120s']);
  expect(deleted.code, context(deleted)).toBe(0);
  expect(await listSamples(ns)).toEqual([]);
  const names = (await listRecords(route53At(stackInfo().awsEndpoint), zoneId)).map((r) => r.Name);
  expect(names).not.toContain('www.example.com.');
  expect(names).not.toContain('docs.example.com.');
}

describe('applying the samples twice leaves nothing to diff', () => {
  it('server-side apply: no diff, generation 1, and a second apply changes no resourceVersion', async () => {
    const applied = await kc(['apply', '--server-side', '-n', serverSideNs, ...files]);
    expect(applied.code, context(applied)).toBe(0);
    await waitReady(serverSideNs);
    await expectSpecUntouched(serverSideNs);

    const diff = await kc(['diff', '--server-side', '-n', serverSideNs, ...files]);
    expect(diff.code, context(diff)).toBe(0);
    expect(diff.stdout).toBe('');

    const before = await resourceVersions(serverSideNs);
    expect(Object.keys(before).sort()).toEqual([
      'DNSRecord/docs',
      'DNSRecord/site-verification',
      'DNSRecord/www',
      'MyIngress/shop',
      'Service/web',
    ]);
    const again = await kc(['apply', '--server-side', '-n', serverSideNs, ...files]);
    expect(again.code, context(again)).toBe(0);
    expect(await resourceVersions(serverSideNs)).toEqual(before);
    await expectSpecUntouched(serverSideNs);

    await pruneAndExpectRecordsGone(serverSideNs);
  });

  it('client-side apply (Argo CD’s default): no diff, and a second apply changes nothing', async () => {
    const applied = await kc(['apply', '-n', clientSideNs, ...files]);
    expect(applied.code, context(applied)).toBe(0);
    await waitReady(clientSideNs);
    await expectSpecUntouched(clientSideNs);

    const diff = await kc(['diff', '-n', clientSideNs, ...files]);
    expect(diff.code, context(diff)).toBe(0);
    expect(diff.stdout).toBe('');

    const before = await resourceVersions(clientSideNs);
    const again = await kc(['apply', '-n', clientSideNs, ...files]);
    expect(again.code, context(again)).toBe(0);
    expect(await resourceVersions(clientSideNs)).toEqual(before);
    // "unchanged" means kubectl's three-way merge patch (last-applied, Git, live) is empty: the
    // same patch Argo CD's default (legacy) diff merges into the live object to predict it. A
    // schema default inside a list item puts the whole list into that patch (JSON merge patch
    // replaces lists), which Argo CD would show as OutOfSync forever; see docs/argocd.md.
    expect(again.stdout.trim().split('\n')).toEqual([
      'dnsrecord.aws.skylift.dev/www unchanged',
      'dnsrecord.aws.skylift.dev/docs unchanged',
      'dnsrecord.aws.skylift.dev/site-verification unchanged',
      'service/web unchanged',
      'myingress.aws.skylift.dev/shop unchanged',
    ]);

    await pruneAndExpectRecordsGone(clientSideNs);
  });
});
