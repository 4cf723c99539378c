// ManagedDB's ExternalClient: one RDS DB instance per object. The lifecycle's steps are here; each
// job is a part of its own — the instance's calls (instance.ts), the master password and the
// connection Secret (passwords.ts), snapshot calls (snapshotCalls.ts) and their schedule
// (snapshots.ts), the restore check (restoreCheck.ts), on-demand requests (onDemand.ts), and what a
// look says (observation.ts).
import type { DBInstance } from '@aws-sdk/client-rds';
import { ownershipFromTags } from '../../apis/managed.ts';
import { tagMap } from '../../providers/aws/tags.ts';
import { rdsAvailableStates, rdsFailedStates } from '../../providers/rds/states.ts';
import type {
  Created,
  DeltaEntry,
  ExistingObservation,
  ExternalClient,
  Observation,
  Released,
  ReleaseCause,
  ReconcileContext,
  Updated,
  Writes,
} from '../../runtime/adapter.ts';
import { TerminalError } from '../../runtime/errors.ts';
import { busyPollInterval } from '../../runtime/polling.ts';
import type { ManagedDB } from './api.ts';
import { connectionSecretRelease } from './connectionSecret.ts';
import type { ManagedDBAdapterDeps } from './deps.ts';
import { instanceIdentifier } from './identity.ts';
import { DBInstances } from './instance.ts';
import { engineVersionToAccept, modificationsFor } from './modifications.ts';
import {
  acceptedVersionStatus,
  instanceDelta,
  instanceStatus,
  readyOf,
  type ManagedDBField,
} from './observation.ts';
import { carryOutRequest } from './onDemand.ts';
import { MasterPasswords, PasswordReason } from './passwords.ts';
import { pendingRequest, requestDoneAnnotation } from './requests.ts';
import { checkRestorable } from './restoreCheck.ts';
import { needsPasswordAfterRestore } from './restore.ts';
import { DBSnapshots } from './snapshotCalls.ts';
import { planSnapshots, snapshotSchedule } from './snapshots.ts';

export type { ManagedDBAdapterDeps } from './deps.ts';
export type { ManagedDBField } from './observation.ts';

/** Ready/Synced reasons particular to ManagedDB. */
export const DBReason = {
  /** The newest scheduled snapshot failed. */
  SnapshotFailed: 'SnapshotFailed',
  ...PasswordReason,
} as const;

/** What observe saw, handed to update and delete. */
export interface ManagedDBDetails {
  readonly db: DBInstance;
  /** Scheduled snapshot to take now (its deterministic name), if due. */
  readonly dueSnapshot?: string;
  /** Scheduled snapshots beyond keepSnapshots, oldest first. */
  readonly prune: readonly string[];
}

type DBObservation = ExistingObservation<ManagedDBDetails, ManagedDBField>;

/**
 * ManagedDB's AWS side: one RDS DB instance with a deterministic identifier and ownership tags,
 * looked up before any create (a create retried after a timeout finds its own instance instead of
 * looping on DBInstanceAlreadyExists). The master password is AWS-managed or generated into the
 * connection Secret before the create; the Secret follows the endpoint. Day-2 changes are one
 * ModifyDBInstance with only what differs (pending modifications count as done). Deletion takes a
 * final snapshot unless told not to.
 */
export class ManagedDBAdapter implements ExternalClient<ManagedDB, ManagedDBDetails, ManagedDBField> {
  private readonly d: ManagedDBAdapterDeps;
  private readonly instances: DBInstances;
  private readonly snapshots: DBSnapshots;
  private readonly passwords: MasterPasswords;

  constructor(deps: ManagedDBAdapterDeps) {
    this.d = deps;
    this.instances = new DBInstances(deps.rds);
    this.snapshots = new DBSnapshots(deps.rds);
    this.passwords = new MasterPasswords(deps.kube, this.instances);
  }

  async observe(
    mr: ManagedDB,
    ctx: ReconcileContext,
  ): Promise<Observation<ManagedDBDetails, ManagedDBField>> {
    const id = instanceIdentifier(mr);
    const db = await this.instances.describe(id);
    if (db === undefined) return { exists: false };
    const state = db.DBInstanceStatus ?? 'unknown';
    const status = instanceStatus(mr, db, id);
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
      delta.push(...instanceDelta(mr, db, ctx.ownership));
      // The spec passed (in sync, or a modification follows): a later spec lowered below it is a downgrade.
      Object.assign(status, acceptedVersionStatus(engineVersionToAccept(mr)));
      if (db.Endpoint?.Address !== undefined) {
        const kept = await this.passwords.keepSecret(mr, db);
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
          await this.snapshots.manualOf(db),
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
    return {
      exists: true,
      ownership: ownershipFromTags(tagMap(db.TagList)),
      delta,
      ready: readyOf(mr, state, available, passwordUnknown),
      status,
      details,
      ...(writes !== undefined ? { writes } : {}),
      ...(failure !== undefined ? { failure } : {}),
      ...(available ? {} : { requeueAfterMs: busyPollInterval(mr, this.d.pollMs, ctx.clock.now()) }),
    };
  }

  /** The connection Secret claimed, with the generated password, before any AWS call (passwords.ts). */
  prepareCreate(mr: ManagedDB): Promise<Writes> {
    return this.passwords.prepare(mr);
  }

  async create(mr: ManagedDB, ctx: ReconcileContext): Promise<Created> {
    const id = instanceIdentifier(mr);
    const password = await this.passwords.forCreate(mr);
    const restoreFrom = mr.spec.restoreFrom;
    if (restoreFrom !== undefined)
      await checkRestorable(
        this.snapshots,
        mr,
        restoreFrom.snapshotIdentifier,
        ctx.ownership,
        this.d.restoreNamespaces?.(mr.metadata.namespace ?? '') ?? [],
      );
    await this.instances.create(mr, ctx.ownership, password);
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
      await this.instances.claim(db.DBInstanceArn, ctx.ownership);
      changes.push('tagged');
    }
    if (observed.delta.some((d) => d.field === 'tags') && db.DBInstanceArn !== undefined) {
      await this.instances.syncUserTags(mr, db.DBInstanceArn, tagMap(db.TagList));
      changes.push('tags');
    }
    const resetPassword = observed.delta.some((d) => d.field === 'password');
    let passwordSet: Writes | undefined;
    if (resetPassword) {
      const restored = needsPasswordAfterRestore(mr.spec.restoreFrom, tagMap(db.TagList), ctx.ownership.uid);
      passwordSet = await this.passwords.giveToInstance(mr, db, ctx.ownership, restored);
      changes.push(
        !restored
          ? "master password set to the connection Secret's"
          : mr.spec.password?.managedByAWS === true
            ? 'restored instance: master password now managed by AWS'
            : "restored instance: master password set to the connection Secret's",
      );
    }
    if (Object.keys(input).length > 0)
      await this.instances.modify(id, mr.spec.applyImmediately ?? false, input, `modify DB instance ${id}`);
    if (dueSnapshot !== undefined) {
      await this.snapshots.take(id, dueSnapshot, `scheduled snapshot ${dueSnapshot}`);
      changes.push(`scheduled snapshot ${dueSnapshot}`);
    }
    for (const old of prune) {
      await this.snapshots.delete(old);
      changes.push(`pruned ${old}`);
    }
    const request = pendingRequest(mr);
    let writes: Writes | undefined;
    let acted = false;
    if (request !== undefined) {
      const result = await carryOutRequest(this.d.rds, this.snapshots, db, request);
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

  /** One step of deleting the instance observe has just described (instance.ts); no need to ask RDS again. */
  delete(mr: ManagedDB, observed: DBObservation): Promise<{ gone: boolean }> {
    return this.instances.delete(mr, observed.details.db);
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
}
