import { randomBytes } from 'node:crypto';
import {
  AddTagsToResourceCommand,
  RemoveTagsFromResourceCommand,
  CreateDBInstanceCommand,
  CreateDBSnapshotCommand,
  DeleteDBInstanceCommand,
  DeleteDBSnapshotCommand,
  DescribeDBInstancesCommand,
  DescribeDBSnapshotsCommand,
  ModifyDBInstanceCommand,
  RebootDBInstanceCommand,
  RestoreDBInstanceFromDBSnapshotCommand,
  type DBInstance,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { ownershipFromTags, ownershipTagMap, type KindStatusOf } from '../../apis/managed.ts';
import { awsCall, createOrFind, lookup } from '../../providers/aws/calls.ts';
import { hasErrorCode } from '../../providers/aws/errors.ts';
import {
  hasUserTagChanges,
  ownedTagList,
  tagList,
  tagMap,
  userTagChanges,
} from '../../providers/aws/tags.ts';
import { rdsAvailableStates, rdsErrorTable, rdsFailedStates } from '../../providers/rds/states.ts';
import type {
  Created,
  DeltaEntry,
  ExistingObservation,
  ExternalClient,
  Observation,
  ReadyState,
  Released,
  ReleaseCause,
  ReconcileContext,
  Updated,
  Writes,
} from '../../runtime/adapter.ts';
import { Reason } from '../../runtime/conditions.ts';
import { RetryableError, TerminalError } from '../../runtime/errors.ts';
import type { KubeClient } from '../../runtime/kube/client.ts';
import { busyPollInterval } from '../../runtime/polling.ts';
import type { ManagedDB, ManagedDBStatus } from './api.ts';
import {
  connectionData,
  connectionSecretRelease,
  connectionSecretWrite,
  readConnectionSecret,
  readConnectionSecretState,
  type SecretSeen,
} from './connectionSecret.ts';
import { connectionSecretName, instanceIdentifier } from './identity.ts';
import { acceptedEngineVersion, engineVersionToAccept, modificationsFor } from './modifications.ts';
import {
  lastRequestStatus,
  pendingRequest,
  refusedResult,
  requestDoneAnnotation,
  type OnDemandAction,
} from './requests.ts';
import {
  needsPasswordAfterRestore,
  restoreRefusal,
  restoredPasswordTag,
  restoredUserMismatch,
  snapshotReference,
  uncheckableSnapshot,
} from './restore.ts';
import { planSnapshots, snapshotSchedule } from './snapshots.ts';

/** `status.acceptedEngineVersion`, or nothing when no version was accepted. Pure. */
function acceptedVersionStatus(version: string | undefined): Pick<ManagedDBStatus, 'acceptedEngineVersion'> {
  return version !== undefined ? { acceptedEngineVersion: version } : {};
}

/** Ready/Synced reasons particular to ManagedDB. */
export const DBReason = {
  /** The newest scheduled snapshot failed. */
  SnapshotFailed: 'SnapshotFailed',
  /** The generated password vanished from the connection Secret between prepareCreate and create. */
  SecretMissing: 'SecretMissing',
  /** An adopted instance's master password is not Skylift's to know: the Secret cannot hold it. */
  PasswordUnknown: 'PasswordUnknown',
} as const;

/** What can differ between an RDS instance and its ManagedDB. */
export type ManagedDBField =
  'instance' | 'ownership' | 'tags' | 'password' | 'request' | 'snapshot' | 'prune';

/** What observe saw, handed to update and delete. */
export interface ManagedDBDetails {
  readonly db: DBInstance;
  /** Scheduled snapshot to take now (its deterministic name), if due. */
  readonly dueSnapshot?: string;
  /** Scheduled snapshots beyond keepSnapshots, oldest first. */
  readonly prune: readonly string[];
}

type DBObservation = ExistingObservation<ManagedDBDetails, ManagedDBField>;

/** What the ManagedDB adapter needs. */
export interface ManagedDBAdapterDeps {
  readonly rds: RDSClient;
  /** Reads connection Secrets (never writes them: the engine does). */
  readonly kube: KubeClient;
  /** First interval between looks at a busy instance (longer waits are polled less often). */
  readonly pollMs: number;
  /**
   * Other namespaces whose Skylift snapshots an object of `namespace` may restore (its TeamPolicy's
   * guardrails.databases.restoreFrom.namespaces); absent: none, only its own.
   */
  readonly restoreNamespaces?: (namespace: string) => readonly string[];
}

/**
 * ManagedDB's AWS side: one RDS DB instance with a deterministic identifier
 * and ownership tags, looked up before any create (a create retried after a
 * timeout finds its own instance instead of looping on
 * DBInstanceAlreadyExists). The master password is AWS-managed or generated
 * into the connection Secret before the create; the Secret follows the
 * endpoint. Day-2 changes are one ModifyDBInstance with only what differs
 * (pending modifications count as done). Deletion takes a final snapshot
 * unless told not to.
 */
export class ManagedDBAdapter implements ExternalClient<ManagedDB, ManagedDBDetails, ManagedDBField> {
  private readonly d: ManagedDBAdapterDeps;
  /** Passwords prepareCreate has just made sure of, by object uid, until create takes them. */
  private readonly passwords = new Map<string, string>();

  constructor(deps: ManagedDBAdapterDeps) {
    this.d = deps;
  }

  async observe(
    mr: ManagedDB,
    ctx: ReconcileContext,
  ): Promise<Observation<ManagedDBDetails, ManagedDBField>> {
    const id = instanceIdentifier(mr);
    const db = await this.describe(id);
    if (db === undefined) return { exists: false };
    const ownership = ownershipFromTags(tagMap(db.TagList));
    const state = db.DBInstanceStatus ?? 'unknown';
    const pending = Object.entries(db.PendingModifiedValues ?? {})
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
    const status: KindStatusOf<ManagedDB> = {
      arn: db.DBInstanceArn,
      identifier: id,
      dbInstanceStatus: state,
      engineVersion: db.EngineVersion,
      ...(db.Endpoint?.Address !== undefined
        ? { endpoint: { address: db.Endpoint.Address, port: db.Endpoint.Port } }
        : {}),
      ...(db.MasterUserSecret?.SecretArn !== undefined
        ? { masterUserSecretArn: db.MasterUserSecret.SecretArn }
        : {}),
      ...(pending.length > 0 ? { pendingModifications: pending } : {}),
      ...lastRequestStatus(mr),
      ...acceptedVersionStatus(acceptedEngineVersion(mr)),
    };
    if (rdsFailedStates.includes(state)) {
      throw new TerminalError(
        `RDS reports the instance as ${state}; it needs attention in AWS (${db.StatusInfos?.map((s) => s.Message).join('; ') ?? ''})`,
      );
    }
    const available = rdsAvailableStates.includes(state);
    const delta: DeltaEntry<ManagedDBField>[] = [];
    let details: ManagedDBDetails = { db, prune: [] };
    let writes: Writes | undefined;
    let failure: { reason: string; message: string } | undefined;
    let passwordUnknown = false;
    if (
      available &&
      mr.metadata.deletionTimestamp === undefined &&
      mr.spec.managementPolicy !== 'ObserveOnly'
    ) {
      for (const change of modificationsFor(mr, db).changes) delta.push({ field: 'instance', change });
      // The spec passed (in sync, or a modification follows): a later spec lowered below it is a downgrade.
      Object.assign(status, acceptedVersionStatus(engineVersionToAccept(mr)));
      if (ownership?.uid !== ctx.ownership.uid) delta.push({ field: 'ownership', change: 'ownership tags' });
      else if (hasUserTagChanges(userTagChanges(mr.spec.tags, tagMap(db.TagList))))
        delta.push({ field: 'tags', change: 'tags' });
      if (needsPasswordAfterRestore(mr.spec.restoreFrom, tagMap(db.TagList), ctx.ownership.uid))
        delta.push({
          field: 'password',
          change: "master password of the restored instance set to the connection Secret's",
        });
      const request = pendingRequest(mr);
      if (request !== undefined)
        delta.push({
          field: 'request',
          change: `requested ${request.action} ${request.id}`,
          operation: true,
        });
      if (db.Endpoint?.Address !== undefined) {
        const kept = await this.connectionSecretWrites(mr, db);
        writes = kept.writes;
        passwordUnknown = kept.unknown === true;
        if (kept.lost !== undefined && !delta.some((d) => d.field === 'password'))
          delta.push({ field: 'password', change: kept.lost });
      }
      const cron = snapshotSchedule(mr);
      if (cron !== undefined) {
        const plan = planSnapshots(
          mr,
          cron,
          db.DBInstanceIdentifier ?? '',
          await this.manualSnapshots(db),
          ctx.clock.now(),
        );
        Object.assign(status, plan.status);
        if (plan.failure !== undefined) {
          // Synced=False until a later scheduled snapshot succeeds; the instance itself stays Ready
          // and the Secret is still kept current.
          failure = { reason: DBReason.SnapshotFailed, message: plan.failure };
          writes = {
            ...writes,
            events: [
              { type: 'Warning', reason: DBReason.SnapshotFailed, action: 'Snapshot', note: plan.failure },
            ],
          };
        }
        if (plan.dueSnapshot !== undefined)
          delta.push({
            field: 'snapshot',
            change: `scheduled snapshot ${plan.dueSnapshot} due`,
            operation: true,
          });
        if (plan.prune.length > 0)
          delta.push({
            field: 'prune',
            change: `prune ${plan.prune.length} old snapshot(s)`,
            operation: true,
          });
        details = {
          db,
          prune: plan.prune,
          ...(plan.dueSnapshot !== undefined ? { dueSnapshot: plan.dueSnapshot } : {}),
        };
      }
    }
    const ready: ReadyState = passwordUnknown
      ? {
          ready: false,
          reason: DBReason.PasswordUnknown,
          message: `the instance was adopted (spec.externalName) and Skylift does not know its master password, so the connection Secret ${connectionSecretName(mr)} has none: set spec.password.managedByAWS to true (RDS then keeps the password in Secrets Manager and the Secret gets its secretArn)`,
          actionRequired: true,
        }
      : available
        ? { ready: true, reason: Reason.Available }
        : {
            ready: false,
            reason: state === 'creating' ? Reason.Creating : Reason.Unavailable,
            message: `RDS status is ${state}`,
          };
    return {
      exists: true,
      ownership,
      delta,
      ready,
      status,
      details,
      ...(writes !== undefined ? { writes } : {}),
      ...(failure !== undefined ? { failure } : {}),
      ...(available ? {} : { requeueAfterMs: busyPollInterval(mr, this.d.pollMs, ctx.clock.now()) }),
    };
  }

  /**
   * Claims the connection Secret before any AWS call: a Secret of this name that is not this
   * object's is a Conflict (read), and a new one is created atomically, so of two objects naming it
   * at once one gets it and the other creates nothing. The generated master password goes into it
   * now, before the instance exists, so a crash cannot lose it.
   */
  async prepareCreate(mr: ManagedDB): Promise<Writes> {
    const uid = mr.metadata.uid ?? '';
    const state = await readConnectionSecretState(this.d.kube, mr);
    const seen = state === undefined ? undefined : { uid: state.uid };
    const base = { username: mr.spec.masterUsername, engine: mr.spec.engine };
    if (mr.spec.password?.managedByAWS === true)
      return state !== undefined ? {} : { companions: [connectionSecretWrite(mr, base, seen)] };
    const existing = state?.data.password;
    if (existing !== undefined && existing !== '') {
      this.passwords.set(uid, existing);
      return {};
    }
    const password = randomBytes(24).toString('base64url');
    this.passwords.set(uid, password);
    return { companions: [connectionSecretWrite(mr, { ...state?.data, ...base, password }, seen)] };
  }

  async create(mr: ManagedDB, ctx: ReconcileContext): Promise<Created> {
    const s = mr.spec;
    const id = instanceIdentifier(mr);
    const managed = s.password?.managedByAWS === true;
    const password = managed ? undefined : await this.preparedPassword(mr);
    if (!managed && (password === undefined || password === ''))
      throw new RetryableError(
        DBReason.SecretMissing,
        `the connection Secret lost its generated password before ${id} was created`,
      );
    const common = {
      DBInstanceIdentifier: id,
      DBInstanceClass: s.instanceClass,
      MultiAZ: s.multiAZ ?? false,
      PubliclyAccessible: s.publiclyAccessible ?? false,
      ...(s.subnetGroupName !== undefined ? { DBSubnetGroupName: s.subnetGroupName } : {}),
      ...(s.vpcSecurityGroupIds !== undefined ? { VpcSecurityGroupIds: s.vpcSecurityGroupIds } : {}),
      DeletionProtection: s.deletionProtection ?? false,
      Tags: ownedTagList(s.tags, ctx.ownership),
      // Snapshots (scheduled, on request, final) carry the ownership tags, so the IAM policy can
      // scope snapshot deletion to Skylift's own and a later lookup can tell whose they are.
      CopyTagsToSnapshot: true,
    };
    if (s.restoreFrom !== undefined) await this.checkRestorable(mr, s.restoreFrom.snapshotIdentifier, ctx);
    await createOrFind({
      what: `create DB instance ${id}`,
      table: rdsErrorTable,
      isDuplicate: (err) => hasErrorCode(err, 'DBInstanceAlreadyExists'),
      // A retried create (timeout, crash): the instance is ours if it carries our uid.
      find: async () => {
        const existing = await this.describe(id);
        return existing !== undefined ? { value: undefined, tags: tagMap(existing.TagList) } : undefined;
      },
      ownership: ctx.ownership,
      create: async () => {
        if (s.restoreFrom !== undefined) {
          await this.d.rds.send(
            new RestoreDBInstanceFromDBSnapshotCommand({
              ...common,
              DBSnapshotIdentifier: s.restoreFrom.snapshotIdentifier,
              StorageType: s.storageType ?? 'gp3',
            }),
          );
          return;
        }
        await this.d.rds.send(
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
            ...(managed ? { ManageMasterUserPassword: true } : { MasterUserPassword: password }),
            StorageEncrypted: s.storageEncrypted ?? true,
            BackupRetentionPeriod: s.backup?.retentionDays ?? 7,
            ...(s.backup?.window !== undefined ? { PreferredBackupWindow: s.backup.window } : {}),
            ...(s.maintenanceWindow !== undefined ? { PreferredMaintenanceWindow: s.maintenanceWindow } : {}),
          }),
        );
      },
    });
    return {
      status: {
        identifier: id,
        dbInstanceStatus: 'creating',
        ...acceptedVersionStatus(engineVersionToAccept(mr)),
      },
      description: `creating DB instance ${id}`,
    };
  }

  async update(mr: ManagedDB, observed: DBObservation, ctx: ReconcileContext): Promise<Updated> {
    const { db, dueSnapshot, prune } = observed.details;
    const id = db.DBInstanceIdentifier ?? instanceIdentifier(mr);
    const { input, changes } = modificationsFor(mr, db);
    if (observed.ownership?.uid !== ctx.ownership.uid && db.DBInstanceArn !== undefined) {
      const arn = db.DBInstanceArn;
      await awsCall('tag DB instance', rdsErrorTable, () =>
        this.d.rds.send(
          new AddTagsToResourceCommand({ ResourceName: arn, Tags: tagList(ownershipTagMap(ctx.ownership)) }),
        ),
      );
      changes.push('tagged');
    }
    if (observed.delta.some((d) => d.field === 'tags') && db.DBInstanceArn !== undefined) {
      await this.syncUserTags(mr, db.DBInstanceArn, tagMap(db.TagList));
      changes.push('tags');
    }
    const resetPassword = observed.delta.some((d) => d.field === 'password');
    let passwordSet: Writes | undefined;
    if (resetPassword) {
      const restored = needsPasswordAfterRestore(mr.spec.restoreFrom, tagMap(db.TagList), ctx.ownership.uid);
      passwordSet = await this.setPasswordAfterRestore(mr, db, ctx, restored);
      changes.push(
        !restored
          ? "master password set to the connection Secret's"
          : mr.spec.password?.managedByAWS === true
            ? 'restored instance: master password now managed by AWS'
            : "restored instance: master password set to the connection Secret's",
      );
    }
    if (Object.keys(input).length > 0) {
      await awsCall(`modify DB instance ${id}`, rdsErrorTable, () =>
        this.d.rds.send(
          new ModifyDBInstanceCommand({
            DBInstanceIdentifier: id,
            ApplyImmediately: mr.spec.applyImmediately ?? false,
            ...input,
          }),
        ),
      );
    }
    if (dueSnapshot !== undefined) {
      await this.snapshot(id, dueSnapshot, `scheduled snapshot ${dueSnapshot}`);
      changes.push(`scheduled snapshot ${dueSnapshot}`);
    }
    for (const old of prune) {
      await lookup(
        `delete snapshot ${old}`,
        rdsErrorTable,
        (err) => hasErrorCode(err, 'DBSnapshotNotFound'),
        () => this.d.rds.send(new DeleteDBSnapshotCommand({ DBSnapshotIdentifier: old })),
      );
      changes.push(`pruned ${old}`);
    }
    const request = pendingRequest(mr);
    let writes: Writes | undefined;
    let acted = false;
    if (request !== undefined) {
      const result = await this.carryOut(db, request);
      changes.push(result);
      // Recorded right after the RDS call; the call itself is idempotent, so a crash in between cannot repeat it.
      writes = { annotations: { [requestDoneAnnotation]: `${request.id} ${result}` } };
      acted = request.action !== 'snapshot';
    }
    const allWrites = writes === undefined ? passwordSet : { ...passwordSet, ...writes };
    return {
      description: changes.join('; '),
      pending: Object.keys(input).length > 0 || acted || resetPassword,
      ...(allWrites !== undefined ? { writes: allWrites } : {}),
    };
  }

  async delete(mr: ManagedDB, observed: DBObservation): Promise<{ gone: boolean }> {
    // Observe has just described the instance; no need to ask RDS again.
    const db = observed.details.db;
    if (db.DBInstanceStatus === 'deleting') return { gone: false };
    if (db.DeletionProtection === true && mr.spec.deletionProtection !== true) {
      // The spec no longer asks for protection: the advice of the message below works while deleting.
      const protectedId = db.DBInstanceIdentifier ?? '';
      await awsCall(`turn off deletion protection of ${protectedId}`, rdsErrorTable, () =>
        this.d.rds.send(
          new ModifyDBInstanceCommand({
            DBInstanceIdentifier: protectedId,
            DeletionProtection: false,
            ApplyImmediately: true,
          }),
        ),
      );
      return { gone: false };
    }
    if (db.DeletionProtection === true) {
      throw new TerminalError(
        'deletion protection is on for this DB instance: set spec.deletionProtection to false (or turn it off in AWS) and Skylift will finish deleting it',
      );
    }
    const id = db.DBInstanceIdentifier ?? '';
    const snapshot = mr.spec.finalSnapshot?.enabled !== false;
    const answered = await lookup(
      `delete DB instance ${id}`,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBInstanceNotFound'),
      () =>
        this.d.rds.send(
          new DeleteDBInstanceCommand({
            DBInstanceIdentifier: id,
            ...(snapshot ? { FinalDBSnapshotIdentifier: `${id}-final` } : { SkipFinalSnapshot: true }),
          }),
        ),
    );
    if (answered === undefined) return { gone: true };
    return { gone: (await this.describe(id)) === undefined };
  }

  /**
   * A restored instance keeps the snapshot's master password (the source instance's, which this
   * object's Secret does not hold): set it to the Secret's password (or hand it to AWS with
   * password.managedByAWS), then mark the instance so it is done once. Repeating it after a crash
   * sets the same password again.
   */
  private async setPasswordAfterRestore(
    mr: ManagedDB,
    db: DBInstance,
    ctx: ReconcileContext,
    restored: boolean,
  ): Promise<Writes | undefined> {
    const id = db.DBInstanceIdentifier ?? instanceIdentifier(mr);
    const managed = mr.spec.password?.managedByAWS === true;
    const secret = managed ? undefined : await readConnectionSecretState(this.d.kube, mr);
    const password = secret?.data.password;
    if (!managed && (password === undefined || password === ''))
      throw new RetryableError(
        DBReason.SecretMissing,
        `the connection Secret has no password to give the instance ${id}${restored ? ' restored from spec.restoreFrom' : ''}`,
      );
    await awsCall(`set the master password of ${id}`, rdsErrorTable, () =>
      this.d.rds.send(
        new ModifyDBInstanceCommand({
          DBInstanceIdentifier: id,
          ApplyImmediately: true,
          ...(managed
            ? { ManageMasterUserPassword: true }
            : {
                MasterUserPassword: password,
                // Turning AWS management off (spec.password.managedByAWS now false) takes the password with it.
                ...(db.MasterUserSecret?.SecretArn !== undefined ? { ManageMasterUserPassword: false } : {}),
              }),
        }),
      ),
    );
    const arn = db.DBInstanceArn;
    if (restored && arn !== undefined)
      await awsCall(`mark ${id} as given its password`, rdsErrorTable, () =>
        this.d.rds.send(
          new AddTagsToResourceCommand({
            ResourceName: arn,
            Tags: [{ Key: restoredPasswordTag, Value: ctx.ownership.uid }],
          }),
        ),
      );
    // RDS has the Secret's password: the Secret is no longer marked pending.
    return secret?.pending === true
      ? { companions: [connectionSecretWrite(mr, secret.data, { uid: secret.uid })] }
      : undefined;
  }

  /**
   * Refuses (Terminal, nothing created) a snapshot that Skylift did not make for this namespace of
   * this cluster, and one it cannot check: fails closed, so a refusal never depends on a lookup
   * succeeding. An ARN is looked up by its identifier, and must be the ARN of what was found (an
   * ARN of another account or region is never this namespace's). Read-only.
   */
  private async checkRestorable(mr: ManagedDB, snapshotId: string, ctx: ReconcileContext): Promise<void> {
    const ref = snapshotReference(snapshotId);
    if (ref === undefined) throw new TerminalError(uncheckableSnapshot(snapshotId, 'not-a-snapshot-arn'));
    const found = await lookup(
      `describe DB snapshot ${snapshotId}`,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBSnapshotNotFound'),
      async () =>
        (await this.d.rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: ref.identifier })))
          .DBSnapshots?.[0],
    );
    if (found === undefined || (ref.arn !== undefined && found.DBSnapshotArn !== snapshotId))
      throw new TerminalError(uncheckableSnapshot(snapshotId, 'not-found'));
    const refusal = restoreRefusal(
      snapshotId,
      tagMap(found.TagList),
      mr.metadata.namespace ?? '',
      ctx.ownership.cluster,
      this.d.restoreNamespaces?.(mr.metadata.namespace ?? '') ?? [],
    );
    if (refusal !== undefined) throw new TerminalError(refusal);
    const mismatch = restoredUserMismatch(snapshotId, found.MasterUsername, mr.spec.masterUsername);
    if (mismatch !== undefined) throw new TerminalError(mismatch);
  }

  /** The password prepareCreate put (or found) in the connection Secret; read back if this process did not prepare it. */
  private async preparedPassword(mr: ManagedDB): Promise<string | undefined> {
    const uid = mr.metadata.uid ?? '';
    const prepared = this.passwords.get(uid);
    this.passwords.delete(uid);
    return prepared ?? (await readConnectionSecret(this.d.kube, mr))?.password;
  }

  /**
   * A deleted object whose instance is kept (deletionPolicy Orphan) keeps its connection Secret
   * too: it is disowned. Switching to ObserveOnly keeps the object, which keeps its Secret.
   */
  release(mr: ManagedDB, _ctx: ReconcileContext, cause: ReleaseCause): Promise<Released> {
    return Promise.resolve(
      cause === 'deleted' ? { writes: { companions: [connectionSecretRelease(mr)] } } : {},
    );
  }

  /**
   * Carries out an on-demand request: snapshots are named after the request
   * and a reboot is skipped while the instance is already rebooting, so a
   * repeat does nothing twice. Returns the result to record.
   */
  private async carryOut(db: DBInstance, req: { action: OnDemandAction; id: string }): Promise<string> {
    const id = db.DBInstanceIdentifier ?? '';
    if (req.action === 'snapshot') {
      const name = `${id}-req-${req.id}`.slice(0, 255);
      await this.snapshot(id, name, `snapshot ${id}`);
      return `snapshot ${name} started`;
    }
    if (req.action === 'failover' && db.MultiAZ !== true)
      return refusedResult('failover', 'the instance is not Multi-AZ (set spec.multiAZ: true first)');
    if (db.DBInstanceStatus === 'rebooting') return `${req.action} already in progress`;
    await awsCall(`${req.action} ${id}`, rdsErrorTable, () =>
      this.d.rds.send(
        new RebootDBInstanceCommand({
          DBInstanceIdentifier: id,
          ...(req.action === 'failover' ? { ForceFailover: true } : {}),
        }),
      ),
    );
    return `${req.action} started`;
  }

  /** Takes a manual snapshot by name; one that exists already counts as taken. */
  private async snapshot(instanceId: string, name: string, what: string): Promise<void> {
    await lookup(
      what,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBSnapshotAlreadyExists'),
      () =>
        this.d.rds.send(
          new CreateDBSnapshotCommand({ DBInstanceIdentifier: instanceId, DBSnapshotIdentifier: name }),
        ),
    );
  }

  private async manualSnapshots(db: DBInstance) {
    const out = await awsCall('list snapshots', rdsErrorTable, () =>
      this.d.rds.send(
        new DescribeDBSnapshotsCommand({
          DBInstanceIdentifier: db.DBInstanceIdentifier ?? '',
          SnapshotType: 'manual',
        }),
      ),
    );
    return out.DBSnapshots ?? [];
  }

  /**
   * The connection Secret's write when what it holds differs from the instance's endpoint, its
   * password kept; and, when the Secret has no password (deleted, renamed, emptied) or holds one
   * RDS was not given yet, why the instance's master password must be set to the Secret's: a lost
   * password is replaced by a new one, written to the Secret (marked pending) before RDS is told.
   * With password.managedByAWS, AWS keeps the password and nothing is lost.
   */
  private async connectionSecretWrites(
    mr: ManagedDB,
    db: DBInstance,
  ): Promise<{ writes?: Writes; lost?: string; unknown?: boolean }> {
    const secret = await readConnectionSecretState(this.d.kube, mr);
    const current = secret?.data ?? {};
    const managed = mr.spec.password?.managedByAWS === true;
    // An adopted instance's password is its owner's to change (docs/manageddb.md, "Adoption").
    const adopted = (mr.spec.externalName ?? '') !== '';
    // spec.password.managedByAWS turned off: RDS needs a password of Skylift's (ModifyDBInstance
    // takes it with ManageMasterUserPassword false), written first as for a lost one.
    const managedOff = db.MasterUserSecret?.SecretArn !== undefined && secret?.pending !== true;
    if (!managed && !adopted && ((current.password ?? '') === '' || managedOff)) {
      const password = randomBytes(24).toString('base64url');
      return {
        writes: {
          companions: [
            connectionSecretWrite(mr, connectionData(mr, db, password), seenOf(secret), { pending: true }),
          ],
        },
        lost: managedOff
          ? 'spec.password.managedByAWS is off: a new master password, written to the connection Secret before the instance is given it'
          : `the connection Secret ${connectionSecretName(mr)} has no password (deleted, renamed or emptied): a new master password, written to the Secret before the instance is given it`,
      };
    }
    const pending = !managed && secret?.pending === true;
    // Managed by AWS, the Secret's password goes once RDS has the secret that replaces it.
    const replaced = managed && db.MasterUserSecret?.SecretArn !== undefined;
    const want = connectionData(mr, db, replaced ? undefined : current.password);
    const same =
      Object.entries(want).every(([k, v]) => current[k] === v) &&
      Object.keys(current).every((k) => k in want);
    const writes = same
      ? undefined
      : { companions: [connectionSecretWrite(mr, want, seenOf(secret), { pending })] };
    return {
      ...(writes !== undefined ? { writes } : {}),
      ...(adopted && !managed && (current.password ?? '') === '' ? { unknown: true } : {}),
      ...(pending
        ? {
            lost: `the connection Secret ${connectionSecretName(mr)} holds a master password the instance was not given yet`,
          }
        : {}),
    };
  }

  /**
   * Brings the instance's user tags to the spec's: removes the keys Skylift applied that the spec
   * dropped, adds and changes the rest with the record of their keys, then drops record tags no
   * longer needed (providers/aws/tags.ts); tags others put on the instance stay.
   */
  private async syncUserTags(mr: ManagedDB, arn: string, have: Record<string, string>): Promise<void> {
    const c = userTagChanges(mr.spec.tags, have);
    const remove = async (keys: string[]): Promise<void> => {
      if (keys.length === 0) return;
      await awsCall('untag DB instance', rdsErrorTable, () =>
        this.d.rds.send(new RemoveTagsFromResourceCommand({ ResourceName: arn, TagKeys: keys })),
      );
    };
    await remove(c.remove);
    const add = tagList(c.add);
    if (add.length > 0)
      await awsCall('tag DB instance', rdsErrorTable, () =>
        this.d.rds.send(new AddTagsToResourceCommand({ ResourceName: arn, Tags: add })),
      );
    await remove(c.removeAfter);
  }

  private describe(id: string): Promise<DBInstance | undefined> {
    return lookup(
      `describe DB instance ${id}`,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBInstanceNotFound'),
      async () =>
        (await this.d.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id })))
          .DBInstances?.[0],
    );
  }
}

/** The Secret as read, for a write's precondition. Pure. */
function seenOf(secret: { readonly uid: string } | undefined): SecretSeen {
  return secret === undefined ? undefined : { uid: secret.uid };
}
