// What ModifyDBInstance must change to bring an RDS instance to a ManagedDB's spec.
import type { DBInstance, ModifyDBInstanceCommandInput } from '@aws-sdk/client-rds';
import { TerminalError } from '../../runtime/errors.ts';
import type { ManagedDB } from './api.ts';

/** A version's numeric parts ("16.4" → [16, 4]); non-numeric parts count as 0. Pure. */
function versionParts(v: string): number[] {
  return v.split('.').map((p) => Number.parseInt(p, 10) || 0);
}

/** Compares two versions part by part: negative when a < b. Pure. */
function compareVersions(a: string, b: string): number {
  const x = versionParts(a);
  const y = versionParts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Whether an engine version spec is satisfied by what RDS reports. The spec
 * is a floor within its major version, not a pin: "16" is satisfied by any
 * 16.x, and "16.4" also by 16.6 after an automatic minor upgrade (asking
 * for 16.4 again would be a downgrade RDS refuses). Pure.
 */
export function versionSatisfied(want: string | undefined, have: string | undefined): boolean {
  if (want === undefined) return true;
  if (have === undefined) return false;
  if (have === want || have.startsWith(`${want}.`)) return true;
  const major = (v: string): string => v.split('.')[0] ?? '';
  return major(want) === major(have) && compareVersions(have, want) >= 0;
}

/**
 * Whether `want` names an older version than `v`: lower part by part and not
 * a prefix of it ("16" is not older than "16.4", "16.1" is). Pure.
 */
function olderThan(want: string, v: string): boolean {
  return v !== want && !v.startsWith(`${want}.`) && compareVersions(want, v) < 0;
}

/** The major version of a version string ("16.4" → "16"). Pure. */
function majorOf(v: string | undefined): string {
  return (v ?? '').split('.')[0] ?? '';
}

/**
 * The `spec.engineVersion` Skylift last accepted for this object, recorded
 * in `status.acceptedEngineVersion`; undefined when none is recorded (before
 * the first create or observation, or an object adopted through
 * `spec.externalName`). Pure.
 */
export function acceptedEngineVersion(mr: ManagedDB): string | undefined {
  const v = mr.status?.acceptedEngineVersion;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * What to record in `status.acceptedEngineVersion` once the spec has been
 * accepted (created with, found in sync, or asked of RDS): the spec's value,
 * or the previously accepted one when the spec names none. Pure.
 */
export function engineVersionToAccept(mr: ManagedDB): string | undefined {
  return mr.spec.engineVersion ?? acceptedEngineVersion(mr);
}

/** The Terminal message for a spec older than the running version: the field, both versions, fixes that work. Pure. */
function downgradeMessage(want: string, running: string): string {
  return `spec.engineVersion ${want} is older than the running ${running}: RDS cannot downgrade an instance; set spec.engineVersion to ${running} or newer (to go back, restore a snapshot taken on the older version into a new ManagedDB with spec.restoreFrom)`;
}

/**
 * The modifications needed to bring an instance to the spec; empty when
 * none. Throws TerminalError for what RDS cannot do: shrink storage, an
 * unapproved major upgrade, or a downgrade. An engineVersion older than the
 * running one within its major is in sync (RDS upgraded the minor by itself)
 * unless it is also older than `status.acceptedEngineVersion`: then the user
 * lowered the spec, asking for a downgrade. Pure.
 */
export function modificationsFor(
  mr: ManagedDB,
  db: DBInstance,
): { input: Partial<ModifyDBInstanceCommandInput>; changes: string[] } {
  const s = mr.spec;
  const pending = db.PendingModifiedValues ?? {};
  const input: Partial<ModifyDBInstanceCommandInput> = {};
  const changes: string[] = [];
  const differs = <T>(want: T | undefined, have: T | undefined, pendingValue?: T): boolean =>
    want !== undefined && want !== have && want !== pendingValue;
  if (differs(s.instanceClass, db.DBInstanceClass, pending.DBInstanceClass)) {
    input.DBInstanceClass = s.instanceClass;
    changes.push(`class ${db.DBInstanceClass ?? ''} → ${s.instanceClass}`);
  }
  // With maxAllocatedStorage RDS grows the volume by itself: a larger size is in sync (a floor, not a pin).
  const autoscaled = s.maxAllocatedStorage !== undefined && (db.AllocatedStorage ?? 0) > s.allocatedStorage;
  if (!autoscaled && differs(s.allocatedStorage, db.AllocatedStorage, pending.AllocatedStorage)) {
    if (s.allocatedStorage < (db.AllocatedStorage ?? 0)) {
      throw new TerminalError(
        `spec.allocatedStorage ${s.allocatedStorage} is below the instance's ${db.AllocatedStorage ?? 0} GiB and RDS cannot shrink storage: set spec.allocatedStorage to ${db.AllocatedStorage ?? 0} or more`,
      );
    }
    input.AllocatedStorage = s.allocatedStorage;
    changes.push(`storage ${db.AllocatedStorage ?? 0} → ${s.allocatedStorage} GiB`);
  }
  if (differs(s.maxAllocatedStorage, db.MaxAllocatedStorage)) {
    input.MaxAllocatedStorage = s.maxAllocatedStorage;
    changes.push('max storage');
  } else if (
    s.maxAllocatedStorage === undefined &&
    db.MaxAllocatedStorage !== undefined &&
    db.MaxAllocatedStorage > (input.AllocatedStorage ?? db.AllocatedStorage ?? 0)
  ) {
    // Removed from the spec: RDS turns autoscaling off when the limit is the allocated storage.
    input.MaxAllocatedStorage = input.AllocatedStorage ?? db.AllocatedStorage;
    changes.push('storage autoscaling off');
  }
  const storageType = s.storageType ?? 'gp3';
  if (db.StorageType !== undefined && differs(storageType, db.StorageType, pending.StorageType)) {
    input.StorageType = storageType;
    if (s.iops !== undefined) input.Iops = s.iops;
    changes.push(`storage type ${db.StorageType ?? ''} → ${storageType}`);
  }
  if (differs(s.iops, db.Iops, pending.Iops)) {
    input.Iops = s.iops;
    changes.push(`iops ${String(db.Iops ?? '')} → ${String(s.iops)}`);
  }
  // Turning AWS management on is a modification; turning it off needs a new password, which the
  // adapter writes to the connection Secret first (connectionSecret.ts).
  if (s.password?.managedByAWS === true && db.MasterUserSecret?.SecretArn === undefined) {
    input.ManageMasterUserPassword = true;
    changes.push('master password managed by AWS');
  }
  if (differs(s.multiAZ ?? false, db.MultiAZ ?? false, pending.MultiAZ)) {
    input.MultiAZ = s.multiAZ ?? false;
    changes.push(`multiAZ ${String(s.multiAZ ?? false)}`);
  }
  const want = s.engineVersion;
  const running = db.EngineVersion;
  if (want !== undefined && running !== undefined && olderThan(want, running)) {
    // Older than what runs: in sync only as a floor RDS moved past by itself (an automatic minor
    // upgrade). Another major, or a spec lowered below what was accepted before, asks for a downgrade.
    const accepted = acceptedEngineVersion(mr);
    const lowered = accepted !== undefined && olderThan(want, accepted);
    if (majorOf(want) !== majorOf(running) || lowered)
      throw new TerminalError(downgradeMessage(want, running));
  } else if (!versionSatisfied(want, running) && !versionSatisfied(want, pending.EngineVersion)) {
    if (majorOf(want) !== majorOf(running) && s.allowMajorVersionUpgrade !== true) {
      throw new TerminalError(
        `spec.engineVersion ${want ?? ''} is a major upgrade from ${running ?? ''}: set spec.allowMajorVersionUpgrade to true to allow it, or spec.engineVersion back to ${running ?? ''}`,
      );
    }
    input.EngineVersion = want;
    if (s.allowMajorVersionUpgrade === true) input.AllowMajorVersionUpgrade = true;
    changes.push(`engine ${running ?? ''} → ${want ?? ''}`);
  }
  if (differs(s.backup?.retentionDays ?? 7, db.BackupRetentionPeriod, pending.BackupRetentionPeriod)) {
    input.BackupRetentionPeriod = s.backup?.retentionDays ?? 7;
    changes.push('backup retention');
  }
  if (differs(s.backup?.window, db.PreferredBackupWindow)) {
    input.PreferredBackupWindow = s.backup?.window;
    changes.push('backup window');
  }
  if (differs(s.maintenanceWindow?.toLowerCase(), db.PreferredMaintenanceWindow?.toLowerCase())) {
    input.PreferredMaintenanceWindow = s.maintenanceWindow;
    changes.push('maintenance window');
  }
  if (differs(s.deletionProtection ?? false, db.DeletionProtection ?? false)) {
    input.DeletionProtection = s.deletionProtection ?? false;
    changes.push(`deletion protection ${String(s.deletionProtection ?? false)}`);
  }
  if (differs(s.publiclyAccessible ?? false, db.PubliclyAccessible ?? false)) {
    input.PubliclyAccessible = s.publiclyAccessible ?? false;
    changes.push('public accessibility');
  }
  const sgs = s.vpcSecurityGroupIds;
  const haveSgs = (db.VpcSecurityGroups ?? []).map((g) => g.VpcSecurityGroupId ?? '').sort();
  if (sgs !== undefined && [...sgs].sort().join(',') !== haveSgs.join(',')) {
    input.VpcSecurityGroupIds = sgs;
    changes.push('security groups');
  }
  return { input, changes };
}
