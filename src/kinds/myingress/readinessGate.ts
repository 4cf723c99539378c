// The target-health readiness gate (docs/myingress.md#rollouts): a Pod in a namespace
// labelled skylift.dev/target-health-gate=enabled gets, at admission, a readiness gate on the
// condition skylift.dev/target-health (a MutatingAdmissionPolicy, no webhook). Skylift registers
// such a Pod as a target as soon as its containers are ready, and sets the condition True only once
// the target is healthy in every target group that routes to it — so a rollout moves on only when
// the load balancer sends the new Pod requests. This file is the gate's vocabulary and its pure
// decisions; readinessGates.ts reads target health and asks for the writes.
import type { PodConditionWrite } from '../../runtime/adapter.ts';

/** The gate: the condition Skylift sets, and the label that asks for it. */
export const targetHealthGate = {
  /** The Pod condition the readiness gate waits for. */
  conditionType: 'skylift.dev/target-health',
  /**
   * On a namespace: its new Pods get the gate. On a Pod (its template): it gets the gate; every
   * gated Pod carries it (the policy sets it), and the operator's Pod cache selects on it.
   */
  label: 'skylift.dev/target-health-gate',
  /** The label's value that turns the gate on. */
  enabled: 'enabled',
} as const;

/** A Pod as the gate reads it (the operator's cache holds only Pods carrying the gate's label). */
export interface PodLike {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly deletionTimestamp?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec?: { readonly readinessGates?: readonly { readonly conditionType: string }[] };
  readonly status?: {
    readonly podIP?: string;
    readonly conditions?: readonly {
      readonly type: string;
      readonly status: string;
      readonly reason?: string;
      readonly message?: string;
    }[];
  };
}

/** True when the Pod waits for the target-health condition in its readiness gates. Pure. */
export function hasTargetHealthGate(pod: PodLike): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === targetHealthGate.conditionType);
}

/** The Pod's condition of `type`, if it has one. Pure. */
function conditionOf(pod: PodLike, type: string): { status: string; reason?: string } | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/**
 * Whether a Pod whose endpoint is not ready yet is registered as a target all the same: it waits
 * for the target-health gate, its containers are ready (so only the gate keeps it from Ready), and
 * it is not being deleted. Without this, a gated Pod would never be registered and never be Ready.
 * Pure.
 */
export function registersBeforeReady(pod: PodLike | undefined): boolean {
  return (
    pod !== undefined &&
    pod.metadata.deletionTimestamp === undefined &&
    hasTargetHealthGate(pod) &&
    conditionOf(pod, 'ContainersReady')?.status === 'True'
  );
}

/**
 * Whether the gate of a Pod is still to be opened: it has the gate, is not being deleted, and its
 * condition is not True. A gate once open stays open (as the AWS Load Balancer Controller's): a
 * target failing its health check later is the load balancer's business, and the Pod's readiness
 * probe the kubelet's. Pure.
 */
export function gatePending(pod: PodLike): boolean {
  return (
    hasTargetHealthGate(pod) &&
    pod.metadata.deletionTimestamp === undefined &&
    conditionOf(pod, targetHealthGate.conditionType)?.status !== 'True'
  );
}

/** A target's health in one target group, as DescribeTargetHealth reports it. */
export interface TargetState {
  /** initial, healthy, unhealthy, unused, draining, unavailable. */
  readonly state: string;
  readonly reason?: string;
  readonly description?: string;
}

/** One target group routing to a Pod: which object and backend, and the target's health there (undefined: not read yet). */
export interface GateRoute {
  /** The MyIngress's name. */
  readonly ingress: string;
  /** The backend, `service:port`. */
  readonly backend: string;
  /** The target, `ip:port`. */
  readonly target: string;
  readonly health: TargetState | undefined;
}

/** What the gate condition should say. */
export interface GateVerdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** Condition reasons of the gate (CamelCase: a condition reason cannot carry ELB's dotted codes). */
export const GateReason = {
  /** Healthy in every target group that routes to the Pod. */
  TargetHealthy: 'TargetHealthy',
  /** Registered, health checks not passed yet. */
  TargetInitial: 'TargetInitial',
  /** Registered and failing its health checks. */
  TargetUnhealthy: 'TargetUnhealthy',
  /** Not registered yet (or its health not read yet). */
  TargetNotRegistered: 'TargetNotRegistered',
} as const;

/**
 * The gate's verdict for a Pod over the target groups routing to it: True when it is healthy in
 * all of them; otherwise False, with the first one that is not, its state and AWS's reason.
 * Undefined when nothing routes to it (nothing to say yet: the endpoint may not be listed yet).
 * Pure.
 */
export function gateVerdict(routes: readonly GateRoute[]): GateVerdict | undefined {
  if (routes.length === 0) return undefined;
  const sorted = [...routes].sort((a, b) =>
    `${a.ingress}/${a.backend}`.localeCompare(`${b.ingress}/${b.backend}`),
  );
  const waiting = sorted.find((r) => r.health?.state !== 'healthy');
  if (waiting === undefined)
    return {
      status: 'True',
      reason: GateReason.TargetHealthy,
      message: `target ${sorted[0]?.target ?? ''} healthy in ${sorted.map(where).join(', ')}`,
    };
  const h = waiting.health;
  const why = [h?.reason, h?.description].filter((x) => x !== undefined && x !== '').join(': ');
  const state = h?.state ?? 'not registered';
  return {
    status: 'False',
    reason:
      h === undefined || h.state === 'unused' || h.state === 'draining' || h.state === 'unavailable'
        ? GateReason.TargetNotRegistered
        : h.state === 'initial'
          ? GateReason.TargetInitial
          : GateReason.TargetUnhealthy,
    message: `target ${waiting.target} is ${state} in ${where(waiting)}${why !== '' ? ` (${why})` : ''}`,
  };
}

function where(r: GateRoute): string {
  return `MyIngress ${r.ingress} backend ${r.backend}`;
}

/**
 * The write that brings the Pod's gate condition to `verdict`, or undefined when it already says
 * that (status and reason; a message alone is not worth a write). Pure.
 */
export function gateWrite(pod: PodLike, verdict: GateVerdict): PodConditionWrite | undefined {
  const now = conditionOf(pod, targetHealthGate.conditionType);
  if (now?.status === verdict.status && now.reason === verdict.reason) return undefined;
  return {
    pod: pod.metadata.name,
    uid: pod.metadata.uid ?? '',
    type: targetHealthGate.conditionType,
    ...verdict,
  };
}

/** A manifest as the chart and the tests apply it. */
export interface GateManifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly spec: Record<string, unknown>;
}

/**
 * The MutatingAdmissionPolicy (and its two bindings) that gives every Pod created in a namespace
 * labelled `skylift.dev/target-health-gate=enabled` — or carrying that label itself (a Deployment's
 * Pod template, for one workload of a namespace) — the target-health readiness gate and the label
 * the operator's Pod cache selects on — a JSON patch that appends to the Pod's own gates
 * (readinessGates is an atomic list: an apply configuration would replace them), and an
 * apply configuration that merges the label into the Pod's. Runs in the
 * apiserver: no webhook to deploy, certify or keep available. `name` names the policy and the
 * namespace binding; the Pod binding is `<name>-pods`. Pure.
 */
export function targetHealthGatePolicy(name: string): GateManifest[] {
  const gate = `Object.spec.readinessGates{conditionType: '${targetHealthGate.conditionType}'}`;
  const enabled = { [targetHealthGate.label]: targetHealthGate.enabled };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        // A Pod that should wait for its target must not start without the gate.
        failurePolicy: 'Fail',
        reinvocationPolicy: 'IfNeeded',
        // Which Pods: the bindings say (a labelled namespace's, or a Pod labelled itself).
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
          ],
        },
        matchConditions: [
          {
            name: 'not-gated-yet',
            expression: `!has(object.spec.readinessGates) || !object.spec.readinessGates.exists(g, g.conditionType == '${targetHealthGate.conditionType}')`,
          },
        ],
        mutations: [
          {
            // Appended to the Pod's own gates (readinessGates is an atomic list, which an apply
            // configuration may not change), on an empty list first when it has none: kube-apiserver
            // 1.36.3 panics on a JSON patch value that is a list of objects.
            patchType: 'JSONPatch',
            jsonPatch: {
              expression: [
                `(has(object.spec.readinessGates) ? [] : [JSONPatch{op: 'add', path: '/spec/readinessGates', value: []}]) +`,
                `[JSONPatch{op: 'add', path: '/spec/readinessGates/-', value: ${gate}}]`,
              ].join('\n'),
            },
          },
          {
            // Labels are a map: an apply configuration merges the key in.
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression: `Object{metadata: Object.metadata{labels: {'${targetHealthGate.label}': '${targetHealthGate.enabled}'}}}`,
            },
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name, matchResources: { namespaceSelector: { matchLabels: enabled } } },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: `${name}-pods` },
      spec: { policyName: name, matchResources: { objectSelector: { matchLabels: enabled } } },
    },
  ];
}
