// The contract between a kind and everything that serves it: the operator,
// the CLI, `skylift dev`, `skylift trace`, and the tools that generate CRDs,
// docs and Argo CD health checks. A kind is one folder under src/kinds/ that
// exports one KindModule; src/kinds/registry.ts lists them.
import type { Logger } from 'pino';
import type { CrdManifest } from '../apis/crd.ts';
import type { FieldContract } from '../apis/fieldContract.ts';
import type { ManagedObject } from '../apis/managed.ts';
import type { ResourceType } from '../apis/meta.ts';
import type { GuardrailSection } from '../apis/teampolicy.ts';
import type { AwsClients } from '../providers/aws/clients.ts';
import type { AwsAccountSource } from '../tenancy/accounts.ts';
import type { KindAdmission } from '../tenancy/admission.ts';
import type { TenantSource } from '../tenancy/directory.ts';
import type { Clock } from '../runtime/clock.ts';
import type { RunnableController } from '../runtime/controller.ts';
import type { ControllerSettings } from '../runtime/settings.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { KubeClient } from '../runtime/kube/client.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { TraceContext } from '../trace/context.ts';
import type { TraceNode } from '../trace/tree.ts';

/** The process-wide pieces the operator hands every kind's controller. Shared; never mutated by a kind. */
export interface KindPlumbing {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly events: EventRecorder;
  /** The shared AWS SDK clients (one per service) for the configured region: the operator's own identity. */
  readonly aws: AwsClients;
  /**
   * Which TeamPolicy serves a namespace. Absent (tests of one kind): every object is served with
   * `aws` and no guardrails, as when no TeamPolicy exists.
   */
  readonly tenants?: TenantSource;
  /** The AWS clients of each policy's identity and region (absent: `aws` for every object). */
  readonly accounts?: AwsAccountSource;
  /** How every controller runs (cluster id, scope, workers, resync period). */
  readonly settings: ControllerSettings;
}

/** A flag of `skylift run` (and `skylift trace`) that belongs to one kind. */
export interface KindFlag {
  /** The flag without dashes, e.g. `txt-owner-prefix`. */
  readonly name: string;
  /** The environment variable that sets it when the flag is not given. */
  readonly env: string;
  /** The value's placeholder in the usage text, e.g. DURATION. */
  readonly placeholder: string;
  /** One line for the usage text: what it does and its default. */
  readonly usage: string;
}

/** A `skylift` sub-command that belongs to one kind (e.g. ManagedDB's `db snapshot`). */
export interface KindCommand {
  /** The word after `skylift`. */
  readonly name: string;
  /** Its lines in `skylift help`: the synopsis, then what it does (indented). */
  readonly usage: string;
  /** Runs it; resolves to the exit code. Throws SettingsError for bad arguments (exit 2). */
  run(argv: readonly string[]): Promise<number>;
}

/** A kind with its settings parsed: what the operator and `skylift trace` run. */
export interface ConfiguredKind {
  readonly module: KindModule;
  /** Builds the kind's controller; nothing runs until the manager starts it. */
  controller(plumbing: KindPlumbing): RunnableController;
  /**
   * The kind's controllers of Gateway API objects (MyIngress: Gateways as ALBs, HTTPRoutes as
   * their rules), built now and started by the Gateway API front end only when the cluster serves
   * the Gateway API (their informers watch its objects). Absent: the kind serves none.
   */
  gatewayApi?(plumbing: KindPlumbing): RunnableController[];
  /**
   * The AWS side of one object for `skylift trace`, from its status and live
   * read-only calls. Never throws for AWS or Kubernetes errors: they become
   * Error nodes.
   */
  trace(obj: ManagedObject, ctx: TraceContext): Promise<TraceNode[]>;
}

/** A kind's Argo CD health check: its Lua source and the lists rendered into it. */
export interface HealthCheckSource {
  /** The kind's own Lua, appended to the shared part (a file URL in the kind's folder). */
  readonly lua: URL;
  /** Lists the script needs from the TypeScript the operator uses (e.g. RDS failed states). */
  readonly constants: Readonly<Record<string, readonly string[]>>;
}

/**
 * Everything about one kind, as one value. Plain data and pure functions:
 * importing a kind module starts nothing.
 */
export interface KindModule {
  readonly type: ResourceType;
  /** Lower-case names users may type (kind, plural, short name, `plural.group`). */
  readonly names: readonly string[];
  /** One line for `skylift trace --help`: what its trace shows behind an object of this kind. */
  readonly traceShows: string;
  /** The CRD, fully rendered (schema with descriptions, CEL rules, printer columns). Pure. */
  crd(): CrdManifest;
  /** What becomes of each spec field after create; covers every field of the CRD's spec. */
  readonly fieldContract: FieldContract;
  /** This kind's section of a TeamPolicy's spec.guardrails (its schema; the kind's connector checks it). */
  readonly guardrails?: GuardrailSection;
  /**
   * The guardrails the apiserver enforces at admission (the chart's ValidatingAdmissionPolicy of
   * this kind): the part of the connector's check the object alone decides.
   */
  readonly admission?: KindAdmission;
  /** This kind's flags of `skylift run`. */
  readonly flags: readonly KindFlag[];
  /**
   * Flags another kind declares (and lists in the usage text) whose values this kind reads too:
   * `configure` gets them beside its own (MyIngressGroup reads MyIngress's, since a group's load
   * balancer is run by MyIngress's machinery). Never claimed twice: parsed and listed once, under
   * their owner; a registry without the owner still accepts them. Absent: none.
   */
  readonly sharedFlags?: readonly KindFlag[];
  /**
   * The namespaced kinds its Gateway API controllers (`ConfiguredKind.gatewayApi`) create, patch
   * and delete (MyIngressGroup's Gateway controller: the DNSRecords of a Gateway's route
   * hostnames). The chart grants those rights in its Gateway API ClusterRole (files/kinds.yaml's
   * `gatewayResources`). Absent: none.
   */
  readonly gatewayApiMakes?: readonly ResourceType[];
  /**
   * Parses the values of this kind's flags and shared flags (by flag name; absent ones take the
   * kind's defaults). Throws SettingsError naming the flag. Pure.
   */
  configure(values: ReadonlyMap<string, string>): ConfiguredKind;
  /** Its Argo CD health check (every kind Skylift ships has one; a kind without one gets none). */
  readonly healthCheck?: HealthCheckSource;
  /** Flags `skylift dev` gives the operator for this kind on the local emulator (e.g. faster polling). */
  readonly devFlags: readonly string[];
  /** This kind's own `skylift` sub-commands. */
  readonly commands: readonly KindCommand[];
  /** The lines `skylift dev` prints for a Ready object of this kind (namespace: the samples'). Pure. */
  summarize(obj: ManagedObject, namespace: string): string[];
}
