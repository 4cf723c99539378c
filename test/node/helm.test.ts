// The install a platform team does, for real: `helm install` of the chart
// with the operator image built here, onto the node cluster, into a namespace
// where the Pod Security Standard "restricted" is enforced. Two replicas,
// one leader, probes, /metrics through the Service; IRSA the way a
// self-managed cluster does it (a projected ServiceAccount token exchanged
// with moto's STS); the leader Pod force-deleted; `helm upgrade` rolling the
// Pods while records are being created; `helm uninstall` keeping the CRDs,
// the CRs and what is in AWS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import { allCrds } from '../../src/kinds/registry.ts';
import { simpleRequest } from '../../dev/http.ts';
import { waitFor } from '../../dev/wait.ts';
import { chartDir, helm } from '../../tools/chart.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { ensureZone, listRecords, route53At } from '../support/dns.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { nodeInfo, stackInfo } from '../support/stack.ts';

const release = 'skylift';
const ns = 'skylift-system';
const roleArn = 'arn:aws:iam::123456789012:role/skylift-operator';
const admin = kubeClient();
const kc = stackInfo().adminKubeconfig;
let proxy: AwsFaultProxy;
let zoneId: string;
let appNs: string;
const operatorImage = nodeInfo().operatorImage;
const [imageRepository, imageTag] = operatorImage.split(/:(?=[^:]+$)/);

interface PodView {
  metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number; image: string }[];
  };
}
interface LeaseView {
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const helmArgs = (extra: readonly string[] = []): string[] => [
  '--kubeconfig',
  kc,
  '--namespace',
  ns,
  '--set',
  `image.repository=${imageRepository ?? ''}`,
  '--set',
  `image.tag=${imageTag ?? ''}`,
  '--set',
  'image.pullPolicy=Never',
  '--set',
  `aws.endpointUrl=${proxy.endpoint}`,
  '--set',
  'aws.region=us-east-1',
  '--set',
  'clusterId=node-test',
  '--set',
  `serviceAccount.roleArn=${roleArn}`,
  '--set',
  'serviceAccount.webIdentityToken.enabled=true',
  '--set',
  'logFormat=text',
  ...extra,
];

async function operatorPods(): Promise<PodView[]> {
  const list = await admin.get<{ items: PodView[] }>(`/api/v1/namespaces/${ns}/pods`, {
    labelSelector: 'app.kubernetes.io/name=skylift',
  });
  return list.items.filter((p) => p.metadata.deletionTimestamp === undefined);
}

const isReady = (p: PodView): boolean =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

async function lease(): Promise<LeaseView | undefined> {
  return admin
    .get<LeaseView>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/skylift-leader`)
    .catch(() => undefined);
}

/** The Pod holding the lease (its identity is the Pod name plus a suffix). */
async function leaderPod(): Promise<string | undefined> {
  const holder = (await lease())?.spec.holderIdentity ?? '';
  const pods = await operatorPods();
  return pods.find((p) => holder.startsWith(p.metadata.name))?.metadata.name;
}

async function applyRecord(name: string, ip: string): Promise<void> {
  const r = await kubectl(
    kc,
    ['apply', '-n', appNs, '-f', '-'],
    JSON.stringify({
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name },
      spec: { zoneName: 'example.com', name: `${name}-${appNs}`, type: 'A', records: [ip] },
    }),
  );
  expect(r.code, r.stderr).toBe(0);
}

async function waitRecordReady(name: string, timeoutMs = 120_000): Promise<void> {
  await waitFor(
    async () => {
      const r = await readObject<{
        metadata: { name: string };
        status?: { conditions?: { type: string; status: string }[] };
      }>(admin, dnsRecordType, appNs, name);
      return r?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
        ? true
        : undefined;
    },
    { timeoutMs, description: `DNSRecord ${appNs}/${name} Ready` },
  );
}

/** Route 53 records of this test's names, as `name type`. */
async function recordsInAws(): Promise<string[]> {
  return (await listRecords(route53At(stackInfo().awsEndpoint), zoneId))
    .filter((r) => r.Type === 'A' && (r.Name ?? '').includes(appNs))
    .map((r) => `${(r.Name ?? '').split('.')[0] ?? ''} ${r.Type ?? ''}`)
    .sort();
}

beforeAll(async () => {
  proxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint, host: nodeInfo().hostIp });
  zoneId = await ensureZone(route53At(stackInfo().awsEndpoint), 'example.com');
  appNs = await newNamespace(admin, 'node-helm-app');
  // The release namespace enforces "restricted": a Pod that breaks it is refused, not only warned about.
  await admin.create('/api/v1/namespaces', {
    metadata: {
      name: ns,
      labels: {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'latest',
      },
    },
  });
  // CRDs another node test applied with kubectl are adopted by the release (Helm's documented way).
  const crds = await admin.get<{ items: { metadata: { name: string } }[] }>(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  );
  for (const crd of crds.items.filter((c) => c.metadata.name.endsWith('.aws.skylift.dev'))) {
    await admin.patch(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      {
        metadata: {
          labels: { 'app.kubernetes.io/managed-by': 'Helm' },
          annotations: { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': ns },
        },
      },
      'merge',
    );
  }
});

afterAll(async () => {
  await helm(['uninstall', release, '--kubeconfig', kc, '--namespace', ns, '--wait']).catch(() => undefined);
  await proxy.stop();
});

describe('helm install on the node cluster', () => {
  it('runs two replicas under PodSecurity "restricted" enforced: probes pass, one leads, /metrics through the Service', async () => {
    // A Pod that breaks "restricted" is refused here: the enforcement is real.
    const refused = await kubectl(kc, [
      'run',
      'rooty',
      '-n',
      ns,
      '--image',
      nodeInfo().helloImage,
      '--restart=Never',
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/violates PodSecurity "restricted:latest"/);

    const t0 = Date.now();
    await helm(['install', release, chartDir, ...helmArgs()]);
    const pods = await waitFor(
      async () => {
        const p = await operatorPods();
        return p.length === 2 && p.every(isReady) ? p : undefined;
      },
      { timeoutMs: 180_000, description: 'two operator Pods Ready', intervalMs: 250 },
    );
    const leader = await waitFor(leaderPod, { timeoutMs: 60_000, description: 'a leader' });
    process.stdout.write(
      `[helm] install → 2 Pods Ready and a leader in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
    );
    for (const p of pods) {
      expect(p.spec.nodeName).toBe(nodeInfo().nodeName);
      expect(p.status?.containerStatuses?.[0]?.image).toContain(operatorImage);
      expect(p.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    }
    expect(pods.map((p) => p.metadata.name)).toContain(leader);

    // /metrics through the Service's ClusterIP (kube-proxy's rules in the node's namespace).
    const svc = await admin.get<{ spec: { clusterIP: string; ports: { port: number }[] } }>(
      `/api/v1/namespaces/${ns}/services/skylift-metrics`,
    );
    const port = svc.spec.ports[0]?.port ?? 0;
    const scraped = await waitFor(
      async () => {
        const r = await simpleRequest(`http://${svc.spec.clusterIP}:${port}/metrics`, { timeoutMs: 5000 });
        return r.status === 200 ? r.body : undefined;
      },
      { timeoutMs: 30_000, description: 'metrics through the Service' },
    );
    expect(scraped).toMatch(/^leader_election_master_status\S* [01]$/m);
    expect(scraped).toContain('skylift_kube_api_requests_total');
  });

  it('assumes the IRSA role with the projected token through STS, and signs AWS calls with it', async () => {
    const sts: { body: string; accessKeyId: string | undefined }[] = [];
    // Every STS call is seen: which token the Pod sent.
    proxy.inject({
      service: 'sts',
      match: (call) => {
        sts.push({ body: call.body, accessKeyId: call.accessKeyId });
        return false;
      },
      fault: { kind: 'latency', ms: 0 },
    });
    await applyRecord('irsa', '192.0.2.10');
    await waitRecordReady('irsa');
    const calls = proxy.calls();
    const assume = calls.filter((c) => c.service === 'sts' && c.operation === 'AssumeRoleWithWebIdentity');
    expect(assume.length).toBeGreaterThanOrEqual(1);
    const route53 = calls.filter((c) => c.service === 'route53');
    expect(route53.length).toBeGreaterThan(0);
    for (const c of route53) expect(c.accessKeyId).toMatch(/^ASIA/); // temporary, assumed credentials
    // The token was the one the kubelet projected: audience sts.amazonaws.com, the chart's ServiceAccount.
    const body = new URLSearchParams(
      sts.find((s) => s.body.includes('AssumeRoleWithWebIdentity'))?.body ?? '',
    );
    expect(body.get('RoleArn')).toBe(roleArn);
    const [, payload = ''] = (body.get('WebIdentityToken') ?? '').split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      aud: string[];
      sub: string;
      'kubernetes.io'?: { pod?: { name: string } };
    };
    expect(claims.aud).toEqual(['sts.amazonaws.com']);
    expect(claims.sub).toBe(`system:serviceaccount:${ns}:skylift`);
    expect((await operatorPods()).map((p) => p.metadata.name)).toContain(claims['kubernetes.io']?.pod?.name);
  });

  it('hands over within the lease duration when the leader Pod is force-deleted', async () => {
    const before = await lease();
    const oldLeader = await leaderPod();
    expect(oldLeader).toBeDefined();
    const killedAt = Date.now();
    const deleted = await kubectl(kc, [
      'delete',
      'pod',
      '-n',
      ns,
      oldLeader ?? '',
      '--grace-period=0',
      '--force',
    ]);
    expect(deleted.code, deleted.stderr).toBe(0);
    // A force-deleted Pod's ServiceAccount token stops authenticating, so it usually cannot release
    // the Lease: the standby takes over when the lease runs out. Follow the old holder's renewals.
    let lastRenew = Date.parse(before?.spec.renewTime ?? '');
    const after = await waitFor(
      async () => {
        const l = await lease();
        const holder = l?.spec.holderIdentity ?? '';
        if (holder.startsWith(oldLeader ?? '-'))
          lastRenew = Math.max(lastRenew, Date.parse(l?.spec.renewTime ?? ''));
        return holder !== '' && !holder.startsWith(oldLeader ?? '-') ? l : undefined;
      },
      { timeoutMs: 60_000, description: 'a new leader', intervalMs: 100 },
    );
    const acquired = Date.parse(after.spec.acquireTime ?? '');
    const leaseMs = (before?.spec.leaseDurationSeconds ?? 15) * 1000;
    process.stdout.write(
      `[helm] leader Pod force-deleted → new leader ${((acquired - killedAt) / 1000).toFixed(1)} s after the delete (lease ${leaseMs / 1000} s; last renewal ${((killedAt - lastRenew) / 1000).toFixed(1)} s before it)\n`,
    );
    expect(after.spec.leaseTransitions).toBeGreaterThan(before?.spec.leaseTransitions ?? 0);
    // Within the lease duration of the old leader's last renewal (1 s for the watch event, the
    // takeover's PUT and this machine's load), and so of the delete.
    expect(acquired - lastRenew).toBeLessThanOrEqual(leaseMs + 1000);
    expect(acquired - killedAt).toBeLessThanOrEqual(leaseMs + 1000);
    // The new leader works: a record created now becomes Ready.
    await applyRecord('after-handover', '192.0.2.11');
    await waitRecordReady('after-handover');
    // The Deployment replaces the deleted Pod.
    await waitFor(
      async () => {
        const p = await operatorPods();
        return p.length === 2 && p.every(isReady) ? true : undefined;
      },
      { timeoutMs: 120_000, description: 'two operator Pods Ready again' },
    );
  });

  it('replaces a leader that crashes (SIGKILL, no release) one lease duration after its last renewal', async () => {
    const before = await lease();
    const holder = before?.spec.holderIdentity ?? '';
    const pod = await leaderPod();
    expect(pod).toBeDefined();
    // SIGKILL the operator process inside the leader's container: nothing gets to release the Lease.
    const killer =
      "const fs=require('fs');for(const p of fs.readdirSync('/proc')){if(!/^\\d+$/.test(p))continue;" +
      "let c='';try{c=fs.readFileSync('/proc/'+p+'/cmdline','utf8')}catch{}" +
      "if(c.includes('/app/dist/cli/main.js')&&Number(p)!==process.pid){process.kill(Number(p),'SIGKILL');console.log('killed',p)}}";
    const killedAt = Date.now();
    const killed = await kubectl(kc, ['exec', '-n', ns, pod ?? '', '--', 'node', '-e', killer]);
    expect(killed.code, killed.stderr).toBe(0);
    expect(killed.stdout).toMatch(/^killed \d+$/m);
    let lastRenew = Date.parse(before?.spec.renewTime ?? '');
    const after = await waitFor(
      async () => {
        const l = await lease();
        const now = l?.spec.holderIdentity ?? '';
        if (now === holder) lastRenew = Math.max(lastRenew, Date.parse(l?.spec.renewTime ?? ''));
        return now !== '' && now !== holder ? l : undefined;
      },
      { timeoutMs: 60_000, description: 'a new leader after the crash', intervalMs: 100 },
    );
    const acquired = Date.parse(after.spec.acquireTime ?? '');
    const leaseMs = (before?.spec.leaseDurationSeconds ?? 15) * 1000;
    process.stdout.write(
      `[helm] leader crashed (SIGKILL) → new leader ${((acquired - killedAt) / 1000).toFixed(1)} s after the kill, ${((acquired - lastRenew) / 1000).toFixed(1)} s after its last renewal (lease ${leaseMs / 1000} s)\n`,
    );
    // Not before the dead holder's lease ran out (no two leaders), and within a second after.
    expect(acquired - lastRenew).toBeGreaterThanOrEqual(leaseMs - 100);
    expect(acquired - lastRenew).toBeLessThanOrEqual(leaseMs + 1000);
    // The crashed container restarts; both replicas are Ready again and the leader works.
    await waitFor(
      async () => {
        const p = await operatorPods();
        return p.length === 2 && p.every(isReady) ? true : undefined;
      },
      { timeoutMs: 120_000, description: 'two operator Pods Ready after the crash' },
    );
    await applyRecord('after-crash', '192.0.2.12');
    await waitRecordReady('after-crash');
  });

  it('helm upgrade with a changed value rolls the Pods and loses no work', async () => {
    const oldPods = (await operatorPods()).map((p) => p.metadata.name);
    // Records created while the Pods roll: each must end Ready, once, in Route 53.
    const names = Array.from({ length: 6 }, (_, i) => `roll-${i}`);
    const upgrading = helm([
      'upgrade',
      release,
      chartDir,
      ...helmArgs(['--set', 'workers=8', '--wait', '--timeout', '3m']),
    ]);
    for (const [i, name] of names.entries()) await applyRecord(name, `192.0.2.${20 + i}`);
    await upgrading;
    const newPods = await waitFor(
      async () => {
        const p = await operatorPods();
        return p.length === 2 && p.every(isReady) && p.every((x) => !oldPods.includes(x.metadata.name))
          ? p
          : undefined;
      },
      { timeoutMs: 180_000, description: 'two new operator Pods Ready' },
    );
    expect(newPods.map((p) => p.metadata.name).filter((n) => oldPods.includes(n))).toEqual([]);
    const deployment = await admin.get<{
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    }>(`/apis/apps/v1/namespaces/${ns}/deployments/skylift`);
    expect(deployment.spec.template.spec.containers[0]?.args).toContain('--workers=8');
    for (const name of names) await waitRecordReady(name);
    expect(await recordsInAws()).toEqual(
      ['after-crash', 'after-handover', 'irsa', ...names].map((n) => `${n}-${appNs} A`).sort(),
    );
  });

  it('helm uninstall keeps the CRDs, the CRs and what is in AWS', async () => {
    await helm(['uninstall', release, '--kubeconfig', kc, '--namespace', ns, '--wait']);
    await waitFor(async () => ((await operatorPods()).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
      description: 'operator Pods gone',
    });
    const crds = await kubectl(kc, ['get', 'crd', '-o', 'name']);
    for (const crd of allCrds())
      expect(crds.stdout).toContain(`customresourcedefinition.apiextensions.k8s.io/${crd.metadata.name}`);
    expect(await readObject(admin, dnsRecordType, appNs, 'irsa')).toBeDefined();
    expect(await recordsInAws()).toContain(`irsa-${appNs} A`);
  });
});
