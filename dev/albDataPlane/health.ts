// A target's health as an ALB measures it: the state machine over health check outcomes, the
// matcher of healthy HTTP codes, and a monitor that runs checks on an injected clock.
import type { Clock, TimerHandle } from '../../src/runtime/clock.ts';

/** The states DescribeTargetHealth reports that the data plane produces. */
export const targetStates = ['initial', 'healthy', 'unhealthy', 'draining'] as const;
/** One of {@link targetStates}. */
export type TargetState = (typeof targetStates)[number];

/** Reason codes of non-healthy states, as the ELBv2 API names them. */
export type HealthReason =
  | 'Elb.RegistrationInProgress'
  | 'Elb.InitialHealthChecking'
  | 'Target.ResponseCodeMismatch'
  | 'Target.Timeout'
  | 'Target.FailedHealthChecks'
  | 'Target.DeregistrationInProgress';

/** The result of one health check. */
export type CheckOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: 'Target.ResponseCodeMismatch' | 'Target.Timeout' | 'Target.FailedHealthChecks';
      readonly description: string;
    };

/** A target's health: the state and the run of equal outcomes that leads to the next one. */
export interface HealthRecord {
  readonly state: TargetState;
  readonly reason?: HealthReason;
  readonly description?: string;
  /** Consecutive passed checks (0 after a failure). */
  readonly passes: number;
  /** Consecutive failed checks (0 after a pass). */
  readonly failures: number;
}

/** The thresholds of a target group's health check. */
export interface Thresholds {
  /** HealthyThresholdCount: consecutive passes that bring an unhealthy target back. */
  readonly healthy: number;
  /** UnhealthyThresholdCount: consecutive failures that take a target out. */
  readonly unhealthy: number;
  /**
   * Passes that make a newly registered (`initial`) target healthy: 1 as AWS documents ("After
   * your target is registered, it must pass one health check to be considered healthy").
   */
  readonly initialPasses?: number;
}

/** A newly registered target, before its first check. */
export const registeredRecord: HealthRecord = {
  state: 'initial',
  reason: 'Elb.RegistrationInProgress',
  description: 'Target registration is in progress',
  passes: 0,
  failures: 0,
};

/**
 * The record after one more check. `initial` becomes `healthy` after `initialPasses` passes and
 * `unhealthy` after `unhealthy` failures; `healthy` becomes `unhealthy` after `unhealthy`
 * consecutive failures; `unhealthy` becomes `healthy` after `healthy` consecutive passes. A
 * `draining` target stays draining. Pure.
 */
export function afterCheck(rec: HealthRecord, outcome: CheckOutcome, t: Thresholds): HealthRecord {
  if (rec.state === 'draining') return rec;
  if (outcome.ok) {
    const passes = rec.passes + 1;
    const needed = rec.state === 'initial' ? (t.initialPasses ?? 1) : t.healthy;
    if (rec.state === 'healthy' || passes >= needed) return { state: 'healthy', passes, failures: 0 };
    if (rec.state === 'initial')
      return {
        state: 'initial',
        reason: 'Elb.InitialHealthChecking',
        description: 'Initial health checks in progress',
        passes,
        failures: 0,
      };
    return { ...rec, passes, failures: 0 };
  }
  const failures = rec.failures + 1;
  if (rec.state === 'unhealthy' || failures >= t.unhealthy)
    return {
      state: 'unhealthy',
      reason: outcome.reason,
      description: outcome.description,
      passes: 0,
      failures,
    };
  if (rec.state === 'initial')
    return {
      state: 'initial',
      reason: 'Elb.InitialHealthChecking',
      description: 'Initial health checks in progress',
      passes: 0,
      failures,
    };
  return { ...rec, passes: 0, failures };
}

/**
 * Whether an HTTP status is healthy under a target group's Matcher.HttpCode: comma-separated codes
 * and ranges, e.g. `200`, `200,202`, `200-299`. Pure.
 */
export function matcherAccepts(httpCode: string, status: number): boolean {
  return httpCode.split(',').some((part) => {
    const [lo, hi] = part.trim().split('-');
    const low = Number(lo);
    const high = hi === undefined ? low : Number(hi);
    return status >= low && status <= high;
  });
}

/** A target group's health check settings, times in milliseconds. */
export interface HealthCheckSettings extends Thresholds {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly path: string;
  /** `traffic-port` or a port number. */
  readonly port: string;
  /** Matcher.HttpCode. */
  readonly matcher: string;
  /** HTTP or HTTPS. */
  readonly protocol: string;
}

/** One health check: resolves with its outcome; never rejects. Cancelled through `signal` on timeout. */
export type Probe = (signal: AbortSignal) => Promise<CheckOutcome>;

/**
 * Runs a target's health checks every `intervalMs` on `clock`, the first at once: each check is
 * independent (a slow answer does not delay the next, as AWS documents), a check that has not
 * answered after `timeoutMs` fails with `Target.Timeout`, and at most one check is in flight (a
 * check due while one is running is skipped). `stop()` ends it; the record stays readable.
 */
export class HealthMonitor {
  private rec: HealthRecord = registeredRecord;
  private timer: TimerHandle | undefined;
  private running = false;
  private stopped = false;
  private settings: HealthCheckSettings;
  private readonly clock: Clock;
  private readonly probe: Probe;
  private readonly onChange: ((rec: HealthRecord) => void) | undefined;

  constructor(opts: {
    readonly clock: Clock;
    readonly settings: HealthCheckSettings;
    readonly probe: Probe;
    readonly onChange?: (rec: HealthRecord) => void;
  }) {
    this.clock = opts.clock;
    this.settings = opts.settings;
    this.probe = opts.probe;
    this.onChange = opts.onChange;
  }

  /** The current record. */
  get record(): HealthRecord {
    return this.rec;
  }

  /** Starts checking (idempotent). */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.tick();
  }

  /** New settings apply from the next check on; the record is kept. */
  update(settings: HealthCheckSettings): void {
    this.settings = settings;
  }

  /** Marks the target draining and stops checking it. */
  drain(): void {
    this.stop();
    this.set({
      state: 'draining',
      reason: 'Target.DeregistrationInProgress',
      description: 'Target deregistration is in progress',
      passes: 0,
      failures: 0,
    });
  }

  /** Stops checking. Idempotent. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private set(rec: HealthRecord): void {
    const changed = rec.state !== this.rec.state || rec.reason !== this.rec.reason;
    this.rec = rec;
    if (changed) this.onChange?.(rec);
  }

  private tick(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(this.settings.intervalMs, () => {
      this.tick();
    });
    if (this.running) return;
    this.running = true;
    void this.check().finally(() => {
      this.running = false;
    });
  }

  private async check(): Promise<void> {
    const ac = new AbortController();
    let timer: TimerHandle | undefined;
    const timedOut = new Promise<CheckOutcome>((resolveTimeout) => {
      timer = this.clock.setTimer(this.settings.timeoutMs, () => {
        // Settle first, then cancel the probe: its own answer to the abort must not win the race.
        resolveTimeout({
          ok: false,
          reason: 'Target.Timeout',
          description: 'Request timed out',
        });
        ac.abort();
      });
    });
    const outcome = await Promise.race([this.probe(ac.signal), timedOut]);
    timer?.cancel();
    if (this.stopped) return;
    this.set(afterCheck(this.rec, outcome, this.settings));
  }
}
