// What a chaos run records: timestamped events, phases with their AWS calls
// at the proxy, and the report bench/chaos.ts writes as JSON.
import type { CallRecord } from '../../dev/awsFaultProxy.ts';
import type { FaultSettings } from './chaosFaults.ts';
import type { CrState, InvariantResult, SkyliftKind } from './invariants.ts';
import type { Distribution } from './stats.ts';

/** One thing that happened, at milliseconds since the run started. */
export interface ChaosEvent {
  readonly atMs: number;
  readonly kind: string;
  readonly detail: string;
}

/** A phase of the run and what the operator did to AWS in it (at the proxy). */
export interface ChaosPhase {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
  /** Calls per `service:Operation`. */
  readonly awsCalls: Record<string, number>;
  /** Calls per proxy outcome (forwarded, throttle, error, latency, drop, dropResponse). */
  readonly awsOutcomes: Record<string, number>;
  /** At the phase's end: Ready reasons per kind, e.g. `{ DNSRecord: { Available: 90, Pending: 30 } }`. */
  readonly readyReasons: Record<string, Record<string, number>>;
}

/** The knobs of a run as recorded in its report. */
export interface ChaosSettings {
  /** Team accounts: 2 (two namespaces, each served by a TeamPolicy's role in its own account) or 1 (one namespace, the operator's own account, no TeamPolicy). */
  readonly accounts: 1 | 2;
  readonly resources: number;
  readonly kills: number;
  readonly leaderKills: number;
  readonly apiServerRestarts: number;
  readonly etcdRestarts: number;
  readonly faults: boolean;
  readonly killDelayMs: readonly [number, number];
  readonly faultedConvergeMs: number;
  readonly deleteStormMs: number;
  readonly convergeTimeoutMs: number;
  readonly deleteTimeoutMs: number;
  readonly faultSettings: FaultSettings;
}

/** A leader kill and its outcome. */
export interface Failover {
  readonly killed: string;
  readonly successor: string;
  /** From the SIGKILL until the successor held the Lease. */
  readonly afterMs: number;
}

/** One AWS account of a run, its inventory's invariants, and who acts in it. */
export interface ChaosAccountReport {
  /** The 12-digit account ID. */
  readonly account: string;
  /** The role the operator assumes for it (a TeamPolicy's spec.aws.roleArn); absent: the operator's own identity. */
  readonly roleArn?: string;
  /** The TeamPolicy that maps its namespaces to it; absent: none (the operator's own account). */
  readonly teamPolicy?: string;
  /** The namespaces whose objects belong here (none: the operator's own account when every namespace has a role). */
  readonly namespaces: readonly string[];
  /** The hosted zones inventoried here (its namespaces' zones, and same-named decoys of the others'). */
  readonly zones: readonly string[];
  readonly invariants: {
    readonly afterConverge: readonly InvariantResult[];
    readonly afterDelete: readonly InvariantResult[];
  };
  /** Every invariant held here, both times. */
  readonly passed: boolean;
}

/** The TeamPolicies a run made, and whether it deleted them. */
export interface ChaosTeamPolicies {
  /** The label selector the operators were given (`--team-policy-selector`). */
  readonly selector: string;
  readonly names: readonly string[];
  /** How many the selector still listed after the run deleted them (0 when all went). */
  readonly leftAfterRun: number;
}

/** What a chaos run did and found; written as JSON by bench/chaos.ts. */
export interface ChaosReport {
  readonly seed: number;
  readonly settings: ChaosSettings;
  readonly workload: {
    readonly total: number;
    readonly dns: number;
    readonly myIngress: number;
    readonly managedDb: number;
    /** The namespaces the objects were spread over (evenly). */
    readonly namespaces: readonly string[];
  };
  readonly startedAt: string;
  readonly durationMs: number;
  readonly phases: readonly ChaosPhase[];
  readonly events: readonly ChaosEvent[];
  readonly counts: {
    readonly operatorKills: number;
    readonly leaderKills: number;
    readonly takeovers: number;
    readonly apiServerRestarts: number;
    readonly etcdRestarts: number;
    readonly unexpectedOperatorExits: number;
    readonly operatorStarts: number;
    readonly fiveXxBursts: number;
  };
  readonly convergence: {
    /** From the first object applied until every object was Ready (undefined: the deadline passed). */
    readonly allReadyAfterMs: number | undefined;
    /** Per kind: ms from applying an object to first seeing it Ready (sampled once a second). */
    readonly readyAfterMs: Readonly<Record<SkyliftKind, Distribution>>;
    readonly failovers: readonly Failover[];
  };
  readonly deletion: {
    readonly requested: number;
    /** From the first delete request until every deleted object was gone (undefined: the deadline passed). */
    readonly allGoneAfterMs: number | undefined;
  };
  /** At the proxy over the whole run: calls per `service:Operation`, and per outcome. */
  readonly awsCalls: {
    readonly total: number;
    readonly byOperation: Record<string, number>;
    readonly byOutcome: Record<string, number>;
    /**
     * The operator's sts:AssumeRole calls and how many of them a fault hit: one that still fails
     * after the SDK's retries holds its namespace's objects for the operator's AssumeRoleFailed
     * retry (60 s).
     */
    readonly assumeRole: { readonly calls: number; readonly faulted: number };
  };
  /** Every account's results added up (each violation names its account). */
  readonly invariants: {
    readonly afterConverge: readonly InvariantResult[];
    readonly afterDelete: readonly InvariantResult[];
  };
  /** Per account: the team accounts, then (with two) the operator's own, which must hold nothing. */
  readonly accounts: readonly ChaosAccountReport[];
  /** Absent with one account (no TeamPolicy). */
  readonly teamPolicies?: ChaosTeamPolicies;
  readonly passed: boolean;
  /** Where the stack and operator logs are. */
  readonly logDir: string;
}

/** Calls per proxy outcome. Pure. */
export function outcomeCounts(calls: readonly Pick<CallRecord, 'outcome'>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.outcome] = (out[c.outcome] ?? 0) + 1;
  return out;
}

/** Ready condition reasons per kind (`Available`, `Pending`, …, `no Ready condition`). Pure. */
export function readyReasons(crs: readonly CrState[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const cr of crs) {
    const reason = cr.readyDetail.split(':')[0] ?? '';
    const kind = (out[cr.kind] ??= {});
    kind[reason] = (kind[reason] ?? 0) + 1;
  }
  return out;
}

/** The run's clock and event log: every event is kept and passed to `log` as one line. */
export class EventLog {
  readonly events: ChaosEvent[] = [];
  private readonly t0: number;
  private readonly log: (line: string) => void;

  constructor(log: (line: string) => void, t0 = performance.now()) {
    this.log = log;
    this.t0 = t0;
  }

  /** Milliseconds since the run started. */
  now(): number {
    return Math.round(performance.now() - this.t0);
  }

  /** Records an event now. */
  add(kind: string, detail: string): void {
    const atMs = this.now();
    this.events.push({ atMs, kind, detail });
    this.log(`${(atMs / 1000).toFixed(1).padStart(7)}s  ${kind.padEnd(16)} ${detail}`);
  }

  /** How many events of a kind were recorded. */
  count(kind: string): number {
    return this.events.filter((e) => e.kind === kind).length;
  }
}

/** Cuts the proxy's call log into phases. */
export class PhaseRecorder {
  readonly phases: ChaosPhase[] = [];
  private readonly calls: () => readonly CallRecord[];
  private readonly log: EventLog;
  private startMs = 0;
  private firstCall = 0;

  constructor(calls: () => readonly CallRecord[], log: EventLog) {
    this.calls = calls;
    this.log = log;
  }

  /** Starts the first phase now (calls before it, e.g. setup, are not counted). */
  begin(): void {
    this.startMs = this.log.now();
    this.firstCall = this.calls().length;
  }

  /** Ends the current phase (with the objects' states as last sampled) and starts the next. */
  end(name: string, crs: readonly CrState[]): void {
    const all = this.calls();
    const mine = all.slice(this.firstCall);
    const awsOutcomes = outcomeCounts(mine);
    const awsCalls: Record<string, number> = {};
    for (const c of mine) {
      const key = `${c.service}:${c.operation}`;
      awsCalls[key] = (awsCalls[key] ?? 0) + 1;
    }
    this.phases.push({
      name,
      startMs: this.startMs,
      endMs: this.log.now(),
      awsCalls,
      awsOutcomes,
      readyReasons: readyReasons(crs),
    });
    this.startMs = this.log.now();
    this.firstCall = all.length;
    this.log.add(
      'phase-end',
      `${name}: AWS calls ${Object.entries(awsOutcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  }
}
