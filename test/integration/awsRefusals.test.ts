// AWS's terminal refusals, as each kind's Terminal condition shows them: the
// spec field first, AWS's words quoted, and a fix that works when followed.
// Real apiserver and moto; where moto refuses like AWS (overlapping RDS
// windows, an ELB health check timeout not below its interval) the refusal is
// moto's own, elsewhere the fault proxy answers as AWS does.
import { CreateSubnetCommand, CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import { RDSClient } from '@aws-sdk/client-rds';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resourcePath } from '../../src/apis/meta.ts';
import { ownershipTagMap, type Condition, type ManagedObject } from '../../src/apis/managed.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { managedDbType, type ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import { managedDbController } from '../../src/kinds/manageddb/controller.ts';
import { myIngressType, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import type { ResourceType } from '../../src/apis/meta.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import {
  createDnsRecord,
  createZone,
  findRecord,
  listRecords,
  route53At,
  startDnsController,
} from '../support/dns.ts';
import { eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
let subnets: string[];
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  const ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.41.0.0/16' }));
  subnets = [];
  for (const [cidr, az] of [
    ['10.41.1.0/24', 'us-east-1a'],
    ['10.41.2.0/24', 'us-east-1b'],
  ] as const) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId ?? '', CidrBlock: cidr, AvailabilityZone: az }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

function create(type: ResourceType, ns: string, name: string, spec: object): Promise<ManagedObject> {
  return admin.create(resourcePath(type, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: type.kind,
    metadata: { name },
    spec,
  });
}

function patchSpec(type: ResourceType, ns: string, name: string, spec: object): Promise<unknown> {
  return admin.patch(resourcePath(type, { namespace: ns, name }), { spec }, 'merge');
}

/** The object's condition once it has the status (and reason). */
function condition(
  type: ResourceType,
  ns: string,
  name: string,
  want: { type: string; status: string; reason?: string },
): Promise<Condition> {
  return waitFor(
    async () => {
      const o = await readObject<ManagedObject>(admin, type, ns, name);
      const c = o?.status?.conditions?.find((x) => x.type === want.type);
      return c?.status === want.status && (want.reason === undefined || c.reason === want.reason)
        ? c
        : undefined;
    },
    { timeoutMs: 60_000, description: `${ns}/${name} ${want.type}=${want.status} ${want.reason ?? ''}` },
  );
}

const terminal = { type: 'Synced', status: 'False', reason: 'Terminal' } as const;
const ready = { type: 'Ready', status: 'True' } as const;

describe('ManagedDB: RDS refusals name the field and a fix', () => {
  async function setup(prefix: string): Promise<string> {
    const ns = await newNamespace(admin, prefix);
    running.push(
      await startController((s) => managedDbController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
      }),
    );
    return ns;
  }
  const spec = (extra: Partial<ManagedDBSpec> = {}): ManagedDBSpec => ({
    engine: 'postgres',
    engineVersion: '16',
    instanceClass: 'db.t3.micro',
    allocatedStorage: 20,
    masterUsername: 'app',
    ...extra,
  });

  it('overlapping backup and maintenance windows (moto refuses them as RDS does): following the advice makes it Ready', async () => {
    const ns = await setup('refuse-mdb-win');
    await create(
      managedDbType,
      ns,
      'orders',
      spec({ backup: { window: '04:00-04:30' }, maintenanceWindow: 'sun:04:00-sun:04:30' }),
    );
    const c = await condition(managedDbType, ns, 'orders', terminal);
    expect(c.message).toMatch(
      /^create: spec\.backup\.window "04:00-04:30": RDS refused it in create DB instance \S+ \(InvalidParameterValue: "The backup window and maintenance window must not overlap\."\): move spec\.backup\.window so it does not overlap spec\.maintenanceWindow "sun:04:00-sun:04:30"/,
    );
    const events = await eventsFor(admin, ns, 'orders');
    expect(
      events.some((e) => e.type === 'Warning' && e.note.includes('spec.backup.window "04:00-04:30"')),
    ).toBe(true);
    // The advice: move the backup window an hour earlier.
    await patchSpec(managedDbType, ns, 'orders', { backup: { window: '03:00-03:30' } });
    await condition(managedDbType, ns, 'orders', ready);
    await condition(managedDbType, ns, 'orders', { type: 'Synced', status: 'True' });
  });

  it('a snapshot RDS does not have names spec.restoreFrom.snapshotIdentifier', async () => {
    const ns = await setup('refuse-mdb-snap');
    // A snapshot Skylift made for this namespace, so the check before the restore passes; then gone
    // by the time of the restore call (the refusal injected), as after a delete in between.
    const { CreateDBInstanceCommand, CreateDBSnapshotCommand } = await import('@aws-sdk/client-rds');
    const rds = new RDSClient(awsClientConfig(stackInfo().awsEndpoint));
    const source = `src-${ns}`.slice(0, 60);
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: source,
        Engine: 'postgres',
        DBInstanceClass: 'db.t3.micro',
        AllocatedStorage: 20,
        MasterUsername: 'app',
        MasterUserPassword: 'made-for-this-1',
      }),
    );
    await rds.send(
      new CreateDBSnapshotCommand({
        DBInstanceIdentifier: source,
        DBSnapshotIdentifier: 'gone-snap',
        Tags: Object.entries(
          ownershipTagMap({ uid: 'u-source', owner: `${ns}/source`, cluster: 'test-cluster' }),
        ).map(([Key, Value]) => ({ Key, Value })),
      }),
    );
    proxy.inject({
      service: 'rds',
      operation: 'RestoreDBInstanceFromDBSnapshot',
      fault: {
        kind: 'error',
        status: 404,
        code: 'DBSnapshotNotFound',
        message: 'DBSnapshot gone-snap not found.',
      },
    });
    await create(managedDbType, ns, 'restored', spec({ restoreFrom: { snapshotIdentifier: 'gone-snap' } }));
    const c = await condition(managedDbType, ns, 'restored', terminal);
    expect(c.message).toMatch(
      /^create: spec\.restoreFrom\.snapshotIdentifier "gone-snap": RDS refused it in create DB instance \S+ \(DBSnapshotNotFound: "DBSnapshot gone-snap not found\."\): spec\.restoreFrom\.snapshotIdentifier is fixed at create, so delete this ManagedDB and create it again/,
    );
  });
});

describe('MyIngress: Elastic Load Balancing refusals name the field and a fix', () => {
  async function setup(prefix: string): Promise<string> {
    const ns = await newNamespace(admin, prefix);
    running.push(
      await startController((s) => myIngressController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
      }),
    );
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    return ns;
  }
  const spec = (healthCheck: { intervalSeconds: number; timeoutSeconds: number }): MyIngressSpec => ({
    subnets,
    scheme: 'internal',
    listeners: [
      {
        port: 80,
        protocol: 'HTTP',
        defaultAction: { forward: { service: { name: 'web', port: 80, healthCheck } } },
      },
    ],
  });

  // Issue 29: admission refuses a timeout not below the interval; ELBv2's refusal (for an object
  // admitted before that rule) still names the field, and following it makes the object Ready.
  it('a health check timeout not below its interval: refused at admission; ELBv2’s refusal names the field, and following the advice makes it Ready', async () => {
    const ns = await setup('refuse-ming-hc');
    await expect(
      create(myIngressType, ns, 'early', spec({ intervalSeconds: 5, timeoutSeconds: 10 })),
    ).rejects.toThrow(/healthCheck\.timeoutSeconds \(default 5\) must be below healthCheck\.intervalSeconds/);
    const refused = proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'CreateTargetGroup',
      fault: {
        kind: 'error',
        status: 400,
        code: 'ValidationError',
        message: "Health check timeout '4' must be smaller than the interval '5'",
      },
      times: 1,
    });
    await create(myIngressType, ns, 'shop', spec({ intervalSeconds: 5, timeoutSeconds: 4 }));
    const c = await condition(myIngressType, ns, 'shop', terminal);
    expect(refused.hits).toBe(1);
    expect(c.message).toContain(
      'spec.listeners[0].defaultAction.forward.service.healthCheck.timeoutSeconds 4: Elastic Load Balancing refused it in ',
    );
    expect(c.message).toContain(
      `(ValidationError: "Health check timeout '4' must be smaller than the interval '5'")`,
    );
    expect(c.message).toMatch(/: keep healthCheck\.timeoutSeconds below healthCheck\.intervalSeconds/);
    await patchSpec(myIngressType, ns, 'shop', spec({ intervalSeconds: 15, timeoutSeconds: 4 }));
    await condition(myIngressType, ns, 'shop', ready);
  });

  it('an ACM certificate AWS does not have names the listener’s certificateArn', async () => {
    const ns = await setup('refuse-ming-cert');
    const arn = 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000';
    proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'CreateListener',
      fault: {
        kind: 'error',
        status: 400,
        code: 'CertificateNotFound',
        message: `Certificate '${arn}' not found`,
      },
    });
    await create(myIngressType, ns, 'secure', {
      subnets,
      scheme: 'internal',
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: arn,
          defaultAction: { fixedResponse: { statusCode: 404 } },
        },
      ],
    } satisfies MyIngressSpec);
    const c = await condition(myIngressType, ns, 'secure', terminal);
    expect(c.message).toMatch(
      new RegExp(
        `spec\\.listeners\\[0\\]\\.certificateArn "${arn}": Elastic Load Balancing refused it in .*\\(CertificateNotFound: .*\\): set it to the ARN of an ISSUED ACM certificate`,
      ),
    );
  });
});

describe('DNSRecord: Route 53 refusals name the field and a fix', () => {
  it('a quoted TXT string over 255 characters (refused as Route 53 does): following the advice makes it Ready', async () => {
    const ns = await newNamespace(admin, 'refuse-dns-txt');
    const r53 = route53At(stackInfo().awsEndpoint);
    const zone = `${ns}.example.com`;
    const zoneId = await createZone(r53, zone);
    running.push(await startDnsController({ namespace: ns, endpoint: proxy.endpoint }));
    const text = 'v=spf1 ' + 'a'.repeat(290);
    // Route 53 refuses a character string over 255 characters; moto accepts it.
    proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      match: (call) => /a{256,}/.test(call.body),
      fault: {
        kind: 'error',
        status: 400,
        code: 'InvalidChangeBatch',
        message: `[Invalid Resource Record: 'FATAL problem: TXTRDataTooLong (Value is too long) encountered with '"${text.slice(0, 40)}'']`,
      },
    });
    await createDnsRecord(admin, ns, 'spf', {
      zoneName: zone,
      name: 'spf',
      type: 'TXT',
      records: [`"${text}"`],
    });
    const c = await waitFor(
      async () => {
        const o = await readObject<ManagedObject>(admin, dnsRecordType, ns, 'spf');
        const s = o?.status?.conditions?.find((x) => x.type === 'Synced');
        return s?.reason === 'Terminal' ? s : undefined;
      },
      { timeoutMs: 30_000, description: 'spf Terminal' },
    );
    expect(c.message).toMatch(
      /spec\.records \[".*"\]: Route 53 refused it in change record sets \(InvalidChangeBatch: ".*TXTRDataTooLong.*"\): a TXT string holds at most 255 characters: write the value unquoted \(Skylift splits it into 255-character strings\)/,
    );
    // The advice: write it unquoted.
    await patchSpec(dnsRecordType, ns, 'spf', { records: [text] });
    await condition(dnsRecordType, ns, 'spf', ready);
    expect(findRecord(await listRecords(r53, zoneId), `spf.${zone}`, 'TXT')).toBeDefined();
  });
});
