import type { ResourceType } from '../../apis/meta.ts';
import type { ManagedObject, ManagedSpec, ManagedStatus } from '../../apis/managed.ts';
import { managedSpecProperties, managedSpecRules, managedStatusProperties } from '../../apis/common.ts';
import { apiGroup, apiVersion, managedCrd, type CrdManifest } from '../../apis/crd.ts';
import {
  arr,
  bool,
  createOnly,
  immutable,
  int,
  obj,
  str,
  stringMap,
  type Schema,
} from '../../apis/schema.ts';
import { managedFieldContract, type FieldContract } from '../../apis/fieldContract.ts';

export const managedDbType: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'manageddbs',
  kind: 'ManagedDB',
  namespaced: true,
};

export interface ManagedDBSpec extends ManagedSpec {
  engine: 'postgres' | 'mysql' | 'mariadb';
  engineVersion?: string;
  allowMajorVersionUpgrade?: boolean;
  instanceClass: string;
  allocatedStorage: number;
  maxAllocatedStorage?: number;
  storageType?: 'gp2' | 'gp3' | 'io1' | 'io2';
  iops?: number;
  multiAZ?: boolean;
  dbName?: string;
  masterUsername: string;
  password?: { managedByAWS?: boolean };
  subnetGroupName?: string;
  vpcSecurityGroupIds?: string[];
  publiclyAccessible?: boolean;
  storageEncrypted?: boolean;
  backup?: { retentionDays?: number; window?: string; snapshotSchedule?: string; keepSnapshots?: number };
  maintenanceWindow?: string;
  deletionProtection?: boolean;
  finalSnapshot?: { enabled?: boolean };
  restoreFrom?: { snapshotIdentifier: string };
  applyImmediately?: boolean;
  writeConnectionSecretToRef?: { name: string };
  tags?: Record<string, string>;
}

/** What Skylift reports of a ManagedDB's instance (the status schema below lists the same fields). */
export interface ManagedDBStatus extends ManagedStatus {
  arn?: string | undefined;
  identifier?: string | undefined;
  dbInstanceStatus?: string | undefined;
  engineVersion?: string | undefined;
  acceptedEngineVersion?: string | undefined;
  endpoint?: { address?: string | undefined; port?: number | undefined } | undefined;
  masterUserSecretArn?: string | undefined;
  pendingModifications?: string[] | undefined;
  lastSnapshot?:
    { name?: string | undefined; state?: string | undefined; time?: string | undefined } | undefined;
  nextSnapshot?: string | undefined;
  lastRequest?: { id?: string | undefined; result?: string | undefined } | undefined;
}

export type ManagedDB = ManagedObject<ManagedDBSpec, ManagedDBStatus>;

const window = (what: string, pattern: string, example: string): Schema =>
  str(`${what}, e.g. ${example} (UTC).`, { pattern });

const spec: Schema = obj(
  'The desired RDS DB instance.',
  {
    engine: str('Database engine. Immutable.', {
      enum: ['postgres', 'mysql', 'mariadb'],
      'x-kubernetes-validations': [immutable('engine')],
    }),
    engineVersion: str(
      'Engine version, e.g. 16 or 16.4 (a major version follows AWS’s default minor). Upgrades go through ModifyDBInstance.',
      {
        pattern: '^[0-9]+(\\.[0-9]+){0,2}$',
      },
    ),
    allowMajorVersionUpgrade: bool('Allow changing engineVersion to another major version.', {
      default: false,
    }),
    instanceClass: str('Instance class, e.g. db.t3.micro.', { pattern: '^db\\.[a-z0-9]+\\.[a-z0-9]+$' }),
    allocatedStorage: int('Storage in GiB.', { minimum: 20, maximum: 65536 }),
    maxAllocatedStorage: int('Upper limit for storage autoscaling in GiB (absent: no autoscaling).', {
      minimum: 21,
      maximum: 65536,
    }),
    storageType: str('Storage type.', { enum: ['gp2', 'gp3', 'io1', 'io2'], default: 'gp3' }),
    iops: int('Provisioned IOPS (io1, io2, gp3).', { minimum: 1000, maximum: 256000 }),
    multiAZ: bool('Run a standby in another Availability Zone.', { default: false }),
    dbName: str('Name of the database created with the instance. Immutable.', {
      pattern: '^[A-Za-z][A-Za-z0-9_]{0,62}$',
      'x-kubernetes-validations': [immutable('dbName')],
    }),
    masterUsername: str('Master user name. Immutable.', {
      pattern: '^[A-Za-z][A-Za-z0-9_]{0,15}$',
      'x-kubernetes-validations': [immutable('masterUsername')],
    }),
    password: obj(
      'How the master password is kept: managedByAWS puts it in AWS Secrets Manager (ManageMasterUserPassword); otherwise Skylift generates one and keeps it in the connection Secret. Never a plain-text field.',
      { managedByAWS: bool('Let RDS manage the password in Secrets Manager.', { default: false }) },
    ),
    subnetGroupName: str('DB subnet group. Immutable.', {
      maxLength: 255,
      'x-kubernetes-validations': [immutable('subnetGroupName')],
    }),
    vpcSecurityGroupIds: arr(
      'VPC security groups.',
      str('A security group ID.', { pattern: '^sg-[0-9a-f]+$' }),
      { maxItems: 5 },
    ),
    publiclyAccessible: bool('Whether the instance gets a public address.', { default: false }),
    storageEncrypted: bool('Encrypt storage at rest. Immutable.', {
      default: true,
      'x-kubernetes-validations': [immutable('storageEncrypted')],
    }),
    backup: obj('Automated backups.', {
      retentionDays: int('Days automated backups are kept (0 disables them).', {
        minimum: 0,
        maximum: 35,
        default: 7,
      }),
      window: window(
        'Daily backup window',
        '^([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-3]):[0-5][0-9]$',
        '03:00-03:30',
      ),
      snapshotSchedule: str(
        'Cron schedule (5 fields, UTC) for manual snapshots Skylift takes beyond RDS’s automated backups, e.g. "0 3 * * *".',
        { pattern: '^\\S+( \\S+){4}$', maxLength: 100 },
      ),
      keepSnapshots: int('How many scheduled snapshots to keep; older ones are deleted.', {
        minimum: 1,
        maximum: 100,
        default: 7,
      }),
    }),
    maintenanceWindow: window(
      'Weekly maintenance window',
      '^(mon|tue|wed|thu|fri|sat|sun):[0-2][0-9]:[0-5][0-9]-(mon|tue|wed|thu|fri|sat|sun):[0-2][0-9]:[0-5][0-9]$',
      'sun:04:00-sun:04:30',
    ),
    deletionProtection: bool('When true, AWS refuses to delete the instance (and Skylift says so).', {
      default: false,
    }),
    finalSnapshot: obj('Snapshot taken when the instance is deleted.', {
      enabled: bool('Take a final snapshot named <identifier>-final (set false to skip, explicitly).', {
        default: true,
      }),
    }),
    restoreFrom: obj(
      'Create the instance from a snapshot instead of empty. Immutable.',
      { snapshotIdentifier: str('DB snapshot identifier or ARN.', { minLength: 1, maxLength: 255 }) },
      {
        required: ['snapshotIdentifier'],
        'x-kubernetes-validations': [immutable('restoreFrom')],
      },
    ),
    applyImmediately: bool('Apply modifications now instead of in the maintenance window.', {
      default: false,
    }),
    writeConnectionSecretToRef: obj(
      'Secret (same namespace) Skylift writes host, port, username, password (or secretArn), dbname, engine and uri to.',
      {
        name: str('Secret name.', { pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', maxLength: 253 }),
      },
      { required: ['name'] },
    ),
    tags: stringMap('Extra tags on the DB instance (skylift.dev/* keys are reserved).', {
      'x-kubernetes-validations': [
        {
          rule: "self.all(k, !k.startsWith('skylift.dev/'))",
          message: 'tag keys starting with skylift.dev/ are reserved',
        },
      ],
    }),
    ...managedSpecProperties,
  },
  {
    required: ['engine', 'instanceClass', 'allocatedStorage', 'masterUsername'],
    'x-kubernetes-validations': [
      ...managedSpecRules,
      createOnly('restoreFrom', 'a snapshot is restored only when the instance is created'),
      createOnly(
        'subnetGroupName',
        'RDS moves an instance to another subnet group only through a new instance (restore a snapshot into a new object)',
      ),
      {
        rule: '!has(self.maxAllocatedStorage) || self.maxAllocatedStorage > self.allocatedStorage',
        message: 'maxAllocatedStorage must exceed allocatedStorage',
      },
      {
        rule: "!has(self.iops) || (has(self.storageType) && self.storageType in ['io1', 'io2', 'gp3'])",
        message: 'iops needs storageType io1, io2 or gp3',
      },
      {
        rule: "!has(self.storageType) || !(self.storageType in ['io1', 'io2']) || has(self.iops)",
        message: 'storageType io1 and io2 need iops',
      },
      { rule: '!has(oldSelf.dbName) || has(self.dbName)', message: 'dbName cannot be removed' },
      {
        rule: '!has(self.restoreFrom) || !has(self.dbName)',
        message:
          'dbName is not used with restoreFrom: a restored instance keeps its snapshot’s database (the connection Secret’s dbname says which); leave dbName out',
      },
      {
        rule: "!has(oldSelf.iops) || has(self.iops) || (has(self.storageType) && self.storageType == 'gp2')",
        message:
          'iops cannot be removed while storageType is io1, io2 or gp3: set the IOPS you want (gp3 includes 3,000 below 400 GiB), or storageType gp2',
      },
      {
        rule: '!has(oldSelf.vpcSecurityGroupIds) || has(self.vpcSecurityGroupIds)',
        message:
          'vpcSecurityGroupIds cannot be removed once set: list the security groups the instance should have (the VPC’s default one, for RDS’s default)',
      },
    ],
  },
);

const status: Schema = obj('What Skylift observed in RDS.', {
  arn: str('DB instance ARN.'),
  identifier: str('DB instance identifier.'),
  dbInstanceStatus: str('RDS status: creating, available, modifying, backing-up, …'),
  engineVersion: str('Engine version RDS reports.'),
  acceptedEngineVersion: str(
    'The spec.engineVersion Skylift last accepted (created with, found in sync, or asked RDS for). A spec.engineVersion lower than both this and the running version asks for a downgrade and is refused (Synced=False, Terminal); lower than the running version alone it is a floor RDS has moved past by an automatic minor upgrade. Absent (an adopted instance, or an object from before Skylift recorded it), the spec is a floor and is recorded at the next reconcile.',
  ),
  endpoint: obj('Where to connect.', { address: str('Host name.'), port: int('Port.') }),
  masterUserSecretArn: str('Secrets Manager ARN of the master password (password.managedByAWS).'),
  pendingModifications: arr(
    'Modifications RDS has accepted but not applied yet.',
    str('One pending change.'),
  ),
  lastSnapshot: obj('The newest scheduled snapshot.', {
    name: str('Snapshot identifier.'),
    state: str('RDS snapshot status: creating, available, failed.'),
    time: str('The scheduled run it belongs to.', { format: 'date-time' }),
  }),
  nextSnapshot: str('When the next scheduled snapshot is due.', { format: 'date-time' }),
  lastRequest: obj(
    'The last on-demand operation (annotation aws.skylift.dev/request, or skylift db) Skylift carried out.',
    {
      id: str('Request ID.'),
      result: str('What happened.'),
    },
  ),
  ...managedStatusProperties,
});

/** The manageddb CRD. Pure. */
export function managedDbCrd(): CrdManifest {
  return managedCrd({
    type: managedDbType,
    shortName: 'mdb',
    description: 'An RDS DB instance managed by Skylift, with its connection Secret and final snapshot.',
    columns: [
      { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
      { name: 'Version', type: 'string', jsonPath: '.status.engineVersion' },
      { name: 'Class', type: 'string', jsonPath: '.spec.instanceClass' },
      { name: 'Status', type: 'string', jsonPath: '.status.dbInstanceStatus' },
      { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint.address' },
    ],
    spec,
    status,
  });
}

const modify = (what: string): { applied: string } => ({ applied: `ModifyDBInstance ${what}` });

/** What becomes of each ManagedDB spec field after create (src/apis/fieldContract.ts). */
export const managedDbFieldContract: FieldContract = {
  engine: { fixed: 'RDS cannot change an instance’s engine' },
  dbName: { fixed: 'RDS names the initial database at create only' },
  masterUsername: { fixed: 'RDS sets the master user name at create only' },
  subnetGroupName: { fixed: 'RDS moves an instance to another subnet group only through a new instance' },
  storageEncrypted: { fixed: 'RDS encrypts storage at create only' },
  restoreFrom: { fixed: 'a snapshot is restored only when the instance is created' },
  engineVersion: modify('EngineVersion'),
  instanceClass: modify('DBInstanceClass'),
  allocatedStorage: modify('AllocatedStorage'),
  maxAllocatedStorage: modify(
    'MaxAllocatedStorage (removed: set to the allocated storage, which turns autoscaling off)',
  ),
  storageType: modify('StorageType'),
  iops: modify('Iops'),
  multiAZ: modify('MultiAZ'),
  'password.managedByAWS': modify(
    'ManageMasterUserPassword (turned off: with a new MasterUserPassword, written to the connection Secret first)',
  ),
  vpcSecurityGroupIds: modify('VpcSecurityGroupIds (once set, cannot be removed: name the groups to use)'),
  publiclyAccessible: modify('PubliclyAccessible'),
  'backup.retentionDays': modify('BackupRetentionPeriod'),
  'backup.window': modify('PreferredBackupWindow'),
  maintenanceWindow: modify('PreferredMaintenanceWindow'),
  deletionProtection: modify('DeletionProtection'),
  tags: {
    applied: 'AddTagsToResource and RemoveTagsFromResource (only tag keys Skylift applied are removed)',
  },
  allowMajorVersionUpgrade: {
    kubernetes:
      'allows the next engineVersion change to cross a major version (sent with that ModifyDBInstance)',
  },
  applyImmediately: {
    kubernetes: 'how later modifications are sent: at once, or in the maintenance window',
  },
  'backup.snapshotSchedule': { kubernetes: 'when Skylift takes its scheduled snapshots (CreateDBSnapshot)' },
  'backup.keepSnapshots': {
    kubernetes: 'how many scheduled snapshots Skylift keeps (DeleteDBSnapshot of older ones)',
  },
  finalSnapshot: { kubernetes: 'read when the object is deleted (DeleteDBInstance SkipFinalSnapshot)' },
  writeConnectionSecretToRef: {
    kubernetes:
      'the Secret Skylift keeps the credentials in; renamed, the new Secret gets a new password set in RDS first',
  },
  ...managedFieldContract,
};
