import { createHash, randomBytes } from 'node:crypto';
import {
  AddTagsToResourceCommand,
  CreateDBInstanceCommand,
  DeleteDBInstanceCommand,
  DescribeDBInstancesCommand,
  ModifyDBInstanceCommand,
  CreateDBSnapshotCommand,
  DeleteDBSnapshotCommand,
  DescribeDBSnapshotsCommand,
  RebootDBInstanceCommand,
  RestoreDBInstanceFromDBSnapshotCommand,
  type DBInstance,
  type ModifyDBInstanceCommandInput,
  type RDSClient,
} from '@aws-sdk/client-rds';
import type { ManagedDB } from './api.ts';
import { awsErrorCode, toTypedAwsError } from '../../providers/aws/errors.ts';
import { rdsAvailableStates, rdsErrorTable, rdsFailedStates } from '../../providers/rds/states.ts';
import type {
  ExistingObservation,
  ExternalClient,
  Observation,
  ReconcileContext,
  ReadyState,
} from '../../runtime/engine.ts';
import { OwnershipConflictError, RetryableError, TerminalError } from '../../runtime/errors.ts';
import { KubeApiError, type KubeClient } from '../../runtime/kube/client.ts';
import { nextRun, parseCron, type CronSchedule } from '../../runtime/cron.ts';
import { busyPollInterval } from '../../runtime/polling.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { ownershipFromTags, ownershipTagMap, requestAnnotation } from '../../apis/managed.ts';

/** The deterministic DB instance identifier of a ManagedDB (≤ 63, letters, digits, single hyphens). Pure. */
export function dbIdentifier(namespace: string, name: string, uid: string): string {
  const slug = `${namespace}-${name}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `sky-${slug.slice(0, 50).replace(/-+$/, '')}-${createHash('sha256').update(uid).digest('hex').slice(0, 6)}`;
}

/** The connection Secret's name. Pure. */
export function connectionSecretName(mr: ManagedDB): string {
  return mr.spec.writeConnectionSecretToRef?.name ?? `${mr.metadata.name}-connection`;
}

/** The request annotation (`<snapshot|reboot|failover> <id>`), set by users or `skylift db`. */
export { requestAnnotation };
/** Annotation Skylift sets once it has carried a request out: `<id> <result>`. */
export const requestDoneAnnotation = 'aws.skylift.dev/request-done';

export type OnDemandAction = 'snapshot' | 'reboot' | 'failover';

/** The request not carried out yet, if any. Pure. */
export function pendingRequest(mr: ManagedDB): { action: OnDemandAction; id: string } | undefined {
  const raw = mr.metadata.annotations?.[requestAnnotation];
  const m = raw === undefined ? null : /^(snapshot|reboot|failover) (\S+)$/.exec(raw.trim());
  if (m === null) return undefined;
  const id = m[2] ?? '';
  const done = mr.metadata.annotations?.[requestDoneAnnotation]?.split(' ')[0];
  return done === id ? undefined : { action: m[1] as OnDemandAction, id };
}

function lastRequestStatus(mr: ManagedDB): Record<string, unknown> {
  const done = mr.metadata.annotations?.[requestDoneAnnotation];
  if (done === undefined) return {};
  const i = done.indexOf(' ');
  return { lastRequest: { id: i < 0 ? done : done.slice(0, i), result: i < 0 ? '' : done.slice(i + 1) } };
}

/** Default ports per engine. */
const defaultPort = { postgres: 5432, mysql: 3306, mariadb: 3306 } as const;

const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    throw toTypedAwsError(what, err, rdsErrorTable);
  }
};

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

/** What the ManagedDB adapter needs. */
export interface ManagedDBAdapterDeps {
  readonly rds: RDSClient;
  /** Creates and updates connection Secrets. */
  readonly kube: KubeClient;
  readonly pollMs?: number;
  /** Current time for snapshot schedules (injectable for tests). */
  readonly now?: () => number;
  /** Records Warning events (failed scheduled snapshots). */
  readonly events?: EventRecorder;
}

/** What observe hands to update. */
interface Details {
  readonly db: DBInstance;
  /** Scheduled snapshot to take now (its deterministic name), if due. */
  readonly dueSnapshot?: string;
  /** Scheduled snapshots beyond keepSnapshots, oldest first. */
  readonly prune: string[];
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
export class ManagedDBAdapter implements ExternalClient<ManagedDB> {
  private readonly d: ManagedDBAdapterDeps;

  constructor(deps: ManagedDBAdapterDeps) {
    this.d = deps;
  }

  async observe(mr: ManagedDB, ctx: ReconcileContext): Promise<Observation> {
    const id = this.identifier(mr);
    const db = await this.describe(id);
    if (db === undefined) return { exists: false };
    const ownership = ownershipFromTags(
      Object.fromEntries((db.TagList ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
    );
    const state = db.DBInstanceStatus ?? 'unknown';
    const pending = Object.entries(db.PendingModifiedValues ?? {})
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
    const status: Record<string, unknown> = {
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
    };
    if (rdsFailedStates.includes(state)) {
      throw new TerminalError(
        `RDS reports the instance as ${state}; it needs attention in AWS (${db.StatusInfos?.map((s) => s.Message).join('; ') ?? ''})`,
      );
    }
    const available = rdsAvailableStates.includes(state);
    let upToDate = true;
    let diff: string | undefined;
    let details: Details = { db, prune: [] };
    if (
      available &&
      mr.metadata.deletionTimestamp === undefined &&
      mr.spec.managementPolicy !== 'ObserveOnly'
    ) {
      const m = modificationsFor(mr, db);
      const owned = ownership?.uid === ctx.ownership.uid;
      const request = pendingRequest(mr);
      upToDate = m.changes.length === 0 && owned && request === undefined;
      if (!upToDate) {
        diff = [
          ...m.changes,
          ...(owned ? [] : ['ownership tags']),
          ...(request !== undefined ? [`requested ${request.action} ${request.id}`] : []),
        ].join('; ');
      }
      if (db.Endpoint?.Address !== undefined) await this.writeConnectionSecret(mr, db);
      const sched = await this.schedule(mr, db, status);
      if (sched.dueSnapshot !== undefined || sched.prune.length > 0) {
        upToDate = false;
        diff = [
          diff,
          sched.dueSnapshot !== undefined ? `scheduled snapshot ${sched.dueSnapshot} due` : undefined,
          sched.prune.length > 0 ? `prune ${sched.prune.length} old snapshot(s)` : undefined,
        ]
          .filter((x) => x !== undefined && x !== '')
          .join('; ');
      }
      details = {
        db,
        prune: sched.prune,
        ...(sched.dueSnapshot !== undefined ? { dueSnapshot: sched.dueSnapshot } : {}),
      };
    }
    const ready: ReadyState = available
      ? { ready: true, reason: 'Available' }
      : {
          ready: false,
          reason: state === 'creating' ? 'Creating' : 'Unavailable',
          message: `RDS status is ${state}`,
        };
    return {
      exists: true,
      ownership,
      upToDate,
      ...(diff !== undefined ? { diff } : {}),
      ready,
      status,
      details,
      ...(available
        ? {}
        : { requeueAfterMs: busyPollInterval(mr, this.d.pollMs ?? 15_000, (this.d.now ?? Date.now)()) }),
    };
  }

  async create(
    mr: ManagedDB,
    ctx: ReconcileContext,
  ): Promise<{ status: Record<string, unknown>; description: string }> {
    const s = mr.spec;
    const id = this.identifier(mr);
    const managed = s.password?.managedByAWS === true;
    const password = managed ? undefined : await this.ensurePassword(mr);
    const tags = Object.entries({ ...(s.tags ?? {}), ...ownershipTagMap(ctx.ownership) }).map(
      ([Key, Value]) => ({ Key, Value }),
    );
    const common = {
      DBInstanceIdentifier: id,
      DBInstanceClass: s.instanceClass,
      MultiAZ: s.multiAZ ?? false,
      PubliclyAccessible: s.publiclyAccessible ?? false,
      ...(s.subnetGroupName !== undefined ? { DBSubnetGroupName: s.subnetGroupName } : {}),
      ...(s.vpcSecurityGroupIds !== undefined ? { VpcSecurityGroupIds: s.vpcSecurityGroupIds } : {}),
      DeletionProtection: s.deletionProtection ?? false,
      Tags: tags,
      // Snapshots (scheduled, on request, final) carry the ownership tags, so the IAM policy can
      // scope snapshot deletion to Skylift's own and a later lookup can tell whose they are.
      CopyTagsToSnapshot: true,
    };
    try {
      if (s.restoreFrom !== undefined) {
        const snap = s.restoreFrom.snapshotIdentifier;
        await this.d.rds.send(
          new RestoreDBInstanceFromDBSnapshotCommand({
            ...common,
            DBSnapshotIdentifier: snap,
            StorageType: s.storageType ?? 'gp3',
          }),
        );
      } else {
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
      }
    } catch (err) {
      if (awsErrorCode(err)?.replace(/Fault$/, '') !== 'DBInstanceAlreadyExists')
        throw toTypedAwsError(`create DB instance ${id}`, err, rdsErrorTable);
      // A retried create (timeout, crash): the instance is ours if it carries our uid.
      const existing = await this.describe(id);
      const owner = ownershipFromTags(
        Object.fromEntries((existing?.TagList ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
      );
      if (owner?.uid !== ctx.ownership.uid) {
        throw new OwnershipConflictError(
          `DB instance ${id} already exists and is ${owner !== undefined ? `owned by ${owner.owner}` : 'not managed by Skylift'}`,
        );
      }
    }
    return {
      status: { identifier: id, dbInstanceStatus: 'creating' },
      description: `creating DB instance ${id}`,
    };
  }

  async update(
    mr: ManagedDB,
    observed: ExistingObservation,
    ctx: ReconcileContext,
  ): Promise<{ description: string; pending: boolean }> {
    const details = observed.details as Details;
    const db = details.db;
    const id = db.DBInstanceIdentifier ?? this.identifier(mr);
    const { input, changes } = modificationsFor(mr, db);
    if (observed.ownership?.uid !== ctx.ownership.uid && db.DBInstanceArn !== undefined) {
      const arn = db.DBInstanceArn;
      await call('tag DB instance', () =>
        this.d.rds.send(
          new AddTagsToResourceCommand({
            ResourceName: arn,
            Tags: Object.entries(ownershipTagMap(ctx.ownership)).map(([Key, Value]) => ({ Key, Value })),
          }),
        ),
      );
      changes.push('tagged');
    }
    if (Object.keys(input).length > 0) {
      await call(`modify DB instance ${id}`, () =>
        this.d.rds.send(
          new ModifyDBInstanceCommand({
            DBInstanceIdentifier: id,
            ApplyImmediately: mr.spec.applyImmediately ?? false,
            ...input,
          }),
        ),
      );
    }
    if (details.dueSnapshot !== undefined) {
      const name = details.dueSnapshot;
      try {
        await this.d.rds.send(
          new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: name }),
        );
      } catch (err) {
        if (awsErrorCode(err)?.replace(/Fault$/, '') !== 'DBSnapshotAlreadyExists')
          throw toTypedAwsError(`scheduled snapshot ${name}`, err, rdsErrorTable);
      }
      changes.push(`scheduled snapshot ${name}`);
    }
    for (const old of details.prune) {
      try {
        await this.d.rds.send(new DeleteDBSnapshotCommand({ DBSnapshotIdentifier: old }));
      } catch (err) {
        if (awsErrorCode(err)?.replace(/Fault$/, '') !== 'DBSnapshotNotFound')
          throw toTypedAwsError(`delete snapshot ${old}`, err, rdsErrorTable);
      }
      changes.push(`pruned ${old}`);
    }
    const request = pendingRequest(mr);
    let acted = false;
    if (request !== undefined) {
      changes.push(await this.carryOut(mr, db, request));
      acted = request.action !== 'snapshot';
    }
    return { description: changes.join('; '), pending: Object.keys(input).length > 0 || acted };
  }

  /**
   * Carries out an on-demand request once: the request ID is recorded in an
   * annotation right after the RDS call, and the call itself is idempotent
   * (snapshots are named after the request; a reboot is skipped while the
   * instance is already rebooting), so a crash in between cannot repeat it.
   */
  private async carryOut(
    mr: ManagedDB,
    db: DBInstance,
    req: { action: OnDemandAction; id: string },
  ): Promise<string> {
    const id = db.DBInstanceIdentifier ?? '';
    let result: string;
    if (req.action === 'snapshot') {
      const name = `${id}-req-${req.id}`.slice(0, 255);
      try {
        await this.d.rds.send(
          new CreateDBSnapshotCommand({ DBInstanceIdentifier: id, DBSnapshotIdentifier: name }),
        );
      } catch (err) {
        if (awsErrorCode(err)?.replace(/Fault$/, '') !== 'DBSnapshotAlreadyExists')
          throw toTypedAwsError(`snapshot ${id}`, err, rdsErrorTable);
      }
      result = `snapshot ${name} started`;
    } else if (req.action === 'failover' && db.MultiAZ !== true) {
      result = 'failover refused: the instance is not Multi-AZ (set spec.multiAZ: true first)';
    } else if (db.DBInstanceStatus === 'rebooting') {
      result = `${req.action} already in progress`;
    } else {
      await call(`${req.action} ${id}`, () =>
        this.d.rds.send(
          new RebootDBInstanceCommand({
            DBInstanceIdentifier: id,
            ...(req.action === 'failover' ? { ForceFailover: true } : {}),
          }),
        ),
      );
      result = `${req.action} started`;
    }
    await this.d.kube.patch(
      `/apis/aws.skylift.dev/v1alpha1/namespaces/${mr.metadata.namespace ?? ''}/manageddbs/${mr.metadata.name}`,
      { metadata: { annotations: { [requestDoneAnnotation]: `${req.id} ${result}` } } },
      'merge',
    );
    return result;
  }

  async delete(mr: ManagedDB, observed: ExistingObservation): Promise<{ gone: boolean }> {
    // Observe has just described the instance; no need to ask RDS again.
    const db = (observed.details as Details).db;
    if (db.DBInstanceStatus === 'deleting') return { gone: false };
    if (db.DeletionProtection === true) {
      throw new TerminalError(
        'deletion protection is on for this DB instance: set spec.deletionProtection to false (or turn it off in AWS) and Skylift will finish deleting it',
      );
    }
    const id = db.DBInstanceIdentifier ?? '';
    const snapshot = mr.spec.finalSnapshot?.enabled !== false;
    try {
      await this.d.rds.send(
        new DeleteDBInstanceCommand({
          DBInstanceIdentifier: id,
          ...(snapshot ? { FinalDBSnapshotIdentifier: `${id}-final` } : { SkipFinalSnapshot: true }),
        }),
      );
    } catch (err) {
      const code = awsErrorCode(err)?.replace(/Fault$/, '');
      if (code === 'DBInstanceNotFound') return { gone: true };
      throw toTypedAwsError(`delete DB instance ${id}`, err, rdsErrorTable);
    }
    return { gone: (await this.describe(id)) === undefined };
  }

  /**
   * The snapshot schedule's state: the newest scheduled snapshot and when the
   * next is due go into `status`; returns the snapshot to take (named after
   * the most recent due run, so a retried run or a long outage takes one, not
   * many) and the ones to prune. A failed newest snapshot is an Event and a
   * Synced=False condition (reason SnapshotFailed) until a later one succeeds.
   */
  private async schedule(
    mr: ManagedDB,
    db: DBInstance,
    status: Record<string, unknown>,
  ): Promise<{ dueSnapshot?: string; prune: string[] }> {
    const expr = mr.spec.backup?.snapshotSchedule;
    if (expr === undefined) return { prune: [] };
    let cron: CronSchedule;
    try {
      cron = parseCron(expr);
    } catch (err) {
      throw new TerminalError(
        `spec.backup.snapshotSchedule: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const id = db.DBInstanceIdentifier ?? '';
    const prefix = `${id}-sched-`;
    const out = await call('list snapshots', () =>
      this.d.rds.send(new DescribeDBSnapshotsCommand({ DBInstanceIdentifier: id, SnapshotType: 'manual' })),
    );
    const snaps = (out.DBSnapshots ?? [])
      .filter((s) => (s.DBSnapshotIdentifier ?? '').startsWith(prefix))
      .sort((a, b) => (a.DBSnapshotIdentifier ?? '').localeCompare(b.DBSnapshotIdentifier ?? ''));
    const last = snaps.at(-1);
    const now = (this.d.now ?? Date.now)();
    const lastRun =
      last !== undefined ? runTime(last.DBSnapshotIdentifier?.slice(prefix.length) ?? '') : undefined;
    const base = lastRun ?? Date.parse(mr.metadata.creationTimestamp ?? new Date(now).toISOString());
    let due: number | undefined;
    for (
      let t = nextRun(cron, base), i = 0;
      t !== undefined && t <= now && i < 100_000;
      t = nextRun(cron, t), i++
    )
      due = t;
    const next = nextRun(cron, due ?? Math.max(base, now - 60_000));
    if (last !== undefined) {
      status.lastSnapshot = {
        name: last.DBSnapshotIdentifier,
        state: last.Status,
        ...(lastRun !== undefined ? { time: new Date(lastRun).toISOString() } : {}),
      };
    }
    if (next !== undefined) status.nextSnapshot = new Date(next).toISOString();
    const keep = mr.spec.backup?.keepSnapshots ?? 7;
    const prune = snaps.slice(0, Math.max(0, snaps.length - keep)).map((s) => s.DBSnapshotIdentifier ?? '');
    if (last?.Status === 'failed' && due === undefined) {
      const message = `scheduled snapshot ${last.DBSnapshotIdentifier ?? ''} failed; the next is due ${next !== undefined ? new Date(next).toISOString() : 'never'}`;
      this.d.events?.record(mr, {
        type: 'Warning',
        reason: 'SnapshotFailed',
        action: 'Snapshot',
        note: message,
      });
      throw new RetryableError('SnapshotFailed', message);
    }
    return { prune, ...(due !== undefined ? { dueSnapshot: `${prefix}${runStamp(due)}` } : {}) };
  }

  /** deletionPolicy Orphan keeps the instance, so its connection Secret stays too: drop our owner reference. */
  async release(mr: ManagedDB): Promise<void> {
    const path = this.secretPath(mr, connectionSecretName(mr));
    try {
      const secret = await this.d.kube.get<{ metadata: { ownerReferences?: { uid: string }[] } }>(path);
      const refs = (secret.metadata.ownerReferences ?? []).filter((r) => r.uid !== mr.metadata.uid);
      await this.d.kube.patch(
        path,
        [{ op: 'replace', path: '/metadata/ownerReferences', value: refs }],
        'json',
      );
    } catch (err) {
      if (err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 422)) return;
      throw err;
    }
  }

  private identifier(mr: ManagedDB): string {
    const ext = mr.spec.externalName;
    return ext !== undefined && ext !== ''
      ? ext
      : dbIdentifier(mr.metadata.namespace ?? '', mr.metadata.name, mr.metadata.uid ?? '');
  }

  private async describe(id: string): Promise<DBInstance | undefined> {
    try {
      return (await this.d.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id })))
        .DBInstances?.[0];
    } catch (err) {
      if (awsErrorCode(err)?.replace(/Fault$/, '') === 'DBInstanceNotFound') return undefined;
      throw toTypedAwsError(`describe DB instance ${id}`, err, rdsErrorTable);
    }
  }

  private secretPath(mr: ManagedDB, name?: string): string {
    return `/api/v1/namespaces/${mr.metadata.namespace ?? ''}/secrets${name !== undefined ? `/${name}` : ''}`;
  }

  private async readSecret(mr: ManagedDB): Promise<Record<string, string> | undefined> {
    try {
      const s = await this.d.kube.get<{ data?: Record<string, string> }>(
        this.secretPath(mr, connectionSecretName(mr)),
      );
      return Object.fromEntries(
        Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
      );
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  /** The generated master password, created in the connection Secret before the instance (so a crash cannot lose it). */
  private async ensurePassword(mr: ManagedDB): Promise<string> {
    const existing = await this.readSecret(mr);
    if (existing?.password !== undefined && existing.password !== '') return existing.password;
    const password = randomBytes(24).toString('base64url');
    await this.applySecret(mr, { password, username: mr.spec.masterUsername, engine: mr.spec.engine });
    return password;
  }

  private async writeConnectionSecret(mr: ManagedDB, db: DBInstance): Promise<void> {
    const current = (await this.readSecret(mr)) ?? {};
    const host = db.Endpoint?.Address ?? '';
    const port = String(db.Endpoint?.Port ?? defaultPort[mr.spec.engine]);
    const username = mr.spec.masterUsername;
    const dbname = mr.spec.dbName ?? '';
    const scheme = mr.spec.engine === 'postgres' ? 'postgresql' : 'mysql';
    const password = current.password;
    const want: Record<string, string> = {
      host,
      port,
      username,
      dbname,
      engine: mr.spec.engine,
      ...(db.MasterUserSecret?.SecretArn !== undefined ? { secretArn: db.MasterUserSecret.SecretArn } : {}),
      ...(password !== undefined ? { password } : {}),
      uri:
        password !== undefined
          ? `${scheme}://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${host}:${port}/${dbname}`
          : `${scheme}://${encodeURIComponent(username)}@${host}:${port}/${dbname}`,
    };
    if (Object.entries(want).every(([k, v]) => current[k] === v)) return;
    await this.applySecret(mr, want);
  }

  private async applySecret(mr: ManagedDB, data: Record<string, string>): Promise<void> {
    const name = connectionSecretName(mr);
    await this.d.kube.patch(
      this.secretPath(mr, name),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          namespace: mr.metadata.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'skylift' },
          // Removed with the ManagedDB by Kubernetes' garbage collector.
          ownerReferences: [
            {
              apiVersion: 'aws.skylift.dev/v1alpha1',
              kind: 'ManagedDB',
              name: mr.metadata.name,
              uid: mr.metadata.uid ?? '',
              controller: true,
            },
          ],
        },
        type: 'Opaque',
        stringData: data,
      },
      'apply',
      { fieldManager: 'skylift', force: true },
    );
  }
}

/** `YYYYMMDDHHmm` of a run time (UTC). Pure. */
function runStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 12);
}

/** The run time a stamp stands for, or undefined. Pure. */
function runTime(stamp: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp);
  return m === null
    ? undefined
    : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
}
