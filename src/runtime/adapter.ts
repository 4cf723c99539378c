// The contract between the engine and a kind's AWS side, as
// crossplane-runtime's Connector and ExternalClient: the engine owns the
// lifecycle and every write; an adapter reads AWS, changes AWS, and says what
// it wants written to Kubernetes.
import type { Logger } from 'pino';
import type { KindStatusOf, ManagedObject, OwnershipTags } from '../apis/managed.ts';
import type { ResourceType } from '../apis/meta.ts';
import type { Clock } from './clock.ts';
import type { EventSpec } from './events.ts';

/** Whether the AWS resource is usable, as an adapter judges it. */
export interface ReadyState {
  readonly ready: boolean;
  /** Condition reason, a named constant (Reason or the kind's own), e.g. Available, Creating. */
  readonly reason: string;
  readonly message?: string;
  /**
   * Not ready for a reason only a person can remove, outside AWS (e.g. the
   * Kubernetes Service a load balancer forwards to does not exist): the
   * reconcile itself worked (Synced=True). The engine records one Warning
   * Event with this reason and message when Ready first takes them — not at
   * every resync — and looks again at the resync period unless the
   * observation asks sooner (a watch on what is missing enqueues the object
   * when it appears). Only meaningful with `ready: false`.
   */
  readonly actionRequired?: boolean;
}

/** One field of the AWS resource that differs from the spec. */
export interface DeltaEntry<F extends string = string> {
  /** Which field (the kind's own names), for update to steer by. */
  readonly field: F;
  /** What differs, for Events and logs, e.g. "ttl 300 → 60". */
  readonly change: string;
  /**
   * A requested or scheduled operation (a snapshot asked for, a backup due),
   * not a difference from the spec: never counted or reported as drift.
   */
  readonly operation?: true;
  /**
   * AWS is as Skylift last left it; what the field follows in Kubernetes moved (a Service's ready
   * endpoints): a difference from the spec to apply, never counted or reported as drift.
   */
  readonly follows?: true;
}

/**
 * True when the delta holds a real difference from the spec, not only
 * operations: what drift means once the object has been Ready. Pure.
 */
export function differsFromSpec(delta: Delta): boolean {
  return delta.some((d) => d.operation !== true);
}

/**
 * True when the delta holds drift: AWS moved away from what Skylift left, not an operation and not
 * a change of what a field follows in Kubernetes. Pure.
 */
export function driftIn(delta: Delta): boolean {
  return delta.some((d) => d.operation !== true && d.follows !== true);
}

/** Every field that differs; empty when AWS matches the spec. */
export type Delta<F extends string = string> = readonly DeltaEntry<F>[];

/** True when `field` is in the delta. Pure. */
export function hasDelta<F extends string>(delta: Delta<F>, field: F): boolean {
  return delta.some((d) => d.field === field);
}

/** The delta as one line ("a; b"), or undefined when empty. Pure. */
export function describeDelta(delta: Delta): string | undefined {
  return delta.length > 0 ? delta.map((d) => d.change).join('; ') : undefined;
}

/** A Kubernetes object that lives beside a CR in its namespace (e.g. a connection Secret). */
export interface CompanionObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
}

/**
 * What an `apply` companion write requires of the object as it is, so a claim
 * on a name is atomic: `absent` creates it and fails (OwnershipConflictError
 * with `taken` as the message) when the name is already in use; `uid` applies
 * only to the very object the adapter read (refused, 422, if it was replaced since).
 */
export type CompanionPrecondition =
  { readonly absent: true; readonly taken: string } | { readonly uid: string };

/**
 * A write to a companion object, carried out by the engine:
 * `apply` creates or updates it by server-side apply (field manager
 * `skylift`), labelled as Skylift's and owned by the CR, so Kubernetes
 * removes it with the CR — under `expect`, only if the object is as the
 * adapter saw it; `disown` drops the CR's owner reference so it
 * outlives the CR (deletionPolicy Orphan). Both are idempotent.
 */
export type CompanionWrite =
  | {
      readonly op: 'apply';
      readonly type: ResourceType;
      readonly object: CompanionObject;
      readonly expect?: CompanionPrecondition;
    }
  | { readonly op: 'disown'; readonly type: ResourceType; readonly name: string };

/**
 * A readiness-gate condition of a Pod in the CR's namespace (`status.conditions[type]`), which the
 * Pod's `spec.readinessGates` waits for. Written by strategic merge patch on the Pod's status, so
 * the kubelet's conditions are untouched; only to the Pod with this uid (a Pod replaced under the
 * same name is not written); a Pod that is gone is skipped. Idempotent.
 */
export interface PodConditionWrite {
  readonly pod: string;
  readonly uid: string;
  /** The condition type, the one a readiness gate names (e.g. skylift.dev/target-health). */
  readonly type: string;
  readonly status: 'True' | 'False';
  /** CamelCase, as every condition reason. */
  readonly reason: string;
  readonly message: string;
}

/** Kubernetes writes an adapter asks for; the engine makes them, in this order, with its own clock. */
export interface Writes {
  readonly companions?: readonly CompanionWrite[];
  /** Conditions of Pods that readiness gates wait for (see {@link PodConditionWrite}). */
  readonly podConditions?: readonly PodConditionWrite[];
  /** Annotations of the CR itself to set (a string) or remove (null). */
  readonly annotations?: Readonly<Record<string, string | null>>;
  readonly events?: readonly EventSpec[];
}

/**
 * A kind's own status fields as an untyped record: the default for observations and creates of
 * code that knows no kind (the engine's tests); an ExternalClient's are its kind's (KindStatusOf).
 */
export type KindStatus = Readonly<Record<string, unknown>>;

/** What an adapter found in AWS for a CR. */
export type Observation<D = undefined, F extends string = string, S extends object = KindStatus> =
  { readonly exists: false } | ExistingObservation<D, F, S>;

/** An AWS resource that exists. */
export interface ExistingObservation<
  D = undefined,
  F extends string = string,
  S extends object = KindStatus,
> {
  readonly exists: true;
  /** Skylift ownership tags on the resource; undefined when it carries none. */
  readonly ownership: OwnershipTags | undefined;
  /**
   * The resource named as `spec.externalName` would name it (an ARN, a DB identifier, a record's
   * `<name>/<type>[/<setIdentifier>]`), for messages such as an ownership conflict.
   */
  readonly identity?: string;
  /** What differs from the spec (including ownership tags to add on adoption); empty: up to date. */
  readonly delta: Delta<F>;
  readonly ready: ReadyState;
  /**
   * Kind-specific status fields (arn, dnsName, …), replacing the previous
   * ones — once the resource passed the engine's ownership check (owned by
   * this object, or untagged and adopted or observed); never from a resource
   * another object owns.
   */
  readonly status: S;
  /** Observe again sooner than the resync period (e.g. still provisioning). */
  readonly requeueAfterMs?: number;
  /** The kind's own record of what it saw, handed back to update and delete untouched. */
  readonly details: D;
  /**
   * Kubernetes writes that follow from what was observed (e.g. the connection
   * Secret's endpoint); the engine makes them only after the ownership check,
   * as it takes `status`, so an adapter may compute them before knowing.
   */
  readonly writes?: Writes;
  /**
   * A step that observing found failing beside a resource that is fine (e.g. a
   * scheduled snapshot AWS refused): the engine still makes the writes and
   * any update, then ends the pass as this retryable failure (Synced=False
   * with the reason, backoff), while Ready reflects the resource.
   */
  readonly failure?: { readonly reason: string; readonly message: string };
}

/**
 * An AWS resource that exists and is ours, with nothing to change, that is
 * not ready yet (a change in flight, a deletion under way). Pure.
 */
export function busyObservation<D, S extends object>(o: {
  readonly ownership: OwnershipTags;
  readonly reason: string;
  readonly message: string;
  readonly status: S;
  readonly details: D;
  readonly requeueAfterMs?: number;
}): ExistingObservation<D, never, S> {
  return {
    exists: true,
    ownership: o.ownership,
    delta: [],
    ready: { ready: false, reason: o.reason, message: o.message },
    status: o.status,
    details: o.details,
    ...(o.requeueAfterMs !== undefined ? { requeueAfterMs: o.requeueAfterMs } : {}),
  };
}

/** Where the resources an ExternalClient reaches live: the cloud account and region. */
export interface ResourceLocation {
  readonly account: string;
  readonly region: string;
}

/** True when two locations are the same. Pure. */
export function sameLocation(a: ResourceLocation, b: ResourceLocation): boolean {
  return a.account === b.account && a.region === b.region;
}

/** What an adapter's calls may use. */
export interface ReconcileContext {
  readonly logger: Logger;
  /** The tags this CR stamps on what it creates. */
  readonly ownership: OwnershipTags;
  /** The engine's clock: adapters read the time from here, never from Date.now. */
  readonly clock: Clock;
}

/** What create reports. */
export interface Created<S extends object = KindStatus> {
  /** Status fields that identify what was created. */
  readonly status: S;
  readonly description?: string;
  readonly writes?: Writes;
}

/** What update reports. */
export interface Updated {
  readonly description?: string;
  /** The change is only submitted: Ready turns False, reason Updating, until a later observe. */
  readonly pending?: boolean;
  readonly writes?: Writes;
}

/** Why the engine lets go of an AWS resource without touching it. */
export type ReleaseCause = 'deleted' | 'observeOnly';

/** What release reports. */
export interface Released {
  /** Kubernetes writes to make before letting go (e.g. disown the connection Secret). */
  readonly writes?: Writes;
  /**
   * Not yet: something this object set going in AWS is still under way and cannot be called
   * back (a change sent and not answered), so letting go now would let AWS change after the
   * object is gone. The engine keeps the finalizer (Ready=False Deleting with this message) and
   * asks again after `requeueAfterMs`.
   */
  readonly waiting?: { readonly message: string; readonly requeueAfterMs: number };
}

/**
 * One kind's AWS side for one object. Contract for every method: idempotent
 * (may be repeated or interrupted at any point); never blocks on a long AWS
 * wait (report progress and let the engine poll); throws typed errors
 * (TerminalError, RequeueAfter, OwnershipConflictError, RetryableError) or
 * anything else for "retry with backoff"; never mutates the CR it is given
 * and never writes to Kubernetes — it returns Writes instead.
 */
export interface ExternalClient<T extends ManagedObject, D = undefined, F extends string = string> {
  /**
   * Optional: where this client's resources live. The engine records it in the object's status
   * (`status.location`) when it creates or finds the resource, and refuses to act (Forbidden) on an
   * object recorded elsewhere — a policy that moved a namespace to another account or region must
   * not make Skylift create a second resource there, nor forget the first.
   */
  readonly location?: ResourceLocation;
  /**
   * Optional: checks that `mr` asks only for what its namespace may use (a TeamPolicy's
   * guardrails), before anything else in a live reconcile — never on deletion, which may always
   * clean up. May read (cached lookups such as a zone's name); never changes AWS or Kubernetes.
   * Throws ForbiddenError naming the policy, the field and a fix.
   */
  authorize?(mr: T, ctx: ReconcileContext): Promise<void>;
  /**
   * Finds the AWS resource for `mr` — by the identity recorded in status, by
   * `spec.externalName`, or by deterministic name / ownership tags — and
   * compares it with the spec. Reads only: never modifies AWS or Kubernetes.
   */
  observe(mr: T, ctx: ReconcileContext): Promise<Observation<D, F, KindStatusOf<T>>>;
  /**
   * Optional: what must be written before the create (e.g. a generated
   * password into the connection Secret, so a crash cannot lose it). Reads
   * only; the engine writes what it returns, then calls create.
   */
  prepareCreate?(mr: T, ctx: ReconcileContext): Promise<Writes>;
  /**
   * Creates the resource tagged with `ctx.ownership`. Must be safe when a
   * previous attempt's outcome is unknown (deterministic names, idempotency
   * tokens). Throws RequeueAfter only before anything was created (e.g. a
   * reference is not ready yet).
   */
  create(mr: T, ctx: ReconcileContext): Promise<Created<KindStatusOf<T>>>;
  /**
   * Brings AWS in line with the spec with a minimal change, steered by
   * `observed.delta` (and adds ownership tags on adoption).
   */
  update(
    mr: T,
    observed: ExistingObservation<D, F, KindStatusOf<T>>,
    ctx: ReconcileContext,
  ): Promise<Updated>;
  /**
   * Optional: lets go of the AWS resource without touching it — the object
   * is deleted and the resource kept (`cause` 'deleted': deletionPolicy
   * Orphan, ObserveOnly), or the object switched to ObserveOnly (`cause`
   * 'observeOnly': it stays and keeps reporting). Returns what to write to
   * Kubernetes-side companions (e.g. disowning the connection Secret of a
   * deleted object), and whether anything the object set going in AWS is
   * still under way. Work not started yet is dropped here, never carried out
   * afterwards; work in flight is reported as `waiting`. Never starts
   * anything in AWS. Idempotent.
   */
  release?(mr: T, ctx: ReconcileContext, cause: ReleaseCause): Promise<Released>;
  /** Deletes the resource and its children, or advances deletion; `gone` once AWS confirms. */
  delete(
    mr: T,
    observed: ExistingObservation<D, F, KindStatusOf<T>>,
    ctx: ReconcileContext,
  ): Promise<{ gone: boolean }>;
}

/**
 * Hands the engine an ExternalClient bound to one object, as
 * crossplane-runtime's Connector: the place where a kind chooses the AWS
 * clients (credentials, account, region) an object is reconciled with. May
 * block on credentials; idempotent; throws typed errors (e.g. TerminalError
 * for an identity the object may not use).
 */
export interface Connector<T extends ManagedObject, D = undefined, F extends string = string> {
  connect(mr: T, ctx: ReconcileContext): Promise<ExternalClient<T, D, F>>;
}

/** A connector that hands every object the same client (the process's shared AWS clients). */
export function sharedClient<T extends ManagedObject, D, F extends string>(
  client: ExternalClient<T, D, F>,
): Connector<T, D, F> {
  return { connect: () => Promise.resolve(client) };
}
