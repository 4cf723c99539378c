// Namespace isolation: a CR in namespace B cannot take over or delete a
// record, load balancer or database that a CR in namespace A owns, neither by
// naming the same record nor by adopting A's load balancer ARN or DB
// identifier through spec.externalName. B's CRs end Synced=False Conflict
// saying another namespace's object owns it, without naming it (issue 27,
// item 18: it used to name A's object and uid); A's AWS resources keep their values, attributes and tags;
// deleting B's CRs leaves them in place and A's CRs Ready.
import { randomBytes } from 'node:crypto';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeDBInstancesCommand, ListTagsForResourceCommand, RDSClient } from '@aws-sdk/client-rds';
import { DeleteHostedZoneCommand, type Route53Client } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { installCrds } from '../../dev/installCrds.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { waitFor } from '../../dev/wait.ts';
import { createZone, listRecords, route53At } from '../support/dns.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let nsA: string;
let nsB: string;
let zoneName: string;
let zoneId: string;
let operator: SkyliftProcess;
let r53: Route53Client;
let elb: ElasticLoadBalancingV2Client;
let rds: RDSClient;
const kc = (): string => stackInfo().adminKubeconfig;

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  nsA = await newNamespace(admin, 'iso-a');
  nsB = await newNamespace(admin, 'iso-b');
  const endpoint = stackInfo().awsEndpoint;
  r53 = route53At(endpoint);
  elb = new ElasticLoadBalancingV2Client(awsClientConfig(endpoint));
  rds = new RDSClient(awsClientConfig(endpoint));
  zoneName = `iso-${randomBytes(3).toString('hex')}.example`;
  zoneId = await createZone(r53, zoneName);
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  await ensureElbSubnets(ec2, 'us-east-1');
  ec2.destroy();
  operator = spawnSkylift(`${nsA},${nsB}`, endpoint, [
    '--route53-batch-window',
    '200ms',
    '--rds-poll-interval',
    '1s',
  ]);
  const op = operator;
  await waitFor(() => (op.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start its controllers',
  });
});

afterAll(async () => {
  await operator.stop();
  elb.destroy();
  rds.destroy();
});

/** Applies objects (as YAML) to a namespace with kubectl; fails the test on error. */
async function apply(namespace: string, objects: Record<string, unknown>[]): Promise<void> {
  const r = await kubectl(
    kc(),
    ['apply', '-n', namespace, '-f', '-'],
    objects.map((o) => stringify(o)).join('---\n'),
  );
  expect(r.code, r.stderr).toBe(0);
}

/** `kubectl get -o jsonpath` of one object. */
async function jsonpath(namespace: string, ref: string, path: string): Promise<string> {
  const r = await kubectl(kc(), ['get', '-n', namespace, ref, '-o', `jsonpath=${path}`]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** Everything about A's three AWS resources that B must not change, in comparable form. */
async function snapshotA(lbArn: string, dbId: string): Promise<unknown> {
  const records = (await listRecords(r53, zoneId))
    .filter((r) => r.Type !== 'NS' && r.Type !== 'SOA')
    .map((r) => ({
      name: r.Name,
      type: r.Type,
      ttl: r.TTL,
      values: (r.ResourceRecords ?? []).map((v) => v.Value).sort(),
    }))
    .sort((x, y) => `${x.name ?? ''}${x.type ?? ''}`.localeCompare(`${y.name ?? ''}${y.type ?? ''}`));
  const lb = (await elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [lbArn] })))
    .LoadBalancers?.[0];
  const attributes = (
    (await elb.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: lbArn }))).Attributes ?? []
  )
    .map((a) => `${a.Key ?? ''}=${a.Value ?? ''}`)
    .sort();
  const lbTags = (
    (await elb.send(new DescribeTagsCommand({ ResourceArns: [lbArn] }))).TagDescriptions?.[0]?.Tags ?? []
  )
    .map((t) => `${t.Key ?? ''}=${t.Value ?? ''}`)
    .sort();
  const listeners = (
    (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? []
  )
    .map((l) => ({ port: l.Port, protocol: l.Protocol, actions: l.DefaultActions }))
    .sort((x, y) => (x.port ?? 0) - (y.port ?? 0));
  const db = (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: dbId })))
    .DBInstances?.[0];
  const dbTags = (
    (await rds.send(new ListTagsForResourceCommand({ ResourceName: db?.DBInstanceArn ?? '' }))).TagList ?? []
  )
    .map((t) => `${t.Key ?? ''}=${t.Value ?? ''}`)
    .sort();
  return {
    records,
    lb: {
      name: lb?.LoadBalancerName,
      state: lb?.State?.Code,
      scheme: lb?.Scheme,
      attributes,
      tags: lbTags,
      listeners,
    },
    db: {
      status: db?.DBInstanceStatus,
      class: db?.DBInstanceClass,
      storage: db?.AllocatedStorage,
      backupRetention: db?.BackupRetentionPeriod,
      deletionProtection: db?.DeletionProtection,
      tags: dbTags,
    },
  };
}

describe('namespace isolation', () => {
  it('B cannot take over or delete A’s record, load balancer or database', async () => {
    const cr = (kind: string, name: string, spec: Record<string, unknown>): Record<string, unknown> => ({
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind,
      metadata: { name },
      spec,
    });
    // A owns one of each.
    await apply(nsA, [
      cr('DNSRecord', 'www', { zoneName, name: 'www', type: 'A', ttl: 60, records: ['192.0.2.10'] }),
      cr('MyIngress', 'web', {
        subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
        listeners: [
          { port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200, body: 'a' } } },
        ],
        attributes: { idleTimeoutSeconds: 77 },
        tags: { team: 'a' },
      }),
      cr('ManagedDB', 'db', {
        engine: 'postgres',
        engineVersion: '16',
        instanceClass: 'db.t3.micro',
        allocatedStorage: 20,
        masterUsername: 'app',
        backup: { retentionDays: 3 },
        finalSnapshot: { enabled: false },
        tags: { team: 'a' },
      }),
    ]);
    const readyA = async (): Promise<void> => {
      const r = await kubectl(kc(), [
        'wait',
        '-n',
        nsA,
        '--for=condition=Ready',
        'dnsrecord/www',
        'myingress/web',
        'manageddb/db',
        '--timeout=90s',
      ]);
      expect(r.code, `${r.stderr}\n${operator.output().slice(-3000)}`).toBe(0);
    };
    await readyA();
    const lbArn = await jsonpath(nsA, 'myingress/web', '{.status.arn}');
    const dbId = await jsonpath(nsA, 'manageddb/db', '{.status.identifier}');
    expect(lbArn).toMatch(/^arn:aws:elasticloadbalancing:/);
    expect(dbId).not.toBe('');
    const before = await snapshotA(lbArn, dbId);
    expect(JSON.stringify(before)).toContain(`skylift.dev/owner=${nsA}/web`);
    expect(JSON.stringify(before)).toContain(`skylift.dev/owner=${nsA}/db`);

    // B names the same record and adopts A's load balancer and database, each with other values.
    await apply(nsB, [
      cr('DNSRecord', 'www', { zoneName, name: 'www', type: 'A', ttl: 30, records: ['198.51.100.66'] }),
      cr('MyIngress', 'steal', {
        externalName: lbArn,
        subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
        listeners: [
          { port: 8080, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 503, body: 'b' } } },
        ],
        attributes: { idleTimeoutSeconds: 300, deletionProtection: false },
        tags: { team: 'b' },
      }),
      cr('ManagedDB', 'steal', {
        externalName: dbId,
        engine: 'postgres',
        instanceClass: 'db.m5.large',
        allocatedStorage: 50,
        masterUsername: 'app',
        backup: { retentionDays: 10 },
        applyImmediately: true,
        finalSnapshot: { enabled: false },
        tags: { team: 'b' },
      }),
    ]);
    for (const [ref, owner] of [
      ['dnsrecord/www', `${nsA}/www`],
      ['myingress/steal', `${nsA}/web`],
      ['manageddb/steal', `${nsA}/db`],
    ] as const) {
      const r = await kubectl(kc(), [
        'wait',
        '-n',
        nsB,
        '--for=jsonpath={.status.conditions[?(@.type=="Synced")].reason}=Conflict',
        ref,
        '--timeout=60s',
      ]);
      expect(r.code, `${ref}: ${r.stderr}\n${operator.output().slice(-3000)}`).toBe(0);
      const message = await jsonpath(nsB, ref, '{.status.conditions[?(@.type=="Synced")].message}');
      expect(message, ref).toContain('is owned by a Skylift object in another namespace');
      expect(message, ref).not.toContain(owner);
    }
    expect(await snapshotA(lbArn, dbId)).toEqual(before);
    // Nothing of A's database reaches B: no connection Secret, no endpoint in status.
    const bSecret = await kubectl(kc(), ['get', '-n', nsB, 'secret/steal-connection']);
    expect(bSecret.code, bSecret.stdout).not.toBe(0);
    expect(bSecret.stderr).toContain('NotFound');
    expect(await jsonpath(nsB, 'manageddb/steal', '{.status.endpoint}')).toBe('');

    // Deleting B's CRs lets them go without touching A's resources.
    const deleted = await kubectl(kc(), [
      'delete',
      '-n',
      nsB,
      'dnsrecord/www',
      'myingress/steal',
      'manageddb/steal',
      '--timeout=60s',
    ]);
    expect(deleted.code, `${deleted.stderr}\n${operator.output().slice(-3000)}`).toBe(0);
    expect(await snapshotA(lbArn, dbId)).toEqual(before);
    await readyA();
    for (const ref of ['dnsrecord/www', 'myingress/web', 'manageddb/db'])
      expect(await jsonpath(nsA, ref, '{.status.conditions[?(@.type=="Synced")].status}'), ref).toBe('True');

    // A's own deletion still works and cleans up.
    const cleanup = await kubectl(kc(), [
      'delete',
      '-n',
      nsA,
      'dnsrecord/www',
      'myingress/web',
      'manageddb/db',
      '--timeout=90s',
    ]);
    expect(cleanup.code, `${cleanup.stderr}\n${operator.output().slice(-3000)}`).toBe(0);
    expect((await listRecords(r53, zoneId)).filter((r) => r.Type !== 'NS' && r.Type !== 'SOA')).toEqual([]);
    await r53.send(new DeleteHostedZoneCommand({ Id: zoneId }));
  });
});
