// The benchmark report: its JSON shape, the cost curves derived from it, and
// the table printed on stdout. Pure.
import type { AwsInventory } from './lib/awsAccount.ts';
import { comparedMetricNames, type BaselineComparison, type ComparedMetricName } from './lib/baseline.ts';
import { objectsWithin } from './lib/chartMemory.ts';
import type { GroupMemory, RssSlope } from './lib/costPerObject.ts';
import type { PropagationResult } from './lib/propagation.ts';
import type { AccountCalls } from './lib/promText.ts';
import { ratio, type Distribution } from './lib/stats.ts';
import type { BenchSettings } from './args.ts';

/** AWS calls the proxy counted in one phase. */
export interface AwsCalls {
  readonly total: number;
  readonly perResource: number;
  /** `service:Operation` → calls per resource. */
  readonly perResourceByOperation: Readonly<Record<string, number>>;
  /** `service:Operation` → calls (absent in reports before the teams groups). */
  readonly byOperation?: Readonly<Record<string, number>>;
  /** Calls the proxy answered with a throttling error itself (rate-limited scenarios). */
  readonly throttled: number;
}

/** Kubernetes API requests the operator made in one phase (from skylift_kube_api_requests_total). */
export interface KubeRequests {
  /** POST, PUT, PATCH and DELETE. */
  readonly writes: number;
  readonly writesPerResource: number;
  /** Verb → requests (reads included). */
  readonly byVerb: Readonly<Record<string, number>>;
}

/** One phase of a scenario: create until all Ready, a no-op resync window, or delete until all gone. */
export interface PhaseResult {
  /** Wall time of the phase, ms: first create to last Ready, window length, or first delete to last gone. */
  readonly durationMs: number;
  /** Per resource, ms: create → Ready (create), delete request → gone (delete); absent for resync. */
  readonly perResourceMs?: Distribution;
  readonly aws: AwsCalls;
  readonly kube: KubeRequests;
  /** Reconciles the operator ran per resource (in the resync window ≈ 1: each object resynced once). */
  readonly reconcilesPerResource: number;
  /** Operator CPU (user + system) spent in the phase, seconds. */
  readonly cpuSeconds: number;
  /** The same per resource, milliseconds (since schemaVersion 2). */
  readonly cpuMsPerResource?: number;
  /**
   * Create and delete: from the bench's first request sent to its last
   * request answered, ms — the bench's own time, not the operator's (since
   * schemaVersion 2).
   */
  readonly requestsMs?: number;
  /**
   * Create: from the last create answered to the last object seen Ready, ms;
   * delete: from the last delete answered to the last object gone. 0 if the
   * watch saw it first. With `requestsMs`, adds up to `durationMs` (±1 for
   * rounding). Since schemaVersion 2.
   */
  readonly afterLastRequestMs?: number;
}

/** The operator process over one scenario (/proc). */
export interface OperatorUse {
  /** Peak resident memory (VmHWM) at the end of the scenario. */
  readonly peakRssBytes: number;
  /** User + system CPU over the whole scenario, startup included, seconds. */
  readonly cpuSeconds: number;
  /** `cpuSeconds` per resource, ms (since schemaVersion 2). */
  readonly cpuMsPerResource?: number;
  /** Current resident memory (VmRSS) when the last object was seen Ready (since schemaVersion 2). */
  readonly rssAfterCreateBytes?: number;
  /** Current resident memory at the end of the no-op resync window: settled, idle (since schemaVersion 2). */
  readonly rssAfterResyncBytes?: number;
}

/** Everything measured for one scenario. */
export interface ScenarioResult {
  readonly id: string;
  readonly group: string;
  readonly kind: string;
  readonly size: number;
  readonly zones: number;
  readonly route53RatePerSecond: number | null;
  /** `skipped`: the machine cannot run it (`skipReason` says why); only node scenarios skip. */
  readonly status: 'ok' | 'failed' | 'skipped';
  readonly error?: string;
  /** Why a `skipped` scenario did not run. */
  readonly skipReason?: string;
  /** Objects seen Ready=True (should equal size); `myingress-rollout`: cases measured without error. */
  readonly readyCount: number;
  readonly create?: PhaseResult;
  readonly resync?: PhaseResult;
  readonly delete?: PhaseResult;
  /** With everything Ready and nothing changing (the resync window), scaled to one minute. */
  readonly steadyState?: { readonly awsCallsPerMinute: number; readonly cpuSecondsPerMinute: number };
  readonly operator?: OperatorUse;
  /** AWS resources still there after every object was deleted (all should be 0). */
  readonly leftovers?: AwsInventory;
  /** Scenarios whose Route 53 changes stay PENDING a while (`dns-propagating`): Ready after INSYNC. */
  readonly propagation?: PropagationResult;
  /** Teams groups: the namespaces, TeamPolicies and accounts, and the AWS calls per account. */
  readonly teams?: TeamsResult;
  /** `dns-teams-flood`, `dns-teams-bigtxt`: how soon the quiet namespace's record was Ready. */
  readonly quiet?: QuietResult;
  /** `myingress-rollout`: failed requests and Pod timings per change, gate on and off. */
  readonly rollout?: RolloutResult;
  /** `myingress-group`, `gateway`: the shared load balancers, one member's change, what deletion left. */
  readonly shared?: SharedLbResult;
}

/** Skylift-tagged AWS resources of the shared load balancer scenarios, read straight from the emulator. */
export interface SharedLbInventory {
  readonly loadBalancers: number;
  readonly listeners: number;
  /** Non-default listener rules. */
  readonly rules: number;
  readonly targetGroups: number;
  /** Managed security groups (tagged `skylift.dev/uid`). */
  readonly securityGroups: number;
}

/** ELBv2 calls of one phase: the total, per member (route), and by operation. */
export interface Elbv2Calls {
  readonly total: number;
  readonly perMember: number;
  /** `Operation` → calls (ELBv2 only; the phase's `aws.byOperation` has every service). */
  readonly byOperation: Readonly<Record<string, number>>;
}

/** `myingress-group` and `gateway`: MyIngressGroups with members, or one Gateway with HTTPRoutes. */
export interface SharedLbResult {
  readonly front: 'myingress-group' | 'gateway';
  /** MyIngressGroups (or 1: the Gateway), members (routes) and the namespaces they are spread over. */
  readonly groups: number;
  readonly members: number;
  readonly namespaces: number;
  /** `gateway`: from the Gateway's create (before any route) to Programmed=True; its AWS calls. */
  readonly gatewayProgrammed?: PhaseResult;
  /** From the first member create to every member Ready (route Accepted) at its generation, ms. */
  readonly allMembersDoneMs: number;
  /**
   * From the first member create to every group Ready listing all its members Attached (the Gateway
   * Programmed with every route attached), ms.
   */
  readonly allParentsDoneMs: number;
  /** What ELBv2 held once everything was done (must be one load balancer per group, 1 for the Gateway). */
  readonly afterCreate: SharedLbInventory;
  /** CreateLoadBalancer calls the operator made in the whole scenario. */
  readonly createLoadBalancerCalls: number;
  /** ELBv2 calls creating the members (routes), after the Gateway was Programmed for `gateway`. */
  readonly createElbv2: Elbv2Calls;
  /** One member's rule path changed, until it was Ready (Accepted) at its new generation. */
  readonly change: {
    /** `namespace/name` of the member changed, and its path before and after. */
    readonly member: string;
    readonly fromPath: string;
    readonly toPath: string;
    readonly phase: PhaseResult;
    readonly elbv2: Elbv2Calls;
    /** ELBv2 has a rule matching the new path on the member's load balancer, and none the old one. */
    readonly appliedInAws: boolean;
  };
  /** Deleting: members (routes), then the groups (the Gateway), ms from the first member delete. */
  readonly deletion: {
    /** Every member gone from the apiserver (a MyIngress keeps its finalizer until its rules are removed). */
    readonly membersGoneMs: number;
    /** No target group left in ELBv2 (every member's rules and target groups removed). */
    readonly memberResourcesGoneMs: number;
    /** The groups (the Gateway and its MyIngressGroup) gone from the apiserver and no load balancer left. */
    readonly allGoneMs: number;
    readonly elbv2: Elbv2Calls;
  };
  /** What is left after deletion (all must be 0), and listener or rule ARNs ELBv2 still describes. */
  readonly leftovers: SharedLbInventory & { readonly lingeringChildren: number };
  /** Broken invariants (ALBs created ≠ groups, something left, the change not applied); empty: none. */
  readonly violations: readonly string[];
}

/** A list of measurements (ms) and its median (nearest rank; null when empty). */
export interface MsList {
  readonly values: readonly number[];
  readonly median: number | null;
}

/** One change of the rollout matrix, with or without the target-health gate and preStop pause. */
export interface RolloutCaseResult {
  /** The change, as bench/lib/rollouts.ts names it ('scale 3→1', …). */
  readonly case: string;
  /** `on`: the namespace's Pods get the target-health readiness gate and the preStop pause; `off`: neither. */
  readonly gate: 'on' | 'off';
  readonly status: 'ok' | 'failed';
  /** Why the case could not be measured (a deadline); its counts are then absent. */
  readonly error?: string;
  /** Requests sent through the listener while the change ran and settled. */
  readonly sentRequests?: number;
  /** Requests not answered 2xx by a Pod. */
  readonly failedRequests?: number;
  /** Failed requests by `status reason` (status 0: no HTTP answer, e.g. a timeout or a reset). */
  readonly failureKinds?: Readonly<Record<string, number>>;
  /** Per Pod the change started: from its creation (whole seconds, as the apiserver keeps it) to the first request it answered. */
  readonly podStartToFirstRequestMs?: MsList;
  /** Per Pod the change removed: from its deletion (deletionTimestamp less the grace period) to the last request it answered. */
  readonly podDeletionToLastRequestMs?: MsList;
  /** From the load's start to its stop: the change and the wait until it settled, ms. */
  readonly durationMs?: number;
}

/** What the rollout matrix ran with (the same for every case). */
export interface RolloutSettings {
  /** The gated Deployment's preStop pause (its terminationGracePeriodSeconds is this + 10; ungated: 2). */
  readonly preStopSeconds: number;
  /** How long the ALB data plane keeps routing to a target after a change of its registration. */
  readonly propagationDelayMs: number;
  /** The data plane runs health checks this much faster than the spec (interval 5 s × scale). */
  readonly healthCheckTimeScale: number;
  readonly healthCheckIntervalSeconds: number;
  /** The operator's `--target-health-gate-poll-period`. */
  readonly gatePollPeriod: string;
  readonly requestsPerSecond: number;
  /** A request unanswered after this long counts as failed. */
  readonly requestTimeoutMs: number;
  /** Bounds of the load of one case. */
  readonly maxRequestsPerCase: number;
  readonly maxLoadMsPerCase: number;
  readonly replicas: number;
}

/** The `myingress-rollout` scenario's figures. */
export interface RolloutResult {
  readonly settings: RolloutSettings;
  /** The node cluster's start (control plane, node, moto), ms. */
  readonly nodeClusterStartMs: number;
  /** Gate on first, then off; each in bench/lib/rollouts.ts's case order. */
  readonly cases: readonly RolloutCaseResult[];
}

/** One team account of a teams scenario. */
export interface TeamsAccount {
  /** The account ID, or `own`: the operator's own identity (`dns-namespaces`). */
  readonly account: string;
  /** The role the operator assumes there; absent: its own identity, no TeamPolicy. */
  readonly roleArn?: string;
  /** Its TeamPolicies, namespaces and measured objects (the quiet record included). */
  readonly policies: number;
  readonly namespaces: number;
  readonly objects: number;
  /** The hosted zones made there (DNSRecord groups). */
  readonly zones: readonly string[];
}

/** AWS calls per account in one phase, as the operator counted them (`skylift_aws_api_calls_total`). */
export type CallsByAccount = Readonly<Record<string, AccountCalls>>;

/** What a teams scenario was made of, and its AWS calls per account. */
export interface TeamsResult {
  readonly namespaces: number;
  readonly policies: number;
  readonly accounts: readonly TeamsAccount[];
  /** The `skylift run` flags of this scenario besides the run's (`settings.operatorFlags`). */
  readonly operatorFlags: readonly string[];
  /**
   * From the operator's start until every TeamPolicy was Ready with its namespaces and the teams
   * record existed, ms; null: no TeamPolicy, nothing waited for (`dns-namespaces`).
   */
  readonly policiesServingMs: number | null;
  /** AWS calls the proxy counted from the operator's start to the first create, by `service:Operation`. */
  readonly callsBeforeCreate: Readonly<Record<string, number>>;
  /** STS calls the proxy counted over the whole scenario, by `sts:Operation` (AssumeRole). */
  readonly stsCalls: Readonly<Record<string, number>>;
  /**
   * Per phase, per account label (`own`: the operator's own identity, e.g. STS; else the team
   * account): calls by `service:Operation` and how many were throttled. A scenario that failed
   * while creating has `create` up to the failure.
   */
  readonly callsByAccount: {
    readonly create?: CallsByAccount;
    readonly resync?: CallsByAccount;
    readonly delete?: CallsByAccount;
  };
}

/** The quiet namespace's one record, created while (or right after) another namespace's burst. */
export interface QuietResult {
  /** `namespace/name` of the quiet record. */
  readonly object: string;
  /** Records the bulk namespace created. */
  readonly bulk: number;
  /** Bulk creates answered before the quiet record was created. */
  readonly createdAfterBulkCreates: number;
  /** From the bench's first bulk create to the quiet record's create, ms. */
  readonly createdAfterFirstBulkMs: number;
  /** From just before its create request to the first watch event with Ready=True, ms; null if never seen Ready. */
  readonly readyMs: number | null;
  /** Bulk records seen Ready before the quiet one was (all of them when it was never Ready). */
  readonly bulkReadyBefore: number;
  /** The goal of issue 28: Ready within this long of its create. Reported, never asserted. */
  readonly goalMs: number;
  /** `readyMs` ≤ `goalMs`; false when never Ready. */
  readonly withinGoal: boolean;
}

/** The chart's memory settings (deploy/helm/skylift/values.yaml), to compare peak RSS with. */
export interface ChartMemory {
  readonly requestBytes: number | null;
  readonly limitBytes: number | null;
  readonly heapLimitMiB: number | null;
}

/** How one group's cost grows from one size to the next. */
export interface CurveStep {
  readonly from: number;
  readonly to: number;
  readonly sizeRatio: number;
  /** Ratio of time until all Ready. */
  readonly convergenceRatio: number | null;
  /** Ratio of per-resource p95. */
  readonly p95Ratio: number | null;
  /** Ratio of operator peak RSS. */
  readonly memoryRatio: number | null;
}

/** A group measured at more than one size. */
export interface CostCurve {
  readonly group: string;
  readonly points: readonly { size: number; allReadyMs: number; p95Ms: number; peakRssBytes: number }[];
  readonly steps: readonly CurveStep[];
}

/** The machine a report was measured on. */
export interface MachineInfo {
  readonly cores: number;
  readonly cpuModel: string;
  readonly totalMemoryBytes: number;
  readonly node: string;
  readonly platform: string;
  readonly gitCommit: string;
  readonly gitDirty: boolean;
  readonly loadAverageAtStart: readonly number[];
  readonly note: string;
}

/**
 * The JSON file `bench/results/<time>.json`. Version 2 added the create
 * split (`requestsMs`, `afterLastRequestMs`), CPU per resource, RSS after
 * create and after the resync window, `memory` and `baseline`; every
 * version-1 field is still there with the same meaning.
 */
export interface BenchReport {
  readonly schemaVersion: 2;
  /** False while a run is in progress (the file is rewritten after each scenario) or if it was cut short. */
  readonly complete: boolean;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly settings: BenchSettings & { readonly operatorFlags: readonly string[] };
  readonly scenarios: readonly ScenarioResult[];
  readonly curves: readonly CostCurve[];
  /** Per group: RSS per additional object over the sizes run (a slope needs two or more sizes). */
  readonly memory: readonly GroupMemory[];
  /** This run against the saved baseline report; null when there was none. */
  readonly baseline: BaselineComparison | null;
  /** The chart's memory request and limit (absent in reports before the teams groups). */
  readonly chart?: ChartMemory;
}

/**
 * Cost curves: for each group with successful results at two or more sizes,
 * its points by ascending size and the ratios between neighbouring sizes.
 */
export function costCurves(results: readonly ScenarioResult[]): CostCurve[] {
  const byGroup = new Map<string, ScenarioResult[]>();
  for (const r of results) {
    if (r.status !== 'ok' || r.create === undefined || r.operator === undefined) continue;
    byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  }
  const curves: CostCurve[] = [];
  for (const [group, rs] of byGroup) {
    if (rs.length < 2) continue;
    const points = [...rs]
      .sort((a, b) => a.size - b.size)
      .map((r) => ({
        size: r.size,
        allReadyMs: r.create?.durationMs ?? 0,
        p95Ms: r.create?.perResourceMs?.p95 ?? 0,
        peakRssBytes: r.operator?.peakRssBytes ?? 0,
      }));
    const steps: CurveStep[] = [];
    for (let i = 1; i < points.length; i++) {
      const a = points[i - 1];
      const b = points[i];
      if (a === undefined || b === undefined) continue;
      steps.push({
        from: a.size,
        to: b.size,
        sizeRatio: ratio(a.size, b.size) ?? 0,
        convergenceRatio: ratio(a.allReadyMs, b.allReadyMs),
        p95Ratio: ratio(a.p95Ms, b.p95Ms),
        memoryRatio: ratio(a.peakRssBytes, b.peakRssBytes),
      });
    }
    curves.push({ group, points, steps });
  }
  return curves;
}

const seconds = (ms: number | undefined): string => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)}s`);
const num = (n: number | undefined, digits = 1): string => (n === undefined ? '-' : n.toFixed(digits));
const mib = (bytes: number | undefined): string =>
  bytes === undefined ? '-' : `${Math.round(bytes / 1048576)}`;

/** Pads cells into aligned columns (first column left, others right). */
function columns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Sum of a resource's AWS calls that left nothing: `left` is the number of AWS resources still there. */
function leftoverTotal(l: AwsInventory | undefined): number | undefined {
  return l === undefined ? undefined : l.route53Records + l.loadBalancers + l.targetGroups + l.dbInstances;
}

/** Column headers of the baseline comparison, per metric. */
const comparedMetricLabels: Readonly<Record<ComparedMetricName, string>> = {
  allReadyMs: 'all Ready',
  createRequestsMs: 'creating',
  afterLastCreateMs: 'after last create',
  createCpuMsPerObject: 'CPU ms/res create',
  cpuMsPerObject: 'total',
  peakRssBytes: 'peak RSS',
  createKubeWritesPerObject: 'kube writes/res create',
  createAwsCallsPerObject: 'AWS/res create',
  resyncAwsCallsPerObject: 'resync',
};

/** A slope as `+12.3 KiB/object + 250 MiB (r² 0.98)`, or why there is none. */
function slopeText(s: RssSlope): string {
  if (s.bytesPerObject === null || s.interceptBytes === null) return `none (${s.reason ?? 'no slope'})`;
  const perObject = `${s.bytesPerObject >= 0 ? '+' : ''}${(s.bytesPerObject / 1024).toFixed(1)} KiB/object`;
  return `${perObject} + ${mib(s.interceptBytes)} MiB${s.r2 === null ? '' : ` (r² ${s.r2})`}`;
}

/** One line per group: RSS per additional object after create, when idle after the resync window, and peak. */
function memoryLines(memory: readonly GroupMemory[]): string[] {
  return memory.map((g) => {
    const sizes = g.points.map((p) => p.size).join(', ');
    const slopes = [g.afterCreate, g.afterResync, g.peak];
    const reasons = new Set(slopes.map((s) => s.reason));
    if (slopes.every((s) => s.bytesPerObject === null) && reasons.size === 1)
      return `memory ${g.group} (sizes ${sizes}): no slope: ${g.afterCreate.reason ?? ''}`;
    return `memory ${g.group} (sizes ${sizes}): RSS after create ${slopeText(g.afterCreate)}; idle ${slopeText(g.afterResync)}; peak ${slopeText(g.peak)}`;
  });
}

/** How soon after INSYNC a propagating scenario's records were Ready. */
function propagationLine(id: string, p: PropagationResult): string {
  const d = (x: PropagationResult['readyAfterInsyncMs']): string =>
    `p50 ${seconds(x.p50)} p95 ${seconds(x.p95)} max ${seconds(x.max)}`;
  return (
    `${id}: changes PENDING ${seconds(p.pendingMs)}; Ready after the first INSYNC answer ${d(p.readyAfterInsyncAnswerMs)}; ` +
    `after the change was INSYNC ${d(p.readyAfterInsyncMs)} (${p.changes} changes, ${p.getChangeCalls} GetChange, ${p.unmatched} unmatched)`
  );
}

/** `service:Operation` counts as `Operation n, …`, largest first (the service when not obvious). */
function callsText(calls: Readonly<Record<string, number>>, digits = 0): string {
  const entries = Object.entries(calls).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  if (entries.length === 0) return 'none';
  return entries.map(([op, n]) => `${op} ${n.toFixed(digits)}`).join(', ');
}

/** A teams scenario: its shape, AWS calls per account while creating, STS at the proxy. */
function teamsLine(id: string, t: TeamsResult): string {
  const accounts = t.accounts
    .map(
      (a) =>
        `${a.account} (${a.policies} ${a.policies === 1 ? 'policy' : 'policies'}, ${a.namespaces} namespaces, ${a.objects} objects)`,
    )
    .join(', ');
  const create = Object.entries(t.callsByAccount.create ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([account, c]) =>
        `${account}: ${callsText(c.byOperation)}${c.throttled > 0 ? ` (${c.throttled} throttled)` : ''}`,
    )
    .join('; ');
  return (
    `${id}: ${t.namespaces} namespaces, ${t.policies} TeamPolicies, accounts ${accounts}; ${t.policiesServingMs === null ? 'no policy to wait for' : `policies serving ${seconds(t.policiesServingMs)} after the operator started`}; ` +
    `create calls by account ${create === '' ? 'none' : create}; STS at the proxy ${callsText(t.stsCalls)}`
  );
}

/** The quiet record's latency against issue 28's goal. */
function quietLine(id: string, q: QuietResult): string {
  const ready =
    q.readyMs === null
      ? 'never Ready'
      : `Ready ${seconds(q.readyMs)} after its create (goal ${seconds(q.goalMs)}: ${q.withinGoal ? 'met' : 'missed'})`;
  return (
    `${id}: quiet record ${q.object} ${ready}; created after ${q.createdAfterBulkCreates} of ${q.bulk} bulk creates ` +
    `(${seconds(q.createdAfterFirstBulkMs)} after the first); ${q.bulkReadyBefore} bulk records Ready before it`
  );
}

/** A shared load balancer scenario: readiness, load balancers, ELBv2 calls per member and per change, deletion. */
function sharedLines(id: string, s: SharedLbResult): string[] {
  const parents = s.front === 'gateway' ? '1 Gateway' : `${s.groups} MyIngressGroups`;
  const members = s.front === 'gateway' ? 'routes' : 'members';
  const a = s.afterCreate;
  const l = s.leftovers;
  const left =
    l.loadBalancers + l.listeners + l.rules + l.targetGroups + l.securityGroups + l.lingeringChildren;
  return [
    `${id}: ${parents}, ${s.members} ${members} in ${s.namespaces} namespaces` +
      (s.gatewayProgrammed !== undefined
        ? `; Gateway Programmed ${seconds(s.gatewayProgrammed.durationMs)} after its create (${callsText(s.gatewayProgrammed.aws.byOperation ?? {})})`
        : '') +
      `; all ${members} ${s.front === 'gateway' ? 'Accepted' : 'Ready'} at their generation ${seconds(s.allMembersDoneMs)}, ` +
      `${s.front === 'gateway' ? 'the Gateway Programmed with all attached' : 'every group Ready with all Attached'} ${seconds(s.allParentsDoneMs)}`,
    `${id}: ELBv2 held ${a.loadBalancers} load balancers (${s.createLoadBalancerCalls} CreateLoadBalancer), ${a.listeners} listeners, ${a.rules} rules, ${a.targetGroups} target groups, ${a.securityGroups} security groups; ` +
      `ELBv2 calls creating: ${s.createElbv2.total}, ${num(s.createElbv2.perMember, 2)} per ${members === 'routes' ? 'route' : 'member'}`,
    `${id}: one ${members === 'routes' ? 'route' : 'member'}'s path changed (${s.change.member} ${s.change.fromPath} → ${s.change.toPath}): ${seconds(s.change.phase.durationMs)}, ` +
      `${s.change.elbv2.total} ELBv2 calls (${callsText(s.change.elbv2.byOperation)})${s.change.appliedInAws ? '' : '; NOT in ELBv2'}`,
    `${id}: deleting: ${members} gone ${seconds(s.deletion.membersGoneMs)}, their target groups ${seconds(s.deletion.memberResourcesGoneMs)}, everything ${seconds(s.deletion.allGoneMs)}; ` +
      `${s.deletion.elbv2.total} ELBv2 calls; left: ${left === 0 ? 'nothing' : JSON.stringify(l)}`,
  ];
}

/** `[v1, v2] median m` in seconds, or `-`. */
function msListText(l: MsList | undefined): string {
  if (l === undefined || l.median === null) return '-';
  return `${seconds(l.median)} [${l.values.map((v) => (v / 1000).toFixed(1)).join(' ')}]`;
}

/** The rollout matrix: one row per change and gate, and the settings. */
function rolloutLines(id: string, r: RolloutResult): string[] {
  const s = r.settings;
  const rows: string[][] = [
    [
      'change',
      'gate',
      'sent',
      'failed',
      'failure kinds',
      'Pod start → first request',
      'Pod deletion → last answered',
      'length',
    ],
  ];
  for (const c of r.cases) {
    if (c.status === 'failed') {
      rows.push([c.case, c.gate, 'FAILED', c.error ?? '']);
      continue;
    }
    rows.push([
      c.case,
      c.gate,
      String(c.sentRequests ?? '-'),
      String(c.failedRequests ?? '-'),
      Object.entries(c.failureKinds ?? {})
        .map(
          ([k, n]) =>
            `${n}× ${k
              .replace(/<[^>]*>/g, ' ')
              .replace(/\s+/g, ' ')
              .trim()}`,
        )
        .join('; ') || '-',
      msListText(c.podStartToFirstRequestMs),
      msListText(c.podDeletionToLastRequestMs),
      seconds(c.durationMs),
    ]);
  }
  return [
    `${id}: ${s.requestsPerSecond} requests/s through the ALB data plane (loopback), ${s.replicas} replicas; gate on = target-health readiness gate + preStop ${s.preStopSeconds} s; data plane propagation delay ${seconds(s.propagationDelayMs)}, health checks every ${s.healthCheckIntervalSeconds * s.healthCheckTimeScale} s (${s.healthCheckIntervalSeconds} s × ${s.healthCheckTimeScale}); node cluster up in ${seconds(r.nodeClusterStartMs)}; medians, then each Pod [s]`,
    ...columns(rows),
  ];
}

/** Kinds whose calls per no-op resync are worth a line (DNS costs per zone, not per object). */
const resyncLineKinds: readonly string[] = ['MyIngress', 'ManagedDB'];

/** AWS calls per object in the no-op resync window, and per resync (calls / reconciles). */
function resyncLine(r: ScenarioResult): string | undefined {
  const resync = r.resync;
  if (resync === undefined || !resyncLineKinds.includes(r.kind)) return undefined;
  const perResync =
    resync.reconcilesPerResource > 0 ? resync.aws.perResource / resync.reconcilesPerResource : 0;
  return (
    `resync ${r.id}: ${num(resync.aws.perResource, 2)} AWS calls per object, ${num(resync.reconcilesPerResource, 2)} reconciles per object, ` +
    `${num(perResync, 2)} calls per resync: ${callsText(resync.aws.perResourceByOperation, 2)} per object`
  );
}

/** The chart's memory against the highest peak RSS, and per namespace for the teams-memory group. */
function chartLines(report: BenchReport): string[] {
  const chart = report.chart;
  if (chart === undefined || chart.limitBytes === null) return [];
  const ok = report.scenarios.filter((r) => r.operator !== undefined);
  const top = [...ok].sort((a, b) => (b.operator?.peakRssBytes ?? 0) - (a.operator?.peakRssBytes ?? 0))[0];
  const lines: string[] = [];
  const limit = chart.limitBytes;
  if (top?.operator !== undefined)
    lines.push(
      `chart memory: request ${mib(chart.requestBytes ?? undefined)} MiB, limit ${mib(limit)} MiB; highest peak RSS ${mib(top.operator.peakRssBytes)} MiB (${top.id}), ${Math.round((top.operator.peakRssBytes / limit) * 100)} % of the limit`,
    );
  for (const g of report.memory) {
    if (g.group !== 'teams-memory') continue;
    const n = objectsWithin(limit, g.peak);
    lines.push(
      `memory per namespace (${g.group}, one DNSRecord each): peak ${slopeText(g.peak).replace('/object', '/namespace')}` +
        (n === null
          ? ''
          : `; about ${n} namespaces under the chart's ${mib(limit)} MiB limit (extrapolated)`),
    );
  }
  return lines;
}

/** The comparison with the baseline: a header line, one row of ratios per scenario, what was not compared. */
function baselineLines(b: BaselineComparison | null): string[] {
  if (b === null) return ['no baseline to compare with (--baseline PATH; --save-baseline keeps this run)'];
  const of = [b.startedAt, b.gitCommit === null ? null : `commit ${b.gitCommit.slice(0, 7)}`]
    .filter((x) => x !== null)
    .join(', ');
  const lines = [`against baseline ${b.file}${of === '' ? '' : ` (${of})`}: current / baseline`];
  if (b.scenarios.length > 0) {
    const rows: string[][] = [['scenario', ...comparedMetricNames.map((m) => comparedMetricLabels[m])]];
    for (const s of b.scenarios)
      rows.push([
        s.id,
        ...comparedMetricNames.map((m) => {
          const r = s.metrics[m].ratio;
          return r === null ? '-' : `×${r.toFixed(2)}`;
        }),
      ]);
    lines.push(...columns(rows));
  }
  if (b.notCompared.length > 0)
    lines.push(`not compared: ${b.notCompared.map((n) => `${n.id} (${n.reason})`).join(', ')}`);
  return lines;
}

/**
 * The short stdout table: one row per scenario (convergence and how it
 * splits at the last create, per-resource latency, AWS calls and Kubernetes
 * writes per resource by phase, CPU per resource, memory, CPU, steady state,
 * leftovers), failures with their error, the cost curves, the memory slopes
 * per group and the comparison with the baseline. Times in seconds, memory
 * in MiB.
 */
export function renderTable(report: BenchReport): string {
  const header = [
    'scenario',
    'N',
    'all Ready',
    'creating',
    'after last create',
    'p50',
    'p95',
    'max',
    'AWS/res create',
    'resync',
    'delete',
    'kube writes/res create',
    'resync',
    'delete',
    'CPU ms/res create',
    'total',
    'RSS MiB Ready',
    'idle',
    'peak',
    'CPU s',
    'AWS/min idle',
    'CPU s/min idle',
    'left',
  ];
  const rows: string[][] = [header];
  for (const r of report.scenarios) {
    if (r.status === 'failed') {
      rows.push([r.id, String(r.size), 'FAILED']);
      continue;
    }
    if (r.status === 'skipped') {
      rows.push([r.id, String(r.size), 'SKIPPED']);
      continue;
    }
    if (r.rollout !== undefined) {
      rows.push([r.id, String(r.size), 'below']);
      continue;
    }
    const d = r.create?.perResourceMs;
    rows.push([
      r.id,
      String(r.size),
      seconds(r.create?.durationMs),
      seconds(r.create?.requestsMs),
      seconds(r.create?.afterLastRequestMs),
      seconds(d?.p50),
      seconds(d?.p95),
      seconds(d?.max),
      num(r.create?.aws.perResource, 2),
      num(r.resync?.aws.perResource, 2),
      num(r.delete?.aws.perResource, 2),
      num(r.create?.kube.writesPerResource, 2),
      num(r.resync?.kube.writesPerResource, 2),
      num(r.delete?.kube.writesPerResource, 2),
      num(r.create?.cpuMsPerResource),
      num(r.operator?.cpuMsPerResource),
      mib(r.operator?.rssAfterCreateBytes),
      mib(r.operator?.rssAfterResyncBytes),
      mib(r.operator?.peakRssBytes),
      num(r.operator?.cpuSeconds),
      num(r.steadyState?.awsCallsPerMinute),
      num(r.steadyState?.cpuSecondsPerMinute, 2),
      String(leftoverTotal(r.leftovers) ?? '-'),
    ]);
  }
  const lines = columns(rows);
  for (const r of report.scenarios) {
    if (r.status === 'failed') lines.push(`${r.id} failed: ${r.error ?? 'unknown error'}`);
    if (r.status === 'skipped') lines.push(`${r.id} skipped: ${r.skipReason ?? 'no reason given'}`);
    if (r.rollout !== undefined) lines.push(...rolloutLines(r.id, r.rollout));
    if (r.propagation !== undefined) lines.push(propagationLine(r.id, r.propagation));
    if (r.teams !== undefined) lines.push(teamsLine(r.id, r.teams));
    if (r.quiet !== undefined) lines.push(quietLine(r.id, r.quiet));
    if (r.shared !== undefined) lines.push(...sharedLines(r.id, r.shared));
    const resync = resyncLine(r);
    if (resync !== undefined) lines.push(resync);
  }
  for (const c of report.curves) {
    const steps = c.steps.map(
      (s) =>
        `${s.from}→${s.to} (×${s.sizeRatio}): all Ready ×${s.convergenceRatio ?? '-'}, p95 ×${s.p95Ratio ?? '-'}, peak RSS ×${s.memoryRatio ?? '-'}`,
    );
    lines.push(`cost curve ${c.group}: ${steps.join('; ')}`);
  }
  lines.push(...memoryLines(report.memory), ...chartLines(report), ...baselineLines(report.baseline));
  return `${lines.join('\n')}\n`;
}

/** A report's file name: its start time in UTC, e.g. `2026-05-01T12-34-56Z.json`. Pure. */
export function reportFileName(at: Date): string {
  return `${at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-')}.json`;
}
