// What ModifyDBInstance must change to bring an RDS instance to a ManagedDB's spec.
import type { DBInstance, ModifyDBInstanceCommandInput } from '@aws-sdk/client-rds';
import { TerminalError } from '../../runtime/errors.ts';
import type { ManagedDB } from './api.ts';

/** Whether an engine version spec (e.g. "16") is satisfied by what RDS reports (e.g. "16.4"). Pure. */
export function versionSatisfied(want: string | undefined, have: string | undefined): boolean {
  if (want === undefined) return true;
  if (have === undefined) return false;
  return have === want || have.startsWith(`${want}.`);
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
  if (differs(s.allocatedStorage, db.AllocatedStorage, pending.AllocatedStorage)) {
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
