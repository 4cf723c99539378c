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

/** The modifications needed to bring an instance to the spec; empty when none. Pure. */
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
        `allocatedStorage cannot shrink (RDS has ${db.AllocatedStorage ?? 0} GiB, the spec asks for ${s.allocatedStorage})`,
      );
    }
    input.AllocatedStorage = s.allocatedStorage;
    changes.push(`storage ${db.AllocatedStorage ?? 0} → ${s.allocatedStorage} GiB`);
  }
  if (differs(s.maxAllocatedStorage, db.MaxAllocatedStorage)) {
    input.MaxAllocatedStorage = s.maxAllocatedStorage;
    changes.push('max storage');
  }
  if (differs(s.multiAZ ?? false, db.MultiAZ ?? false, pending.MultiAZ)) {
    input.MultiAZ = s.multiAZ ?? false;
    changes.push(`multiAZ ${String(s.multiAZ ?? false)}`);
  }
  if (
    !versionSatisfied(s.engineVersion, db.EngineVersion) &&
    !versionSatisfied(s.engineVersion, pending.EngineVersion)
  ) {
    const major = (v: string | undefined): string => (v ?? '').split('.')[0] ?? '';
    if (compareVersions(s.engineVersion ?? '', db.EngineVersion ?? '') < 0) {
      throw new TerminalError(
        `spec.engineVersion ${s.engineVersion ?? ''} is older than the running ${db.EngineVersion ?? ''}: RDS cannot downgrade an instance; set spec.engineVersion to ${db.EngineVersion ?? ''} or newer (to go back, restore a snapshot of the older version into a new object)`,
      );
    }
    if (major(s.engineVersion) !== major(db.EngineVersion) && s.allowMajorVersionUpgrade !== true) {
      throw new TerminalError(
        `engineVersion ${s.engineVersion ?? ''} is a major upgrade from ${db.EngineVersion ?? ''}: set allowMajorVersionUpgrade: true to allow it`,
      );
    }
    input.EngineVersion = s.engineVersion;
    if (s.allowMajorVersionUpgrade === true) input.AllowMajorVersionUpgrade = true;
    changes.push(`engine ${db.EngineVersion ?? ''} → ${s.engineVersion ?? ''}`);
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
