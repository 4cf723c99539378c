// Least privilege, proven: the operator runs as the chart's ServiceAccount,
// bound to exactly the chart's ClusterRole and leader-election Role (not
// admin), with leader election on, and takes an application's MyIngress,
// DNSRecord alias and ManagedDB through their whole lifecycle.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { installCrds } from '../../dev/installCrds.ts';
import { ensureElbSubnets, ensureHostedZone } from '../../dev/awsAccount.ts';
import { kinds } from '../../src/kinds/registry.ts';
import { helmTemplate } from '../../tools/chart.ts';
import { emulatorEnv, awsClientConfig } from '../../dev/emulator.ts';
import { renderKubeconfig } from '../../dev/kubeconfig.ts';
import { repoRoot } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { route53At } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { scratchDir } from '../support/scratch.ts';
import { spawnSkyliftRun, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';
import { readFileSync } from 'node:fs';

const rbacKinds = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

let releaseNs: string;
let appNs: string;
let release: string;
let serviceAccount: string;
let operator: SkyliftProcess | undefined;
const admin = (): string => stackInfo().adminKubeconfig;

beforeAll(async () => {
  const client = kubeClient();
  await installCrds(client);
  releaseNs = await newNamespace(client, 'skylift-rbac');
  appNs = await newNamespace(client, 'rbac-app');
  release = releaseNs; // contains the chart name, so the chart uses it as its full name
  const endpoint = stackInfo().awsEndpoint;
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  await ensureElbSubnets(ec2, 'us-east-1');
  ec2.destroy();
  await ensureHostedZone(route53At(endpoint), 'example.com');

  // Exactly the chart's identity and rights: ServiceAccount, ClusterRole(Binding), lease Role(Binding).
  const rendered = parseAllDocuments(await helmTemplate({ release, namespace: releaseNs }))
    .map((d) => d.toJS() as { kind: string; metadata: { name: string } } | null)
    .filter((m): m is { kind: string; metadata: { name: string } } => m !== null && rbacKinds.has(m.kind));
  expect([...new Set(rendered.map((m) => m.kind))].sort()).toEqual([...rbacKinds].sort());
  const applied = await kubectl(
    admin(),
    ['apply', '--server-side', '-f', '-'],
    rendered.map((m) => stringify(m)).join('---\n'),
  );
  expect(applied.code, applied.stderr).toBe(0);
  serviceAccount = rendered.find((m) => m.kind === 'ServiceAccount')?.metadata.name ?? '';
});

afterAll(async () => {
  await operator?.stop();
  // ClusterRole and ClusterRoleBinding outlive the namespaces.
  await kubectl(admin(), [
    'delete',
    'clusterrole,clusterrolebinding',
    release,
    `${release}-tenancy`,
    '--ignore-not-found',
  ]);
  await kubectl(admin(), [
    'delete',
    'clusterrole',
    `${release}-edit`,
    `${release}-view`,
    '--ignore-not-found',
  ]);
});

/** A kubeconfig holding a bound token of the chart's ServiceAccount, as a pod would get. */
async function serviceAccountKubeconfig(): Promise<string> {
  const token = await kubectl(admin(), ['create', 'token', serviceAccount, '-n', releaseNs, '--duration=1h']);
  expect(token.code, token.stderr).toBe(0);
  const info = stackInfo();
  const file = join(await scratchDir('rbac'), 'kubeconfig');
  await writeFile(
    file,
    renderKubeconfig([
      {
        clusterName: 'local',
        server: info.server,
        caPem: info.caPem,
        user: `system:serviceaccount:${releaseNs}:${serviceAccount}`,
        token: token.stdout.trim(),
      },
    ]),
  );
  return file;
}

describe('the chart’s RBAC', () => {
  it('denies what the operator must not do', async () => {
    const as = `system:serviceaccount:${releaseNs}:${serviceAccount}`;
    const canI = async (...args: string[]): Promise<string> =>
      (await kubectl(admin(), ['auth', 'can-i', ...args, '--as', as])).stdout.trim();
    expect(await canI('patch', 'myingresses.aws.skylift.dev', '-n', appNs)).toBe('yes');
    expect(await canI('create', 'secrets', '-n', appNs)).toBe('yes');
    // The target-health readiness gate: gated Pods watched, their gate condition set — nothing more.
    expect(await canI('watch', 'pods', '-n', appNs)).toBe('yes');
    expect(await canI('patch', 'pods', '-n', appNs, '--subresource', 'status')).toBe('yes');
    // The teams marker (docs/teams.md): made and read in the release namespace, never changed.
    expect(await canI('create', 'configmaps', '-n', releaseNs)).toBe('yes');
    expect(await canI('get', 'configmaps/skylift-leader-teams', '-n', releaseNs)).toBe('yes');
    // The Gateway API front end: GatewayClasses read, their status written; nothing else of them.
    expect(await canI('watch', 'gatewayclasses.gateway.networking.k8s.io')).toBe('yes');
    expect(await canI('patch', 'gatewayclasses.gateway.networking.k8s.io', '--subresource', 'status')).toBe(
      'yes',
    );
    for (const denied of [
      ['patch', 'gatewayclasses.gateway.networking.k8s.io'],
      ['delete', 'gatewayclasses.gateway.networking.k8s.io'],
      ['create', 'gatewayclasses.gateway.networking.k8s.io'],
      ['get', 'configmaps', '-n', releaseNs],
      ['update', 'configmaps/skylift-leader-teams', '-n', releaseNs],
      ['delete', 'configmaps/skylift-leader-teams', '-n', releaseNs],
      ['create', 'configmaps', '-n', appNs],
      ['list', 'secrets', '-n', appNs],
      ['watch', 'secrets', '-A'],
      ['delete', 'secrets', '-n', appNs],
      ['delete', 'myingresses.aws.skylift.dev', '-n', appNs],
      ['create', 'pods', '-n', appNs],
      ['patch', 'pods', '-n', appNs],
      ['delete', 'pods', '-n', appNs],
      ['update', 'leases.coordination.k8s.io', '-n', appNs],
      ['create', 'customresourcedefinitions.apiextensions.k8s.io'],
    ]) {
      expect(await canI(...denied), denied.join(' ')).toBe('no');
    }
  });

  it('is enough for the whole lifecycle of all three kinds, with leader election', async () => {
    const label = `skylift.dev/rbac-test=${appNs}`;
    operator = spawnSkyliftRun({
      kubeconfig: await serviceAccountKubeconfig(),
      args: [
        '--leader-elect=true',
        '--leader-election-namespace',
        releaseNs,
        '--label-selector',
        label,
        '--rds-poll-interval',
        '1s',
      ],
      env: emulatorEnv(stackInfo().awsEndpoint),
    });
    const op = operator;
    await waitFor(() => (op.output().includes('controllers started') ? true : undefined), {
      timeoutMs: 60_000,
      description: 'the operator to win the lease and start',
    });

    // The sample application, labelled for this operator (cluster-wide watches, label-selected).
    const app = parseAllDocuments(readFileSync(join(repoRoot, 'examples/app.yaml'), 'utf8'))
      .map((d) => d.toJS() as { kind: string; metadata: { labels?: Record<string, string> } })
      .map((m) => ({
        ...m,
        metadata: { ...m.metadata, labels: { ...m.metadata.labels, 'skylift.dev/rbac-test': appNs } },
      }));
    const applied = await kubectl(
      admin(),
      ['apply', '-n', appNs, '-f', '-'],
      app.map((m) => stringify(m)).join('---\n'),
    );
    expect(applied.code, applied.stderr).toBe(0);
    const ready = await kubectl(admin(), [
      'wait',
      '-n',
      appNs,
      '--for=condition=Ready',
      'myingress/shop',
      'dnsrecord/shop',
      'manageddb/orders',
      '--timeout=180s',
    ]);
    expect(ready.code, `${ready.stderr}\n${op.output().slice(-3000)}`).toBe(0);
    const secret = await kubectl(admin(), [
      'get',
      'secret',
      'orders-db',
      '-n',
      appNs,
      '-o',
      'jsonpath={.data.host}',
    ]);
    expect(Buffer.from(secret.stdout, 'base64').toString()).toMatch(/rds\.amazonaws\.com$/);
    const lease = await kubectl(admin(), [
      'get',
      'lease',
      'skylift-leader',
      '-n',
      releaseNs,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    ]);
    expect(lease.stdout).not.toBe('');

    const deleted = await kubectl(admin(), [
      'delete',
      '-n',
      appNs,
      'dnsrecord/shop',
      'myingress/shop',
      'manageddb/orders',
      '--timeout=180s',
    ]);
    expect(deleted.code, `${deleted.stderr}\n${op.output().slice(-3000)}`).toBe(0);
    const left = await kubectl(admin(), ['get', 'skylift', '-n', appNs, '-o', 'name']);
    expect(left.stdout.trim()).toBe('');
    // Not one request was refused along the way.
    expect(op.output()).not.toMatch(/forbidden|\b403\b/i);
  });

  it('adds the kinds to the built-in edit and view roles: a team bound to edit uses them, view reads them, neither writes status', async () => {
    const bind = async (user: string, role: string): Promise<void> => {
      const r = await kubectl(admin(), [
        'create',
        'rolebinding',
        `${user}-${role}`,
        `--clusterrole=${role}`,
        `--user=${user}`,
        '-n',
        appNs,
      ]);
      expect(r.code, r.stderr).toBe(0);
    };
    await bind('alice', 'edit');
    await bind('bob', 'view');
    const can = async (
      user: string,
      verb: string,
      resource: string,
      ns = appNs,
      subresource?: string,
    ): Promise<boolean> =>
      (
        await kubectl(admin(), [
          'auth',
          'can-i',
          verb,
          resource,
          ...(subresource !== undefined ? [`--subresource=${subresource}`] : []),
          '-n',
          ns,
          '--as',
          user,
        ])
      ).stdout.trim() === 'yes';
    // The aggregation controller fills edit and view shortly after the ClusterRoles appear.
    for (const { type } of kinds)
      await waitFor(
        async () => ((await can('alice', 'create', `${type.plural}.${type.group}`)) ? true : undefined),
        {
          timeoutMs: 30_000,
          description: `edit to include create ${type.plural}`,
        },
      );
    await waitFor(async () => ((await can('bob', 'list', 'dnsrecords.aws.skylift.dev')) ? true : undefined), {
      timeoutMs: 30_000,
      description: 'view to include list dnsrecords',
    });
    expect(await can('alice', 'delete', 'manageddbs.aws.skylift.dev')).toBe(true);
    expect(await can('bob', 'create', 'dnsrecords.aws.skylift.dev')).toBe(false);
    expect(await can('alice', 'update', 'dnsrecords.aws.skylift.dev', appNs, 'status')).toBe(false);
    expect(await can('alice', 'patch', 'manageddbs.aws.skylift.dev', appNs, 'status')).toBe(false);
    expect(await can('alice', 'patch', 'manageddbs.aws.skylift.dev')).toBe(true);
    // Only where bound.
    expect(await can('alice', 'create', 'dnsrecords.aws.skylift.dev', releaseNs)).toBe(false);
  });
});
