import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { jittered } from './backoff.ts';
import type { Clock } from './clock.ts';
import {
  conditionChanged,
  ConditionType,
  getCondition,
  readyAfterFailure,
  Reason,
  setCondition,
  type ConditionUpdate,
  type FailedPassObservation,
} from './conditions.ts';
import {
  decideRetry,
  definitelyNotCreated,
  ForbiddenError,
  OwnershipConflictError,
  RequeueAfter,
  RetryableError,
  TerminalError,
  wrap,
} from './errors.ts';
import { EventReason, type EventRecorder, type EventSpec } from './events.ts';
import type { KubeClient } from './kube/client.ts';
import type { ResourceType } from '../apis/meta.ts';
import {
  createPendingAnnotation,
  finalizerName,
  ownerAsSeenBy,
  ownershipOf,
  requestAnnotation,
  type ManagedObject,
  type ManagedStatus,
  type OwnershipTags,
} from '../apis/managed.ts';
import {
  describeDelta,
  differsFromSpec,
  driftIn,
  sameLocation,
  type Connector,
  type ExistingObservation,
  type ExternalClient,
  type ReleaseCause,
  type ReadyState,
  type ResourceLocation,
  type ReconcileContext,
  type Writes,
} from './adapter.ts';
import { writeCompanion } from './companions.ts';
import { writePodCondition } from './podConditions.ts';
import { ownerGone, ownershipStanding, type OwnershipStanding } from './ownership.ts';
import { CreateMarkers } from './createMarkers.ts';
import { hasFinalizer, ObjectWrites, pendingCreate } from './objectWrites.ts';
import { defaultControllerSettings } from './settings.ts';
import { requestRefusal } from './requests.ts';
import type { Metrics, ReconcileResult } from './metrics.ts';
import { inReconcileSpan, type ReconcileSpan, type ReconcileSpanTarget } from './tracing.ts';

/** Options for {@link Engine}. */
export interface EngineOptions<T extends ManagedObject, D = undefined, F extends string = string> {
  readonly type: ResourceType;
  /** Binds the kind's adapter to each object (its AWS clients). */
  readonly connector: Connector<T, D, F>;
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly events: EventRecorder;
  /** Written into the ownership tags of everything this operator creates. */
  readonly clusterId: string;
  /** Periodic drift check of Ready resources (default: the controller settings' default). */
  readonly resyncPeriodMs?: number;
  /** Poll interval while AWS is busy (creating, updating, deleting). */
  readonly pollMs?: number;
  /** How long a create-pending marker makes the engine wait for a lookup to find the resource. */
  readonly createGraceMs?: number;
  /**
   * How long after a new object's create the engine holds back a status that only says "in
   * progress", so that the first status it writes is the outcome (default 5 s).
   */
  readonly firstStatusHoldMs?: number;
  readonly random?: () => number;
  /**
   * The actions the kind accepts in the request annotation (`<action> <id>`); default none. Any
   * other value is reported (Synced=False Terminal, one Warning Event) beside an otherwise
   * successful pass.
   */
  readonly requestActions?: readonly string[];
}

/** The engine's own defaults. */
export const engineDefaults = {
  /** Poll interval while AWS is busy, for kinds that set none. */
  pollMs: 5000,
  /** A create-pending marker younger than this holds back a second create. */
  createGraceMs: 30_000,
  /**
   * A new object's "in progress" status waits this long after its create: most creates are done
   * sooner (a Route 53 change, a load balancer in an emulator), and their first status is the outcome.
   */
  firstStatusHoldMs: 5000,
} as const;

/** What the work queue should do with the key after a reconcile. */
export type ReconcileOutcome =
  | { readonly kind: 'done'; readonly requeueAfterMs?: number }
  /** Retry with per-key exponential backoff. */
  | { readonly kind: 'backoff' };

/** The per-reconcile scratchpad: status changes accumulate here and are written once. */
interface Pass<T extends ManagedObject, D, F extends string> {
  /** The object as adapters see it: its status is the one held back for a new object, if any. */
  obj: T;
  /** The status as the apiserver holds it: what a status write is a patch against. */
  written: ManagedStatus;
  /**
   * The status this engine last wrote, when the object was read before that write landed in the
   * cache (or changed since): the apiserver may hold this instead of `written`, so a status write
   * is a patch against both.
   */
  readonly alsoWritten?: ManagedStatus;
  readonly statusBefore: ManagedStatus;
  status: ManagedStatus;
  readonly log: Logger;
  readonly ctx: ReconcileContext;
  /** The adapter bound to this object, once connected. */
  adapter?: ExternalClient<T, D, F>;
  /** Set when the object was stale: nothing learnt is worth writing. */
  skipStatus?: boolean;
  /** What this pass learnt of the AWS resource, for the Ready condition if the pass fails. */
  observed: FailedPassObservation;
  /** The pass ended with AWS still at work (creating, propagating), nothing failed and nobody to call. */
  inProgress?: boolean;
}

/**
 * The managed-resource lifecycle shared by every kind: finalizer, create
 * with a pending marker and lookup-before-create, observe → create | update |
 * nothing, deletion per deletionPolicy, ObserveOnly, adoption through
 * spec.externalName with ownership checks, drift correction, typed error
 * handling, and one status write per reconcile, only when something changed.
 * `reconcile()` never throws.
 */
export class Engine<T extends ManagedObject, D = undefined, F extends string = string> {
  private readonly o: EngineOptions<T, D, F>;
  private readonly name: string;
  private readonly writes: ObjectWrites<T>;
  private readonly markers: CreateMarkers;
  /** Statuses held back for new objects (firstStatusHold), by uid, for their next pass to start from. */
  private readonly held = new Map<string, { readonly status: ManagedStatus; readonly at: number }>();
  /** When {@link hold} last swept {@link held} of entries never seen again. */
  private heldSweptAt = Number.NEGATIVE_INFINITY;
  /**
   * The last status written per object (by uid) and the resourceVersion that write made, until a
   * pass reads the object at that version: the informer's cache lags the writes, and a pass that
   * starts from an older copy must not take that copy's status for what the apiserver holds.
   */
  private readonly ownWrites = new Map<
    string,
    { readonly resourceVersion: string | undefined; readonly status: ManagedStatus; readonly at: number }
  >();
  /** When {@link recordWrite} last swept {@link ownWrites} of entries never seen again. */
  private ownWritesSweptAt = Number.NEGATIVE_INFINITY;

  constructor(opts: EngineOptions<T, D, F>) {
    this.o = opts;
    this.writes = new ObjectWrites<T>(opts.client, opts.type);
    this.markers = new CreateMarkers(opts.createGraceMs ?? engineDefaults.createGraceMs);
    this.name = opts.type.kind.toLowerCase();
  }

  /** Reconciles one object read from the cache, in a tracing span when tracing is on. Never throws. */
  reconcile(obj: T): Promise<ReconcileOutcome> {
    const target = {
      reconcileId: randomUUID(),
      kind: this.o.type.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
    };
    return inReconcileSpan(target, (span) => this.reconcileOnce(obj, target, span));
  }

  private async reconcileOnce(
    obj: T,
    target: ReconcileSpanTarget,
    span: ReconcileSpan,
  ): Promise<ReconcileOutcome> {
    const started = this.o.clock.now();
    // The trace id in every log line of the reconcile ties logs to the trace.
    const log = this.o.logger.child(
      span.traceId !== undefined ? { ...target, traceId: span.traceId } : target,
    );
    // What a held-back pass learnt (a change ID, an ARN) is where the next pass expects it: in status.
    const heldStatus = this.heldStatusOf(obj);
    const alsoWritten = this.ownWriteOf(obj);
    const pass: Pass<T, D, F> = {
      obj: heldStatus !== undefined ? { ...obj, status: heldStatus } : obj,
      written: obj.status ?? {},
      ...(alsoWritten !== undefined ? { alsoWritten } : {}),
      statusBefore: obj.status ?? {},
      status: structuredClone(heldStatus ?? obj.status ?? {}),
      log,
      ctx: { logger: log, ownership: ownershipOf(obj, this.o.clusterId), clock: this.o.clock },
      observed: { kind: obj.metadata.deletionTimestamp !== undefined ? 'deleting' : 'none' },
    };
    let outcome: ReconcileOutcome;
    let result: ReconcileResult;
    let failure: string | undefined;
    try {
      outcome =
        obj.metadata.deletionTimestamp !== undefined
          ? await this.reconcileDelete(pass)
          : await this.reconcileLive(pass);
      if (obj.metadata.deletionTimestamp === undefined) this.checkRequest(pass);
      result = outcome.kind === 'done' && outcome.requeueAfterMs !== undefined ? 'requeue_after' : 'success';
    } catch (err) {
      ({ outcome, result } = this.handleError(pass, err));
      failure = errText(err);
      // A create refused after the fact (a Route 53 batch rejected, reported on a later pass) made
      // nothing: its marker must not hold back the create of a corrected spec, nor the deletion.
      // Only a live pass that reached its adapter can say so (observe reports such a refusal, or
      // the create itself); a deletion's, or a failed connect's, terminal error says nothing about it.
      if (decideRetry(err).kind === 'terminal' && refusesCreate(pass))
        this.markers.refused(pass.obj, this.o.clock.now());
      if (err instanceof RetryableError && err.writes !== undefined) {
        await this.write(pass, err.writes).catch((writeErr: unknown) => {
          log.warn({ err: errText(writeErr) }, 'writes of a failed reconcile failed');
        });
      }
    }
    try {
      const holdMs = this.firstStatusHold(pass, result);
      if (holdMs === undefined) {
        await this.writeStatus(pass);
        // A stale pass wrote nothing: what was held stays for the next pass.
        if (pass.skipStatus !== true) this.held.delete(uidOf(obj));
      } else {
        this.hold(obj, pass.status);
        if (outcome.kind === 'done')
          outcome = { kind: 'done', requeueAfterMs: Math.min(outcome.requeueAfterMs ?? holdMs, holdMs) };
      }
    } catch (err) {
      const decision = decideRetry(err);
      if (decision.kind !== 'staleObject') log.warn({ err: errText(err) }, 'status write failed');
      outcome = { kind: 'backoff' };
      result = 'error';
      failure = `write status: ${errText(err)}`;
    }
    span.record(result, result === 'error' ? failure : undefined);
    this.o.metrics.reconcileTotal.inc({ controller: this.name, result });
    if (result === 'error') this.o.metrics.reconcileErrors.inc({ controller: this.name });
    this.o.metrics.reconcileTime.observe({ controller: this.name }, (this.o.clock.now() - started) / 1000);
    return outcome;
  }

  private async reconcileLive(p: Pass<T, D, F>): Promise<ReconcileOutcome> {
    const { spec, metadata } = p.obj;
    const observeOnly = spec.managementPolicy === 'ObserveOnly';

    const adapter = await this.connect(p);
    // What the namespace may do comes first: a refused object gets no AWS change at all (not even
    // a release), only its condition. Deletion skips this: cleaning up is always allowed.
    if (adapter.authorize !== undefined) await adapter.authorize(p.obj, p.ctx);
    // Against the held status too: a new object's location may not be written yet.
    checkLocation(p.obj.status ?? {}, adapter, false);
    if (observeOnly && hasFinalizer(p.obj)) {
      // From Manage to ObserveOnly: let go as an Orphan deletion does (work not yet sent to AWS is
      // dropped; work in flight is waited for), since ObserveOnly never writes AWS.
      const waiting = await this.release(p, adapter, 'observeOnly');
      if (waiting !== undefined) return waiting;
      await this.setFinalizer(p, false);
    }
    const obs = await this.step('observe', () => adapter.observe(p.obj, p.ctx));
    p.observed = obs.exists
      ? { kind: 'present', matches: !differsFromSpec(obs.delta), ready: obs.ready }
      : { kind: 'absent' };
    // The finalizer goes on before anything can change in AWS: here when the resource exists
    // (before an update or adoption), or together with the create-pending marker before a create.
    if (!observeOnly && obs.exists && !hasFinalizer(p.obj)) await this.setFinalizer(p, true);
    const gen = metadata.generation;
    const wasSynced =
      p.statusBefore.observedGeneration === gen &&
      getCondition(p.statusBefore.conditions, ConditionType.Synced)?.status === 'True';
    const wasReady = getCondition(p.statusBefore.conditions, ConditionType.Ready)?.status === 'True';

    if (!obs.exists) {
      if (observeOnly) {
        // Nothing of a resource that is gone is reported any more (its state, identifiers, children).
        p.status = keepCommon(p.status);
        this.setReady(p, { status: 'False', reason: Reason.NotFound, message: notFoundMessage(p.obj) });
        this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
        return { kind: 'done', requeueAfterMs: this.resync() };
      }
      if (spec.externalName !== undefined && spec.externalName !== '') {
        throw new TerminalError(
          `spec.externalName ${JSON.stringify(spec.externalName)} does not exist in AWS; nothing to adopt: spec.externalName is fixed at create, so delete this object and create it again naming an existing resource, or without spec.externalName to have Skylift create one`,
        );
      }
      const pendingSince = this.markers.holding(p.obj, this.o.clock.now());
      if (pendingSince !== undefined) {
        // A create was attempted but is not visible yet: AWS lookups can lag a create.
        const waited = this.o.clock.now() - pendingSince;
        const grace = this.o.createGraceMs ?? engineDefaults.createGraceMs;
        p.log.info({ waitedMs: waited }, 'create pending, waiting for the resource to become visible');
        this.setReady(p, {
          status: 'False',
          reason: Reason.Creating,
          message: 'waiting for a pending create to become visible',
        });
        // Waiting is what this pass had to do: it succeeded.
        this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
        p.inProgress = true;
        return { kind: 'done', requeueAfterMs: Math.min(grace - waited, this.poll()) };
      }
      const drift = wasSynced && wasReady;
      if (adapter.prepareCreate !== undefined) {
        const prepare = adapter.prepareCreate.bind(adapter);
        await this.write(p, await this.step('prepare create', () => prepare(p.obj, p.ctx)));
      }
      // One write: the finalizer (if missing) and the marker, both before the create.
      await this.markCreatePending(p);
      const created = await this.step('create', async () => {
        try {
          return await adapter.create(p.obj, p.ctx);
        } catch (err) {
          // AWS answered "no": nothing was created, so the marker must not hold back the retry.
          if (definitelyNotCreated(err)) await this.setAnnotation(p, createPendingAnnotation, undefined);
          throw err;
        }
      });
      p.status = { ...keepCommon(p.status), ...created.status, ...locationOf(adapter) };
      p.observed = { kind: 'present', matches: false, ready: { ready: false, reason: Reason.Creating } };
      await this.write(p, created.writes);
      this.setReady(p, {
        status: 'False',
        reason: Reason.Creating,
        message: created.description ?? 'created, waiting for AWS',
      });
      this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
      // The marker stays (see createMarkers.ts); the status with the identity is written at the end
      // of the pass, or for a new object once the outcome is known (firstStatusHold).
      p.inProgress = true;
      if (drift) {
        this.o.metrics.driftCorrections.inc({ kind: this.o.type.kind });
        this.event(p, {
          type: 'Warning',
          reason: EventReason.DriftCorrected,
          action: 'Create',
          note: `recreated: the AWS resource was deleted outside Skylift${created.description !== undefined ? ` (${created.description})` : ''}`,
        });
      } else {
        this.event(p, {
          type: 'Normal',
          reason: EventReason.Created,
          action: 'Create',
          note: created.description ?? 'created the AWS resource',
        });
      }
      return { kind: 'done', requeueAfterMs: this.poll() };
    }

    this.markers.settled(p.obj, this.o.clock.now());
    // What follows from the observation (companion writes such as a connection Secret, the kind's
    // status fields) comes from the AWS resource: published only once it is this object's to report on.
    const standing = await this.checkOwnership(p.obj, obs, p.ctx.ownership);
    await this.write(p, obs.writes);

    p.status = { ...keepCommon(p.status), ...obs.status, ...locationOf(adapter) };
    if (!observeOnly && obs.delta.length > 0) {
      const adopting = standing.kind === 'adopting';
      // Drift: AWS moved away from a spec it once matched. Finishing a create (the resource was never
      // Ready yet), carrying out requested or scheduled operations and following what moved in
      // Kubernetes (endpoints) are not drift.
      const drift = wasSynced && wasReady && !adopting && driftIn(obs.delta);
      const updated = await this.step('update', () => adapter.update(p.obj, obs, p.ctx));
      if (updated.pending !== true) p.observed = { kind: 'present', matches: true, ready: obs.ready };
      await this.write(p, updated.writes);
      const what = updated.description ?? describeDelta(obs.delta) ?? 'updated the AWS resource';
      if (adopting) {
        this.event(p, {
          type: 'Normal',
          reason: EventReason.Adopted,
          action: 'Adopt',
          note: `adopted ${spec.externalName ?? ''}: ${what}`,
        });
      } else if (drift) {
        this.o.metrics.driftCorrections.inc({ kind: this.o.type.kind });
        this.event(p, {
          type: 'Warning',
          reason: EventReason.DriftCorrected,
          action: 'Update',
          note: `corrected drift: ${what}`,
        });
      } else {
        this.event(p, { type: 'Normal', reason: EventReason.Updated, action: 'Update', note: what });
      }
      if (updated.pending === true) {
        this.setReady(p, { status: 'False', reason: Reason.Updating, message: what });
        p.inProgress = true;
      } else {
        this.setReady(p, {
          status: obs.ready.ready ? 'True' : 'False',
          reason: obs.ready.reason,
          ...msg(obs.ready.message),
        });
        this.warnIfActionRequired(p, obs.ready);
        p.inProgress = !obs.ready.ready && obs.ready.actionRequired !== true;
      }
      this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
      failIfObservedFailing(obs);
      // A finished update is confirmed by the next observe: soon, rather than a full poll later.
      return {
        kind: 'done',
        requeueAfterMs: updated.pending === true ? this.poll() : Math.min(this.poll(), 1000),
      };
    }

    this.setReady(p, {
      status: obs.ready.ready ? 'True' : 'False',
      reason: obs.ready.reason,
      ...msg(obs.ready.message),
    });
    this.warnIfActionRequired(p, obs.ready);
    this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
    p.inProgress = !obs.ready.ready && obs.ready.actionRequired !== true;
    failIfObservedFailing(obs);
    // Waiting for a person (actionRequired) is not AWS being busy: polling would not help.
    const settled = obs.ready.ready || obs.ready.actionRequired === true;
    return {
      kind: 'done',
      requeueAfterMs: obs.requeueAfterMs ?? (settled ? this.resync() : this.poll()),
    };
  }

  /**
   * Lets go of the AWS resource without touching it (deletionPolicy Orphan, ObserveOnly): the
   * adapter drops work it has not started and the engine writes what it asks. Returns the outcome
   * to end the pass with while work already started in AWS is still under way (Ready=False with
   * reason Deleting or Updating), else undefined: the caller may drop the finalizer.
   */
  private async release(
    p: Pass<T, D, F>,
    adapter: ExternalClient<T, D, F>,
    cause: ReleaseCause,
  ): Promise<ReconcileOutcome | undefined> {
    if (adapter.release === undefined) return undefined;
    const release = adapter.release.bind(adapter);
    const released = await this.step('release', () => release(p.obj, p.ctx, cause));
    const reason = cause === 'deleted' ? Reason.Deleting : Reason.Updating;
    if (released.waiting !== undefined) {
      // Letting go now would let AWS change after Skylift let go: keep the finalizer until that is done.
      this.setReady(p, { status: 'False', reason, message: released.waiting.message });
      this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
      return { kind: 'done', requeueAfterMs: released.waiting.requeueAfterMs };
    }
    await this.write(p, released.writes);
    return undefined;
  }

  private async reconcileDelete(p: Pass<T, D, F>): Promise<ReconcileOutcome> {
    if (!hasFinalizer(p.obj)) return { kind: 'done' };
    const { spec } = p.obj;
    const adapter = await this.connect(p).catch((err: unknown) => {
      // No identity to reach AWS with (the namespace lost its policy): the finalizer stays, so the
      // AWS resource is neither deleted unseen nor forgotten.
      if (err instanceof ForbiddenError)
        throw new ForbiddenError(
          `cannot delete the AWS resource: ${err.message}. The finalizer ${finalizerName} stays until Skylift may reach AWS for this namespace again; to leave the resource in AWS instead, remove the finalizer`,
        );
      throw err;
    });
    checkLocation(p.obj.status ?? {}, adapter, true);
    if (spec.managementPolicy === 'ObserveOnly' || spec.deletionPolicy === 'Orphan') {
      const waiting = await this.release(p, adapter, 'deleted');
      if (waiting !== undefined) return waiting;
      await this.setFinalizer(p, false);
      this.event(p, {
        type: 'Normal',
        reason: EventReason.Orphaned,
        action: 'Orphan',
        note: 'left the AWS resource in place (deletionPolicy Orphan or ObserveOnly)',
      });
      return { kind: 'done' };
    }
    const obs = await this.step('observe', () => adapter.observe(p.obj, p.ctx));
    if (!obs.exists) {
      if (this.markers.holding(p.obj, this.o.clock.now()) !== undefined) {
        // A create may have happened but not be visible yet; do not let go of it.
        this.setReady(p, {
          status: 'False',
          reason: Reason.Deleting,
          message: 'waiting for a pending create to become visible before deleting',
        });
        return { kind: 'done', requeueAfterMs: this.poll() };
      }
      await this.setFinalizer(p, false);
      return { kind: 'done' };
    }
    const owner = obs.ownership;
    if (owner?.uid !== p.ctx.ownership.uid) {
      // Never ours: another object's, or untagged — created outside Skylift and never adopted (an
      // adoption through spec.externalName tags the resource first; it failed or never ran). Let the
      // CR go and leave the resource alone.
      const why =
        owner !== undefined
          ? `it is owned by ${ownerAsSeenBy(owner, p.ctx.ownership)}`
          : 'it carries no Skylift ownership: it was never adopted';
      p.log.info({ owner: owner?.owner }, `releasing the CR without deleting the AWS resource: ${why}`);
      await this.setFinalizer(p, false);
      this.event(p, {
        type: 'Normal',
        reason: EventReason.Orphaned,
        action: 'Orphan',
        note: `left the AWS resource in place: ${why}`,
      });
      return { kind: 'done' };
    }
    this.markers.settled(p.obj, this.o.clock.now());
    const res = await this.step('delete', () => adapter.delete(p.obj, obs, p.ctx));
    if (res.gone) {
      this.event(p, {
        type: 'Normal',
        reason: EventReason.Deleted,
        action: 'Delete',
        note: 'deleted the AWS resource',
      });
      await this.setFinalizer(p, false);
      return { kind: 'done' };
    }
    this.setReady(p, {
      status: 'False',
      reason: Reason.Deleting,
      message: 'waiting for AWS to finish deleting',
    });
    this.setSynced(p, { status: 'True', reason: Reason.ReconcileSuccess });
    return { kind: 'done', requeueAfterMs: this.poll() };
  }

  /**
   * Where the observed resource stands towards this object (see ownership.ts); throws
   * OwnershipConflictError when it is another's. Asks the apiserver whether the object another
   * ownership mark names still exists.
   */
  private async checkOwnership(
    obj: T,
    obs: ExistingObservation<D, F>,
    ours: OwnershipTags,
  ): Promise<OwnershipStanding> {
    const owner = obs.ownership;
    const gone =
      owner !== undefined && owner.uid !== ours.uid
        ? await ownerGone(this.o.client, this.o.type, this.o.clusterId, owner)
        : false;
    const standing = ownershipStanding({
      owner,
      ours,
      externalName: obj.spec.externalName,
      observeOnly: obj.spec.managementPolicy === 'ObserveOnly',
      identity: obs.identity,
      ownerGone: gone,
    });
    if (standing.kind === 'conflict') throw new OwnershipConflictError(standing.message);
    return standing;
  }

  private handleError(
    p: Pass<T, D, F>,
    err: unknown,
  ): { outcome: ReconcileOutcome; result: ReconcileResult } {
    const d = decideRetry(err);
    switch (d.kind) {
      case 'terminal':
        p.log.warn({ err: d.message }, 'terminal error');
        this.setSynced(p, { status: 'False', reason: Reason.Terminal, message: d.message });
        this.event(p, {
          type: 'Warning',
          reason: EventReason.TerminalError,
          action: 'Reconcile',
          note: d.message,
        });
        this.readyAfterFailure(p, Reason.Terminal, d.message);
        return { outcome: { kind: 'done', requeueAfterMs: this.resync() }, result: 'error' };
      case 'conflict':
        p.log.warn({ err: d.message }, 'ownership conflict');
        this.setSynced(p, { status: 'False', reason: Reason.Conflict, message: d.message });
        this.setReady(p, { status: 'False', reason: Reason.Conflict, message: d.message });
        this.event(p, {
          type: 'Warning',
          reason: EventReason.Conflict,
          action: 'Reconcile',
          note: d.message,
        });
        return { outcome: { kind: 'done', requeueAfterMs: this.resync() }, result: 'error' };
      case 'forbidden':
        p.log.warn({ err: d.message }, 'forbidden by policy');
        this.setSynced(p, { status: 'False', reason: Reason.Forbidden, message: d.message });
        this.readyAfterFailure(p, Reason.Forbidden, d.message);
        this.event(p, {
          type: 'Warning',
          reason: EventReason.Forbidden,
          action: 'Reconcile',
          note: d.message,
        });
        return { outcome: { kind: 'done', requeueAfterMs: this.resync() }, result: 'error' };
      case 'requeueAfter': {
        const reason = err instanceof RequeueAfter && err.reason !== undefined ? err.reason : Reason.Waiting;
        this.setReady(p, { status: 'False', reason, message: d.message });
        this.setSynced(p, { status: 'False', reason, message: d.message });
        return { outcome: { kind: 'done', requeueAfterMs: d.delayMs }, result: 'requeue_after' };
      }
      case 'staleObject':
        p.log.debug('object changed while reconciling; requeueing');
        p.skipStatus = true;
        return { outcome: { kind: 'backoff' }, result: 'requeue' };
      case 'retry':
        p.log.warn({ err: d.message, reason: d.reason }, 'reconcile failed; will retry');
        this.setSynced(p, { status: 'False', reason: d.reason, message: d.message });
        this.readyAfterFailure(p, d.reason, d.message);
        return { outcome: { kind: 'backoff' }, result: 'error' };
    }
  }

  /**
   * After a live pass that succeeded: a request annotation the kind does not accept is reported as
   * Synced=False Terminal naming it and the accepted values (the pass's work stands, Ready too), with
   * a Warning Event when Synced first says so.
   */
  private checkRequest(p: Pass<T, D, F>): void {
    const refusal = requestRefusal(
      p.obj.metadata.annotations?.[requestAnnotation],
      this.o.requestActions ?? [],
      this.o.type.kind,
    );
    if (refusal === undefined) return;
    // Judged against Synced as the pass found it (not the True this pass set), so a refusal that
    // stands keeps its lastTransitionTime and a resync writes nothing.
    const before = getCondition(p.statusBefore.conditions, ConditionType.Synced);
    p.status.conditions = (p.status.conditions ?? []).flatMap((c) =>
      c.type !== ConditionType.Synced ? [c] : before !== undefined ? [before] : [],
    );
    this.setSynced(p, { status: 'False', reason: Reason.Terminal, message: refusal });
    if (conditionChanged(before, getCondition(p.status.conditions, ConditionType.Synced)))
      this.event(p, {
        type: 'Warning',
        reason: EventReason.TerminalError,
        action: 'Reconcile',
        note: refusal,
      });
  }

  /** The adapter bound to this object (connected once per reconcile). */
  private async connect(p: Pass<T, D, F>): Promise<ExternalClient<T, D, F>> {
    p.adapter ??= await this.step('connect', () => this.o.connector.connect(p.obj, p.ctx));
    return p.adapter;
  }

  /**
   * Makes the Kubernetes writes an adapter asked for: companions, then Pods' readiness-gate
   * conditions, then the CR's annotations, then Events.
   */
  private async write(p: Pass<T, D, F>, writes: Writes | undefined): Promise<void> {
    if (writes === undefined) return;
    for (const w of writes.companions ?? []) {
      const what =
        w.op === 'apply'
          ? `write ${w.type.kind} ${w.object.metadata.name}`
          : `release ${w.type.kind} ${w.name}`;
      await this.step(what, () => writeCompanion(this.o.client, this.o.type, p.obj, w));
    }
    for (const w of writes.podConditions ?? []) {
      await this.step(`set condition ${w.type} of Pod ${w.pod}`, () =>
        writePodCondition(this.o.client, p.obj.metadata.namespace ?? '', w, new Date(this.o.clock.now())),
      );
    }
    for (const [key, value] of Object.entries(writes.annotations ?? {})) {
      await this.setAnnotation(p, key, value ?? undefined);
    }
    for (const e of writes.events ?? []) this.event(p, e);
  }

  private async step<R>(what: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      throw wrap(what, err);
    }
  }

  private setReady(p: Pass<T, D, F>, c: Omit<ConditionUpdate, 'type'>): void {
    p.status.conditions = setCondition(
      p.status.conditions,
      { ...c, type: ConditionType.Ready },
      p.obj.metadata.generation,
      new Date(this.o.clock.now()),
    );
  }

  /**
   * A Ready=False that a person must act on: one Warning Event when Ready
   * first takes that reason and message (it is already written this pass),
   * none while it stays the same.
   */
  private warnIfActionRequired(p: Pass<T, D, F>, ready: ReadyState): void {
    if (ready.ready || ready.actionRequired !== true) return;
    const before = getCondition(p.statusBefore.conditions, ConditionType.Ready);
    if (!conditionChanged(before, getCondition(p.status.conditions, ConditionType.Ready))) return;
    this.event(p, {
      type: 'Warning',
      reason: ready.reason,
      action: 'Reconcile',
      note: ready.message ?? ready.reason,
    });
  }

  /** Ready after a failed pass: never a stale Ready=True or progress reason (see readyAfterFailure). */
  private readyAfterFailure(p: Pass<T, D, F>, reason: string, message: string): void {
    const previous = getCondition(p.status.conditions, ConditionType.Ready);
    const next = readyAfterFailure(previous, p.obj.metadata.generation, p.observed, { reason, message });
    if (next !== undefined) this.setReady(p, next);
  }

  private setSynced(p: Pass<T, D, F>, c: Omit<ConditionUpdate, 'type'>): void {
    p.status.conditions = setCondition(
      p.status.conditions,
      { ...c, type: ConditionType.Synced },
      p.obj.metadata.generation,
      new Date(this.o.clock.now()),
    );
  }

  /** Writes status if it differs from what the object carries; at most once per change. */
  private async writeStatus(p: Pass<T, D, F>): Promise<void> {
    if (p.skipStatus === true) return;
    if (p.obj.metadata.deletionTimestamp !== undefined && !hasFinalizer(p.obj)) return; // object is about to vanish
    if (p.obj.metadata.generation !== undefined) p.status.observedGeneration = p.obj.metadata.generation;
    const before = p.obj;
    p.obj = await this.writes.status(p.obj, p.status, p.written, p.alsoWritten);
    p.written = p.obj.status ?? {};
    if (p.obj !== before) this.recordWrite(p.obj);
  }

  /**
   * The status this engine last wrote for `obj`, when `obj` (as the cache gives it) is not the
   * version that write made: the cache may not have caught up with it. Forgets it once it has.
   */
  private ownWriteOf(obj: T): ManagedStatus | undefined {
    const w = this.ownWrites.get(uidOf(obj));
    if (w === undefined) return undefined;
    if (w.resourceVersion !== undefined && w.resourceVersion === obj.metadata.resourceVersion) {
      this.ownWrites.delete(uidOf(obj));
      return undefined;
    }
    return w.status;
  }

  /** Remembers the status just written to `obj`. Entries never read back go after ten minutes. */
  private recordWrite(obj: T): void {
    const now = this.o.clock.now();
    if (this.ownWrites.size >= 256 && now - this.ownWritesSweptAt >= 60_000) {
      this.ownWritesSweptAt = now;
      for (const [uid, w] of this.ownWrites) if (now - w.at >= 600_000) this.ownWrites.delete(uid);
    }
    this.ownWrites.set(uidOf(obj), {
      resourceVersion: obj.metadata.resourceVersion,
      status: structuredClone(obj.status ?? {}),
      at: now,
    });
  }

  /**
   * Writes the statuses still held back for new objects (see firstStatusHold), for a graceful stop:
   * what a held pass learnt (a Route 53 change ID, the resource's location) would otherwise be lost
   * with the process. `current` is the objects as the cache holds them now; an object with a
   * status written since, or gone, is skipped. Writes one at a time, each with the client's
   * deadline, and stops starting new ones once `until` (ms, this engine's clock) has passed. A
   * failed write is logged and skipped; never throws. Returns how many were written.
   */
  async writeHeld(current: readonly T[], until: number): Promise<number> {
    let written = 0;
    for (const obj of current) {
      if (this.held.size === 0 || this.o.clock.now() >= until) break;
      const status = this.heldStatusOf(obj);
      if (status === undefined) continue;
      this.held.delete(uidOf(obj));
      if (obj.metadata.deletionTimestamp !== undefined && !hasFinalizer(obj)) continue;
      const next: ManagedStatus = {
        ...structuredClone(status),
        ...(obj.metadata.generation !== undefined ? { observedGeneration: obj.metadata.generation } : {}),
      };
      try {
        await this.writes.status(obj, next, obj.status ?? {});
        written++;
      } catch (err) {
        this.o.logger.warn(
          { namespace: obj.metadata.namespace, name: obj.metadata.name, err: errText(err) },
          'writing a held status at stop failed',
        );
      }
    }
    return written;
  }

  /**
   * True when `obj`'s status is the one this engine last wrote to it; false when someone else wrote
   * it since (a forged Ready=True, say), which is worth a pass to put right.
   */
  wroteStatus(obj: T): boolean {
    return this.writes.wroteStatus(obj);
  }

  /** Forgets what this engine holds about `obj` (it was deleted). */
  forget(obj: T): void {
    this.writes.forget(obj);
    this.markers.forget(obj);
    this.held.delete(uidOf(obj));
  }

  /** The status held back for `obj` at its last pass, while `obj` has none written and the hold lasts. */
  private heldStatusOf(obj: T): ManagedStatus | undefined {
    const h = this.held.get(uidOf(obj));
    if (h === undefined) return undefined;
    if ((obj.status?.conditions ?? []).length > 0) {
      this.held.delete(uidOf(obj));
      return undefined;
    }
    return h.status;
  }

  /**
   * Keeps `status` for `obj`'s next pass. Entries of objects never seen again go after ten minutes,
   * swept at most once a minute (a burst of new objects does not rescan the map at every hold).
   */
  private hold(obj: T, status: ManagedStatus): void {
    const now = this.o.clock.now();
    if (this.held.size >= 256 && now - this.heldSweptAt >= 60_000) {
      this.heldSweptAt = now;
      for (const [uid, h] of this.held) if (now - h.at >= 600_000) this.held.delete(uid);
    }
    this.held.set(uidOf(obj), { status: structuredClone(status), at: now });
  }

  private async setFinalizer(p: Pass<T, D, F>, present: boolean): Promise<void> {
    p.obj = await this.writes.finalizer(p.obj, present);
    if (!present) {
      this.markers.forget(p.obj);
      this.held.delete(uidOf(p.obj));
      this.ownWrites.delete(uidOf(p.obj));
      this.writes.forget(p.obj);
    }
  }

  /**
   * How long the pass's status may wait (ms), or undefined to write it now. A new object (no
   * status written yet) whose create is younger than the hold, on a pass that ended with AWS still
   * at work — nothing failed, nothing for a person to do — gets no status yet: the next pass,
   * within the hold, writes the outcome, so the happy path costs one status write. Past the hold
   * the progress is written (a DNS change propagating, a database creating).
   */
  private firstStatusHold(p: Pass<T, D, F>, result: ReconcileResult): number | undefined {
    if (p.inProgress !== true || result === 'error' || p.skipStatus === true) return undefined;
    if ((p.statusBefore.conditions ?? []).length > 0) return undefined;
    if (getCondition(p.status.conditions, ConditionType.Synced)?.status !== 'True') return undefined;
    const at = pendingCreate(p.obj);
    if (at === undefined) return undefined;
    const hold = this.o.firstStatusHoldMs ?? engineDefaults.firstStatusHoldMs;
    // A marker ahead of this clock (another replica's) holds back no more than the hold itself.
    const left = Math.min(hold, at + hold - this.o.clock.now());
    return left > 0 ? left : undefined;
  }

  /** Adds the finalizer (if missing) and the create-pending marker in one compare-and-swap patch. */
  private async markCreatePending(p: Pass<T, D, F>): Promise<void> {
    p.obj = await this.writes.markCreatePending(p.obj, this.o.clock.now());
  }

  private async setAnnotation(p: Pass<T, D, F>, key: string, value: string | undefined): Promise<void> {
    p.obj = await this.writes.annotation(p.obj, key, value);
  }

  private event(p: Pass<T, D, F>, spec: EventSpec): void {
    this.o.events.record(p.obj, spec);
  }

  private resync(): number {
    return jittered(this.o.resyncPeriodMs ?? defaultControllerSettings.resyncPeriodMs, 0.1, this.o.random);
  }

  private poll(): number {
    return this.o.pollMs ?? engineDefaults.pollMs;
  }
}

/** Ends the pass as the failure an observation reported beside a resource that is fine. */
function failIfObservedFailing(obs: ExistingObservation<unknown>): void {
  if (obs.failure !== undefined) throw new RetryableError(obs.failure.reason, obs.failure.message);
}

/** Status fields the engine owns; kind fields are replaced by each observation. */
function keepCommon(s: ManagedStatus): ManagedStatus {
  return {
    ...(s.conditions !== undefined ? { conditions: s.conditions } : {}),
    ...(s.observedGeneration !== undefined ? { observedGeneration: s.observedGeneration } : {}),
    ...(s.location !== undefined ? { location: s.location } : {}),
  };
}

/** The status field recording where the adapter's resources live, if it says. Pure. */
function locationOf(adapter: { readonly location?: ResourceLocation }): Pick<ManagedStatus, 'location'> {
  const l = adapter.location;
  return l !== undefined ? { location: { account: l.account, region: l.region } } : {};
}

/**
 * Refuses (Forbidden) to act on an object whose resource was recorded in another account or region
 * than the adapter reaches now: acting there would create a second resource, or let the first go
 * unseen (a deletion would find nothing and drop the finalizer).
 */
function checkLocation(
  before: ManagedStatus,
  adapter: { readonly location?: ResourceLocation },
  deleting: boolean,
): void {
  const was = before.location;
  const now = adapter.location;
  if (was === undefined || now === undefined || sameLocation(was, now)) return;
  const moved = `this object's AWS resource is in account ${was.account}, region ${was.region}, but its namespace is now served in account ${now.account}, region ${now.region} (its TeamPolicy's spec.aws changed)`;
  throw new ForbiddenError(
    deleting
      ? `cannot delete the AWS resource: ${moved}. The finalizer ${finalizerName} stays: restore the policy's spec.aws to delete it, or remove the finalizer to leave it in AWS`
      : `${moved}; Skylift will not create a second one there nor act on the first: restore the policy's spec.aws, or delete this object with spec.deletionPolicy: Orphan and create it again`,
  );
}

/** Whether a terminal error of pass `p` may be the refusal of its create: a live pass, connected, that did not see the resource. Pure. */
function refusesCreate<T extends ManagedObject, D, F extends string>(p: Pass<T, D, F>): boolean {
  if (p.obj.metadata.deletionTimestamp !== undefined || p.adapter === undefined) return false;
  return p.observed.kind === 'absent' || p.observed.kind === 'none';
}

function notFoundMessage(obj: ManagedObject): string {
  const ext = obj.spec.externalName;
  return ext !== undefined && ext !== ''
    ? `${ext} not found in AWS`
    : 'the AWS resource does not exist (ObserveOnly never creates it)';
}

function msg(message: string | undefined): { message?: string } {
  return message !== undefined ? { message } : {};
}

function uidOf(obj: ManagedObject): string {
  return obj.metadata.uid ?? `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
