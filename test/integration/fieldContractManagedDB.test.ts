// ManagedDB's field contract, generated half (test/support/fieldProbes.ts): every field the
// contract says is applied in AWS is changed after create (and back where RDS can go back), and
// RDS shows it as soon as the object is Ready and Synced at the new generation; every fixed field's change is
// refused by the apiserver. A field added to the contract without a probe fails the first test.
import { CreateSecurityGroupCommand, EC2Client } from '@aws-sdk/client-ec2';
import { DescribeDBInstancesCommand, RDSClient, type DBInstance } from '@aws-sdk/client-rds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import {
  managedDbFieldContract,
  managedDbType,
  type ManagedDB,
  type ManagedDBSpec,
} from '../../src/kinds/manageddb/api.ts';
import { managedDbController } from '../../src/kinds/manageddb/controller.ts';
import { dbIdentifier } from '../../src/kinds/manageddb/identity.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import {
  describeFieldContract,
  waitSettledAtGeneration,
  type FieldProbe,
  type FixedProbe,
} from '../support/fieldProbes.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo } from '../support/stack.ts';

let admin: KubeClient;
let rds: RDSClient;
let controller: RunningController;
let ns: string;
let id: string;
let groups: string[] = [];
const name = 'probed';

async function instance(): Promise<DBInstance> {
  const out = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }));
  const db = out.DBInstances?.[0];
  if (db === undefined) throw new Error(`no DB instance ${id}`);
  return db;
}

/** A probe reading one thing of the instance. */
const probe = (
  field: string,
  read: (db: DBInstance) => unknown,
  before: unknown,
  ...steps: [Record<string, unknown>, unknown][]
): FieldProbe => ({
  field,
  before,
  steps: steps.map(([patch, aws]) => ({ patch, aws })),
  read: async () => read(await instance()),
});

/** The user's tags on the instance (Skylift's own skylift.dev/* tags left out). */
const userTags = (db: DBInstance): Record<string, string> =>
  Object.fromEntries(
    (db.TagList ?? [])
      .filter((t) => !(t.Key ?? '').startsWith('skylift.dev/'))
      .map((t) => [t.Key ?? '', t.Value ?? '']),
  );

const base = (): ManagedDBSpec => ({
  engine: 'postgres',
  engineVersion: '16.3',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  maxAllocatedStorage: 100,
  storageType: 'gp3',
  dbName: 'app',
  masterUsername: 'app',
  vpcSecurityGroupIds: [groups[0] ?? ''],
  backup: { retentionDays: 7, window: '03:00-03:30' },
  maintenanceWindow: 'sun:06:00-sun:06:30',
  applyImmediately: true,
  writeConnectionSecretToRef: { name: 'probed-conn' },
  tags: { team: 'web' },
});

const probes = (): FieldProbe[] => [
  probe('engineVersion', (db) => db.EngineVersion, '16.3', [{ engineVersion: '16.4' }, '16.4']),
  probe(
    'instanceClass',
    (db) => db.DBInstanceClass,
    'db.t3.micro',
    [{ instanceClass: 'db.t3.small' }, 'db.t3.small'],
    [{ instanceClass: 'db.t3.micro' }, 'db.t3.micro'],
  ),
  // RDS cannot shrink storage: one way only.
  probe('allocatedStorage', (db) => db.AllocatedStorage, 20, [{ allocatedStorage: 30 }, 30]),
  probe(
    'maxAllocatedStorage',
    (db) => db.MaxAllocatedStorage,
    100,
    [{ maxAllocatedStorage: 200 }, 200],
    [{ maxAllocatedStorage: null }, undefined],
    [{ maxAllocatedStorage: 100 }, 100],
  ),
  probe(
    'storageType',
    (db) => db.StorageType,
    'gp3',
    [{ storageType: 'gp2' }, 'gp2'],
    [{ storageType: 'gp3' }, 'gp3'],
  ),
  probe(
    'iops',
    (db) => ({ type: db.StorageType, iops: db.Iops }),
    { type: 'gp3', iops: undefined },
    [
      { storageType: 'io1', iops: 3000 },
      { type: 'io1', iops: 3000 },
    ],
    [{ iops: 4000 }, { type: 'io1', iops: 4000 }],
  ),
  probe('multiAZ', (db) => db.MultiAZ, false, [{ multiAZ: true }, true], [{ multiAZ: false }, false]),
  probe(
    'password.managedByAWS',
    (db) => db.MasterUserSecret?.SecretArn !== undefined,
    false,
    [{ password: { managedByAWS: true } }, true],
    [{ password: { managedByAWS: false } }, false],
  ),
  probe(
    'vpcSecurityGroupIds',
    (db) => (db.VpcSecurityGroups ?? []).map((g) => g.VpcSecurityGroupId).sort(),
    [groups[0]],
    [{ vpcSecurityGroupIds: groups }, [...groups].sort()],
    [{ vpcSecurityGroupIds: [groups[0]] }, [groups[0]]],
  ),
  probe(
    'publiclyAccessible',
    (db) => db.PubliclyAccessible,
    false,
    [{ publiclyAccessible: true }, true],
    [{ publiclyAccessible: false }, false],
  ),
  probe(
    'backup.retentionDays',
    (db) => db.BackupRetentionPeriod,
    7,
    [{ backup: { retentionDays: 14 } }, 14],
    [{ backup: { retentionDays: 7 } }, 7],
  ),
  probe(
    'backup.window',
    (db) => db.PreferredBackupWindow,
    '03:00-03:30',
    [{ backup: { window: '04:00-04:30' } }, '04:00-04:30'],
    [{ backup: { window: '03:00-03:30' } }, '03:00-03:30'],
  ),
  probe(
    'maintenanceWindow',
    (db) => db.PreferredMaintenanceWindow,
    'sun:06:00-sun:06:30',
    [{ maintenanceWindow: 'mon:07:00-mon:07:30' }, 'mon:07:00-mon:07:30'],
    [{ maintenanceWindow: 'sun:06:00-sun:06:30' }, 'sun:06:00-sun:06:30'],
  ),
  probe(
    'deletionProtection',
    (db) => db.DeletionProtection,
    false,
    [{ deletionProtection: true }, true],
    [{ deletionProtection: false }, false],
  ),
  probe(
    'tags',
    userTags,
    { team: 'web' },
    [{ tags: { team: 'api', env: 'prod' } }, { team: 'api', env: 'prod' }],
    [{ tags: { team: 'web', env: null } }, { team: 'web' }],
    [{ tags: null }, {}],
  ),
];

const fixed: FixedProbe[] = [
  { field: 'engine', patch: { engine: 'mysql' } },
  { field: 'dbName', patch: { dbName: 'other' } },
  { field: 'masterUsername', patch: { masterUsername: 'other' } },
  { field: 'subnetGroupName', patch: { subnetGroupName: 'other' } },
  { field: 'storageEncrypted', patch: { storageEncrypted: false } },
  { field: 'restoreFrom', patch: { restoreFrom: { snapshotIdentifier: 'other' } } },
  { field: 'externalName', patch: { externalName: 'other' } },
];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  rds = new RDSClient(direct);
  const ec2 = new EC2Client(direct);
  groups = [];
  for (const g of ['probe-a', 'probe-b']) {
    const out = await ec2.send(
      new CreateSecurityGroupCommand({ GroupName: `${g}-${Date.now()}`, Description: g }),
    );
    groups.push(out.GroupId ?? '');
  }
  ns = await newNamespace(admin, 'mdb-contract');
  controller = await startController((s) => managedDbController(s, { pollMs: 300 }), {
    namespace: ns,
    endpoint: stackInfo().awsEndpoint,
  });
  const created = await admin.create<ManagedDB>(resourcePath(managedDbType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'ManagedDB',
    metadata: { name },
    spec: base(),
  });
  id = dbIdentifier(ns, name, created.metadata.uid ?? '');
  await waitSettledAtGeneration(admin, managedDbType, ns, name, 'create');
});
afterAll(async () => {
  await controller.stop();
});

describeFieldContract({
  kind: 'ManagedDB',
  service: 'RDS',
  type: managedDbType,
  contract: managedDbFieldContract,
  probes,
  fixed,
  object: () => ({ admin, ns, name }),
  refused: /immutable|cannot be set, changed or removed/,
});

describe('ManagedDB field contract, beyond the probes', () => {
  it('keeps a password in the connection Secret through every change', async () => {
    const s = await admin.get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${ns}/secrets/probed-conn`,
    );
    const data = Object.fromEntries(
      Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
    expect(data.password ?? '').not.toBe('');
    expect(data.secretArn).toBeUndefined();
  });
});
