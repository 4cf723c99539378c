// What RDS's terminal refusals mean for a ManagedDB's spec: the field and a fix
// that works. Rows are tried in order (most specific first); a refusal no row
// matches keeps AWS's words with generic advice (src/kinds/refusals.ts).
import { accessDenied, type Refusal, type RefusalTable } from '../refusals.ts';
import type { ManagedDBSpec } from './api.ts';

type Row = Refusal<ManagedDBSpec>;

/** The fix for a field fixed at create (CEL): nothing was created, so the object is made again. */
const recreate = (field: string, what: string): string =>
  `${field} is fixed at create, so delete this ManagedDB and create it again with ${field} set to ${what} (RDS created nothing)`;

const engineVersions = (s: ManagedDBSpec): string =>
  `aws rds describe-db-engine-versions --engine ${s.engine} --query 'DBEngineVersions[].EngineVersion'`;

const orderable = (s: ManagedDBSpec): string =>
  `aws rds describe-orderable-db-instance-options --engine ${s.engine}${s.engineVersion !== undefined ? ` --engine-version ${s.engineVersion}` : ''} --query 'OrderableDBInstanceOptions[].DBInstanceClass'`;

const rows: readonly Row[] = [
  // Engine version: unknown, or not an upgrade RDS offers from the running one.
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message:
      /Cannot find (?:major )?version|Cannot upgrade|invalid (?:DB )?engine ?version|engine ?version \S+ (?:is )?not (?:valid|supported|available)/i,
    hint: (s, f) =>
      /upgrade/i.test(f.message)
        ? {
            field: 'spec.engineVersion',
            value: s.engineVersion,
            fix: `set spec.engineVersion to a version RDS can upgrade this instance to (aws rds describe-db-engine-versions --engine ${s.engine} --engine-version <running version> --query 'DBEngineVersions[].ValidUpgradeTarget[].EngineVersion')`,
          }
        : {
            field: 'spec.engineVersion',
            value: s.engineVersion,
            fix: `set spec.engineVersion to a version RDS offers for ${s.engine} (${engineVersions(s)}), or remove it for RDS's default`,
          },
  },
  {
    codes: ['InvalidParameterCombination'],
    message: /AllowMajorVersionUpgrade/i,
    hint: (s) => ({
      field: 'spec.allowMajorVersionUpgrade',
      value: s.allowMajorVersionUpgrade ?? false,
      fix: 'set spec.allowMajorVersionUpgrade to true to upgrade to another major version, or set spec.engineVersion back to the running major version',
    }),
  },
  // Instance class: unknown, or not offered for this engine/version/storage.
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /DBInstanceClass|instance class/i,
    hint: (s) => ({
      field: 'spec.instanceClass',
      value: s.instanceClass,
      fix: `set spec.instanceClass to a class RDS offers for ${s.engine}${s.engineVersion !== undefined ? ` ${s.engineVersion}` : ''} in this region (${orderable(s)})`,
    }),
  },
  {
    codes: ['InsufficientDBInstanceCapacity'],
    hint: (s) => ({
      field: 'spec.instanceClass',
      value: s.instanceClass,
      fix: `RDS has no ${s.instanceClass} capacity in the Availability Zone it chose: set spec.instanceClass to another class (${orderable(s)}), or wait: Skylift tries again at the resync period`,
    }),
  },
  // Storage: IOPS first (their messages mention storage too), then throughput, type and size.
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /\biops\b|provisioned iops/i,
    hint: (s) => ({
      field: 'spec.iops',
      value: s.iops,
      fix: `set spec.iops within what RDS allows for storage type ${s.storageType ?? 'gp3'} and ${s.allocatedStorage} GiB (io1/io2: 1000 or more and at most 50 (io1) or 1000 (io2) IOPS per GiB; gp3: only from 400 GiB for postgres and mysql), or remove spec.iops and use storageType gp3 or gp2`,
    }),
  },
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /max(?:imum)?\s*(?:allocated\s*)?storage/i,
    hint: (s) => ({
      field: 'spec.maxAllocatedStorage',
      value: s.maxAllocatedStorage,
      fix: `set spec.maxAllocatedStorage at least 10% above spec.allocatedStorage (${s.allocatedStorage} GiB), or remove it to turn storage autoscaling off`,
    }),
  },
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /storage size|allocated ?storage|AllocatedStorage/i,
    hint: (s) => ({
      field: 'spec.allocatedStorage',
      value: s.allocatedStorage,
      fix: `set spec.allocatedStorage to a size RDS allows for ${s.engine} on ${s.storageType ?? 'gp3'} (20 to 65536 GiB for gp2/gp3, 100 GiB or more for io1/io2)`,
    }),
  },
  {
    codes: ['StorageTypeNotSupported', 'InvalidParameterCombination', 'InvalidParameterValue'],
    message: /storage type|StorageType/i,
    hint: (s) => ({
      field: 'spec.storageType',
      value: s.storageType ?? 'gp3',
      fix: `set spec.storageType to one RDS supports for ${s.instanceClass} and ${s.engine} (gp3, gp2, io1 or io2: aws rds describe-orderable-db-instance-options --engine ${s.engine} --db-instance-class ${s.instanceClass} --query 'OrderableDBInstanceOptions[].StorageType')`,
    }),
  },
  {
    codes: ['StorageTypeNotSupported'],
    hint: (s) => ({
      field: 'spec.storageType',
      value: s.storageType ?? 'gp3',
      fix: `set spec.storageType to one RDS supports for ${s.instanceClass} (gp3, gp2, io1 or io2)`,
    }),
  },
  {
    codes: ['StorageQuotaExceeded'],
    hint: (s) => ({
      subject: `the account's RDS storage quota ("Total storage for all DB instances") has no room for ${s.allocatedStorage} GiB`,
      fix: 'raise the quota in Service Quotas (aws service-quotas list-service-quotas --service-code rds), delete DB instances you no longer need, or lower spec.allocatedStorage',
    }),
  },
  {
    codes: ['InstanceQuotaExceeded'],
    hint: () => ({
      subject: `the account's RDS "DB instances" quota is used up`,
      fix: 'raise it in Service Quotas (aws service-quotas list-service-quotas --service-code rds) or delete DB instances you no longer need (aws rds describe-db-instances)',
    }),
  },
  // Names fixed at create.
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /MasterUsername|master user ?name/i,
    hint: (s) => ({
      field: 'spec.masterUsername',
      value: s.masterUsername,
      fix: recreate(
        'spec.masterUsername',
        `a name ${s.engine} does not reserve (not admin, postgres, rdsadmin, root or another reserved word; 1-16 letters, digits or _ starting with a letter)`,
      ),
    }),
  },
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /\bDBName\b|database ?name/i,
    hint: (s) => ({
      field: 'spec.dbName',
      value: s.dbName,
      fix: recreate(
        'spec.dbName',
        `a name ${s.engine} accepts and does not reserve (letters, digits and _ starting with a letter; not postgres, template0, template1, mysql or another reserved word)`,
      ),
    }),
  },
  // Network.
  {
    codes: ['DBSubnetGroupNotFound'],
    hint: (s) => ({
      field: 'spec.subnetGroupName',
      value: s.subnetGroupName,
      fix: `create the DB subnet group ${s.subnetGroupName !== undefined ? JSON.stringify(s.subnetGroupName) : ''} in this region (aws rds create-db-subnet-group), or ${recreate('spec.subnetGroupName', 'one that exists (aws rds describe-db-subnet-groups)')}`,
    }),
  },
  {
    codes: ['InvalidVPCNetworkState', 'InvalidParameterValue', 'InvalidParameterCombination'],
    message: /publicly accessible|internet gateway/i,
    hint: (s) => ({
      field: 'spec.publiclyAccessible',
      value: s.publiclyAccessible ?? false,
      fix: 'set spec.publiclyAccessible to false, or use a DB subnet group whose VPC has an internet gateway attached',
    }),
  },
  {
    codes: ['InvalidVPCNetworkState'],
    hint: (s) => ({
      field: 'spec.subnetGroupName',
      value: s.subnetGroupName ?? 'default',
      fix: `give the DB subnet group subnets in at least two Availability Zones of a VPC with DNS hostnames and resolution on (aws rds modify-db-subnet-group), or ${recreate('spec.subnetGroupName', 'another group')}`,
    }),
  },
  {
    codes: ['DBSecurityGroupNotFound', 'InvalidParameterValue', 'InvalidParameterCombination'],
    message: /security group|\bsg-[0-9a-f]+/i,
    hint: (s) => ({
      field: 'spec.vpcSecurityGroupIds',
      value: s.vpcSecurityGroupIds,
      fix: "set spec.vpcSecurityGroupIds to security groups of the DB subnet group's VPC (aws ec2 describe-security-groups --filters Name=vpc-id,Values=<the subnet group's VPC>)",
    }),
  },
  {
    codes: ['DBSecurityGroupNotFound'],
    hint: (s) => ({
      field: 'spec.vpcSecurityGroupIds',
      value: s.vpcSecurityGroupIds,
      fix: "set spec.vpcSecurityGroupIds to security groups that exist in the DB subnet group's VPC (aws ec2 describe-security-groups)",
    }),
  },
  // Restore.
  {
    codes: ['DBSnapshotNotFound'],
    operations: ['RestoreDBInstanceFromDBSnapshot'],
    hint: (s) => ({
      field: 'spec.restoreFrom.snapshotIdentifier',
      value: s.restoreFrom?.snapshotIdentifier,
      fix: recreate(
        'spec.restoreFrom.snapshotIdentifier',
        'a snapshot that exists in this account and region (aws rds describe-db-snapshots --query "DBSnapshots[].DBSnapshotIdentifier"; a shared snapshot by its ARN)',
      ),
    }),
  },
  {
    codes: ['DBSnapshotNotFound'],
    hint: (s) =>
      s.restoreFrom !== undefined
        ? {
            field: 'spec.restoreFrom.snapshotIdentifier',
            value: s.restoreFrom.snapshotIdentifier,
            fix: recreate(
              'spec.restoreFrom.snapshotIdentifier',
              'a snapshot that exists in this account and region (aws rds describe-db-snapshots)',
            ),
          }
        : undefined,
  },
  // Windows.
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /backup window and (?:the )?maintenance window|maintenance window and (?:the )?backup window/i,
    hint: (s) => ({
      field: 'spec.backup.window',
      value: s.backup?.window,
      fix: `move spec.backup.window so it does not overlap spec.maintenanceWindow ${JSON.stringify(s.maintenanceWindow ?? 'chosen by RDS')} (e.g. an hour earlier), or move spec.maintenanceWindow`,
    }),
  },
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /backup window|PreferredBackupWindow/i,
    hint: (s) => ({
      field: 'spec.backup.window',
      value: s.backup?.window,
      fix: 'set spec.backup.window to a daily UTC range of at least 30 minutes, hh:mm-hh:mm, e.g. 03:00-03:30',
    }),
  },
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /maintenance window|PreferredMaintenanceWindow/i,
    hint: (s) => ({
      field: 'spec.maintenanceWindow',
      value: s.maintenanceWindow,
      fix: 'set spec.maintenanceWindow to a weekly UTC range of 30 minutes to 24 hours, ddd:hh:mm-ddd:hh:mm, e.g. sun:04:00-sun:04:30',
    }),
  },
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /backup retention|BackupRetentionPeriod/i,
    hint: (s) => ({
      field: 'spec.backup.retentionDays',
      value: s.backup?.retentionDays ?? 7,
      fix: 'set spec.backup.retentionDays between 1 and 35 (0 turns automated backups off, which RDS refuses for some setups such as read replicas)',
    }),
  },
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /Multi-?AZ/i,
    hint: (s) => ({
      field: 'spec.multiAZ',
      value: s.multiAZ ?? false,
      fix: `set spec.multiAZ to false, or choose a spec.instanceClass that RDS offers Multi-AZ for (${orderable(s)})`,
    }),
  },
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /ManageMasterUserPassword|MasterUserSecret|Secrets Manager/i,
    hint: (s) => ({
      field: 'spec.password.managedByAWS',
      value: s.password?.managedByAWS ?? false,
      fix: 'set spec.password.managedByAWS to false (Skylift then keeps a generated password in the connection Secret)',
    }),
  },
  {
    codes: ['InvalidParameterCombination', 'InvalidParameterValue'],
    message: /encrypt/i,
    hint: (s) => ({
      field: 'spec.storageEncrypted',
      value: s.storageEncrypted ?? true,
      fix: recreate(
        'spec.storageEncrypted',
        `false, or keep it and choose a spec.instanceClass that supports encryption at rest (${orderable(s)})`,
      ),
    }),
  },
  {
    codes: ['KMSKeyNotAccessible'],
    hint: () => ({
      subject: 'the KMS key that encrypts the instance (or the restored snapshot) cannot be used',
      fix: `enable the key and let the operator's IAM role use it (kms:CreateGrant, kms:DescribeKey, kms:Decrypt on the key, and the key policy must allow it); see deploy/iam/policy.json`,
    }),
  },
  {
    codes: ['InvalidParameterValue', 'InvalidParameterCombination'],
    message: /\btag/i,
    operations: ['CreateDBInstance', 'RestoreDBInstanceFromDBSnapshot'],
    hint: (s) => ({
      field: 'spec.tags',
      value: s.tags,
      fix: 'keep spec.tags to at most 47 entries (RDS allows 50 and Skylift adds 3), keys up to 128 and values up to 256 characters, without the aws: prefix',
    }),
  },
  accessDenied(() => 'rds'),
];

/** ManagedDB's refusal table. */
export const manageddbRefusals: RefusalTable<ManagedDBSpec> = { service: 'RDS', entries: rows };
