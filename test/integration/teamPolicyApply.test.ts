// Issue 27, item 15: three TeamPolicies applied in one go (kubectl apply), the last of them for a
// namespace whose objects are already served. The first two refuse the namespace for a moment
// ("not selected by any TeamPolicy"); the third serves it again, and its objects must show so.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { deleteTeamPolicies, startTenants, testPolicyLabel } from '../../dev/teamPolicies.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import {
  createDnsRecord,
  createZone,
  route53At,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { kubeClient } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

const group = 'integration-teampolicy-apply';
let admin: KubeClient;
let proxy: AwsFaultProxy;
let tenants: TenantDirectory;
const running: RunningDnsController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  tenants = await startTenants(admin, group);
});
afterAll(async () => {
  await deleteTeamPolicies(admin, group);
  await tenants.stop();
  await proxy.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/** A Namespace, labelled for its team. */
const namespaceDoc = (name: string): string =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  labels:\n    skylift.dev/team: ${name}\n`;

/** A TeamPolicy of this test's group selecting the namespaces labelled for `team`. */
const policyDoc = (team: string, zone: string): string =>
  [
    'apiVersion: aws.skylift.dev/v1alpha1',
    'kind: TeamPolicy',
    'metadata:',
    `  name: ${team}`,
    '  labels:',
    `    ${testPolicyLabel}: ${group}`,
    'spec:',
    '  namespaces:',
    '    selector:',
    '      matchLabels:',
    `        skylift.dev/team: ${team}`,
    '  guardrails:',
    '    dnsRecords:',
    '      zones:',
    `        - name: ${zone}`,
    '',
  ].join('\n');

describe('three TeamPolicies in one apply', () => {
  it('serves again at once the objects of a namespace the last of them selects (they stayed Forbidden until the resync)', async () => {
    const id = randomBytes(3).toString('hex');
    const [served, other1, other2] = ['a', 'b', 'c'].map((t) => `apply-${t}-${id}`) as [
      string,
      string,
      string,
    ];
    const zone = `apply-${id}.example.com`;
    await createZone(route53At(stackInfo().awsEndpoint), zone);
    const kubeconfig = stackInfo().adminKubeconfig;
    const ns = await kubectl(
      kubeconfig,
      ['apply', '-f', '-'],
      [served, other1, other2].map(namespaceDoc).join('---\n'),
    );
    expect(ns.code, ns.stderr).toBe(0);
    // The resync is far away: only a tenancy change can bring the objects back.
    running.push(
      await startDnsController({ namespace: served, endpoint: proxy.endpoint, tenants, resyncPeriod: '10m' }),
    );
    // Served before any policy exists, as a single team.
    const names = Array.from({ length: 48 }, (_, i) => `www${i}`);
    for (const name of names)
      await createDnsRecord(admin, served, name, {
        zoneName: zone,
        name,
        type: 'A',
        ttl: 60,
        records: ['192.0.2.10'],
      });
    for (const name of names) await waitForCondition(admin, served, name, { type: 'Ready', status: 'True' });

    // One apply: the other teams' policies first (the namespace is refused while only they exist),
    // then its own.
    const out = await kubectl(
      kubeconfig,
      ['apply', '-f', '-'],
      [policyDoc(other1, zone), policyDoc(other2, zone), policyDoc(served, zone)].join('---\n'),
    );
    expect(out.code, out.stderr).toBe(0);
    for (const name of names)
      await waitForCondition(admin, served, name, { type: 'Synced', status: 'True' }, 20_000);
  });
});
