// The RDS DB instance of a ManagedDB: described by its deterministic identifier, created (or
// restored from a snapshot) only after a lookup, modified, tagged and deleted. Knows nothing of
// the connection Secret, snapshots' schedules or requests: the adapter's other parts do.
import {
  AddTagsToResourceCommand,
  CreateDBInstanceCommand,
  DeleteDBInstanceCommand,
  DescribeDBInstancesCommand,
  ModifyDBInstanceCommand,
  RemoveTagsFromResourceCommand,
  RestoreDBInstanceFromDBSnapshotCommand,
  type DBInstance,
  type ModifyDBInstanceCommandInput,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { ownershipTagMap, type OwnershipTags } from '../../apis/managed.ts';
import { awsCall, createOrFind, lookup } from '../../providers/aws/calls.ts';
import { hasErrorCode } from '../../providers/aws/errors.ts';
import { ownedTagList, tagList, tagMap, userTagChanges } from '../../providers/aws/tags.ts';
import { rdsErrorTable } from '../../providers/rds/states.ts';
import { TerminalError } from '../../runtime/errors.ts';
import type { ManagedDB } from './api.ts';
import { instanceIdentifier } from './identity.ts';

/** A ModifyDBInstance's changes, without the identifier and ApplyImmediately (given separately). */
export type InstanceModification = Omit<
  ModifyDBInstanceCommandInput,
  'DBInstanceIdentifier' | 'ApplyImmediately'
>;

/**
 * One set of RDS clients' calls on DB instances. Every method may block on RDS (each call has the
 * SDK's deadline) and throws typed errors (rdsErrorTable); none keeps state.
 */
export class DBInstances {
  private readonly rds: RDSClient;

  constructor(rds: RDSClient) {
    this.rds = rds;
  }

  /** The instance named `id`, or undefined when RDS has none. Read-only. */
  describe(id: string): Promise<DBInstance | undefined> {
    return lookup(
      `describe DB instance ${id}`,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBInstanceNotFound'),
      async () =>
        (await this.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0],
    );
  }

  /**
   * Creates the object's instance (restored from spec.restoreFrom when set), tagged with
   * `ownership`, with `password` as its master password (undefined: managed by AWS). Idempotent: a
   * create retried after a timeout or crash finds the instance carrying this uid and does nothing;
   * one carrying another is an ownership conflict (createOrFind).
   */
  async create(mr: ManagedDB, ownership: OwnershipTags, password: string | undefined): Promise<void> {
    const s = mr.spec;
    const id = instanceIdentifier(mr);
    const common = {
      DBInstanceIdentifier: id,
      DBInstanceClass: s.instanceClass,
      MultiAZ: s.multiAZ ?? false,
      PubliclyAccessible: s.publiclyAccessible ?? false,
      ...(s.subnetGroupName !== undefined ? { DBSubnetGroupName: s.subnetGroupName } : {}),
      ...(s.vpcSecurityGroupIds !== undefined ? { VpcSecurityGroupIds: s.vpcSecurityGroupIds } : {}),
      DeletionProtection: s.deletionProtection ?? false,
      Tags: ownedTagList(s.tags, ownership),
      // Snapshots (scheduled, on request, final) carry the ownership tags, so the IAM policy can
      // scope snapshot deletion to Skylift's own and a later lookup can tell whose they are.
      CopyTagsToSnapshot: true,
    };
    await createOrFind({
      what: `create DB instance ${id}`,
      table: rdsErrorTable,
      isDuplicate: (err) => hasErrorCode(err, 'DBInstanceAlreadyExists'),
      // A retried create (timeout, crash): the instance is ours if it carries our uid.
      find: async () => {
        const existing = await this.describe(id);
        return existing !== undefined ? { value: undefined, tags: tagMap(existing.TagList) } : undefined;
      },
      ownership,
      create: async () => {
        if (s.restoreFrom !== undefined) {
          await this.rds.send(
            new RestoreDBInstanceFromDBSnapshotCommand({
              ...common,
              DBSnapshotIdentifier: s.restoreFrom.snapshotIdentifier,
              StorageType: s.storageType ?? 'gp3',
            }),
          );
          return;
        }
        await this.rds.send(
          new CreateDBInstanceCommand({
            ...common,
            Engine: s.engine,
            ...(s.engineVersion !== undefined ? { EngineVersion: s.engineVersion } : {}),
            AllocatedStorage: s.allocatedStorage,
            ...(s.maxAllocatedStorage !== undefined ? { MaxAllocatedStorage: s.maxAllocatedStorage } : {}),
            StorageType: s.storageType ?? 'gp3',
            ...(s.iops !== undefined ? { Iops: s.iops } : {}),
            ...(s.dbName !== undefined ? { DBName: s.dbName } : {}),
            MasterUsername: s.masterUsername,
            ...(password === undefined
              ? { ManageMasterUserPassword: true }
              : { MasterUserPassword: password }),
            StorageEncrypted: s.storageEncrypted ?? true,
            BackupRetentionPeriod: s.backup?.retentionDays ?? 7,
            ...(s.backup?.window !== undefined ? { PreferredBackupWindow: s.backup.window } : {}),
            ...(s.maintenanceWindow !== undefined ? { PreferredMaintenanceWindow: s.maintenanceWindow } : {}),
          }),
        );
      },
    });
  }

  /** One ModifyDBInstance of instance `id` (`what` names it in errors). Not idempotent by itself: RDS is. */
  async modify(
    id: string,
    applyImmediately: boolean,
    input: InstanceModification,
    what: string,
  ): Promise<void> {
    await awsCall(what, rdsErrorTable, () =>
      this.rds.send(
        new ModifyDBInstanceCommand({
          DBInstanceIdentifier: id,
          ApplyImmediately: applyImmediately,
          ...input,
        }),
      ),
    );
  }

  /** Adds `tags` to the instance `arn` (`what` names it in errors). Idempotent. */
  async addTags(arn: string, tags: Readonly<Record<string, string>>, what: string): Promise<void> {
    const list = tagList({ ...tags });
    if (list.length === 0) return;
    await awsCall(what, rdsErrorTable, () =>
      this.rds.send(new AddTagsToResourceCommand({ ResourceName: arn, Tags: list })),
    );
  }

  /** Tags an adopted (or foreign-tagged) instance with `ownership`. Idempotent. */
  claim(arn: string, ownership: OwnershipTags): Promise<void> {
    return this.addTags(arn, ownershipTagMap(ownership), 'tag DB instance');
  }

  /**
   * Brings the instance's user tags to the spec's: removes the keys Skylift applied that the spec
   * dropped, adds and changes the rest with the record of their keys, then drops record tags no
   * longer needed (providers/aws/tags.ts); tags others put on the instance stay. Idempotent.
   */
  async syncUserTags(mr: ManagedDB, arn: string, have: Record<string, string>): Promise<void> {
    const c = userTagChanges(mr.spec.tags, have);
    const remove = async (keys: string[]): Promise<void> => {
      if (keys.length === 0) return;
      await awsCall('untag DB instance', rdsErrorTable, () =>
        this.rds.send(new RemoveTagsFromResourceCommand({ ResourceName: arn, TagKeys: keys })),
      );
    };
    await remove(c.remove);
    await this.addTags(arn, c.add, 'tag DB instance');
    await remove(c.removeAfter);
  }

  /**
   * One step of deleting the instance `db` (as just described): turns deletion protection off when
   * the spec no longer asks for it, refuses (Terminal) while the spec asks for it, else deletes
   * with a final snapshot `<id>-final` unless spec.finalSnapshot.enabled is false. `gone` once RDS
   * no longer has it. Idempotent; call again until gone.
   */
  async delete(mr: ManagedDB, db: DBInstance): Promise<{ gone: boolean }> {
    if (db.DBInstanceStatus === 'deleting') return { gone: false };
    const id = db.DBInstanceIdentifier ?? '';
    if (db.DeletionProtection === true && mr.spec.deletionProtection !== true) {
      // The spec no longer asks for protection: the advice of the message below works while deleting.
      await this.modify(id, true, { DeletionProtection: false }, `turn off deletion protection of ${id}`);
      return { gone: false };
    }
    if (db.DeletionProtection === true) {
      throw new TerminalError(
        'deletion protection is on for this DB instance: set spec.deletionProtection to false (or turn it off in AWS) and Skylift will finish deleting it',
      );
    }
    const snapshot = mr.spec.finalSnapshot?.enabled !== false;
    const answered = await lookup(
      `delete DB instance ${id}`,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBInstanceNotFound'),
      () =>
        this.rds.send(
          new DeleteDBInstanceCommand({
            DBInstanceIdentifier: id,
            ...(snapshot ? { FinalDBSnapshotIdentifier: `${id}-final` } : { SkipFinalSnapshot: true }),
          }),
        ),
    );
    if (answered === undefined) return { gone: true };
    return { gone: (await this.describe(id)) === undefined };
  }
}
