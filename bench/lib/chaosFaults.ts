// AWS faults for a chaos run, injected at the counting proxy in bounded
// windows: throttling on a fixed share of calls, dropped connections, answers
// lost after AWS carried the call out, added latency, and 5xx bursts at
// random moments. Between windows AWS behaves.
import type { AwsFaultProxy, InstalledRule } from '../../dev/awsFaultProxy.ts';
import type { SeededRandom } from './chaosRandom.ts';

/** How hard a fault window hits. */
export interface FaultSettings {
  /** Share of all calls answered with a throttling error. */
  readonly throttle: number;
  /** Share of calls whose connection is closed before they reach AWS. */
  readonly drop: number;
  /** Share of calls that AWS carries out but whose answer is lost. */
  readonly dropResponse: number;
  /** The same, for writes (Create*, Delete*, Change*, Modify*, Register*, …): where a lost answer hurts. */
  readonly dropResponseOnWrites: number;
  /** Share of calls delayed by the window's latency. */
  readonly latency: number;
  /** Range of the window's added latency in ms. */
  readonly latencyMs: readonly [number, number];
  /** Range of the pause between two 5xx bursts in ms. */
  readonly burstEveryMs: readonly [number, number];
  /** Range of how many consecutive calls one burst fails. */
  readonly burstCalls: readonly [number, number];
}

/**
 * 30 % throttling, 2 % dropped connections, 3 % lost answers (20 % of the
 * writes that get past throttling), 15 % slowed calls, a 5xx burst every 2-6 s.
 */
export const defaultFaultSettings: FaultSettings = {
  throttle: 0.3,
  drop: 0.02,
  dropResponse: 0.03,
  dropResponseOnWrites: 0.2,
  latency: 0.15,
  latencyMs: [200, 1500],
  burstEveryMs: [2000, 6000],
  burstCalls: [3, 12],
};

/** One thing the fault injector did. */
export interface FaultEvent {
  readonly kind: 'faults-on' | 'faults-off' | '5xx-burst';
  readonly detail: string;
}

/** AWS operations that change something. */
const writeOperations = /^(Create|Delete|Change|Modify|Register|Deregister|Add|Remove|Set|Restore)/;

const burstTargets: readonly (string | undefined)[] = [undefined, 'route53', 'elasticloadbalancing', 'rds'];

/**
 * Turns fault windows on and off at a proxy. Fault parameters (latency, burst
 * times, sizes and services) are drawn from `rng`, so they replay with the
 * seed; which individual calls are hit depends on the proxy's own random
 * source and on timing.
 */
export class FaultInjector {
  private readonly proxy: AwsFaultProxy;
  private readonly rng: SeededRandom;
  private readonly settings: FaultSettings;
  private readonly onEvent: (e: FaultEvent) => void;
  private rules: InstalledRule[] = [];
  private burstTimer: NodeJS.Timeout | undefined;
  private active = false;
  private bursts = 0;

  constructor(
    proxy: AwsFaultProxy,
    rng: SeededRandom,
    onEvent: (e: FaultEvent) => void,
    settings: FaultSettings = defaultFaultSettings,
  ) {
    this.proxy = proxy;
    this.rng = rng;
    this.onEvent = onEvent;
    this.settings = settings;
  }

  /** How many 5xx bursts were started so far. */
  get burstCount(): number {
    return this.bursts;
  }

  /** Opens a fault window (no-op when one is open). */
  on(label: string): void {
    if (this.active) return;
    this.active = true;
    const s = this.settings;
    const latencyMs = this.rng.int(s.latencyMs[0], s.latencyMs[1]);
    // First match wins: throttling first, so its share is of all calls.
    this.rules = [
      this.proxy.inject({ fault: { kind: 'throttle' }, probability: s.throttle }),
      this.proxy.inject({
        operation: writeOperations,
        fault: { kind: 'dropResponse' },
        probability: s.dropResponseOnWrites,
      }),
      this.proxy.inject({ fault: { kind: 'dropResponse' }, probability: s.dropResponse }),
      this.proxy.inject({ fault: { kind: 'drop' }, probability: s.drop }),
      this.proxy.inject({ fault: { kind: 'latency', ms: latencyMs }, probability: s.latency }),
    ];
    this.onEvent({
      kind: 'faults-on',
      detail: `${label}: throttle ${s.throttle}, dropResponse ${s.dropResponse} (writes ${s.dropResponseOnWrites}), drop ${s.drop}, latency ${s.latency} × ${latencyMs} ms, 5xx bursts`,
    });
    this.scheduleBurst();
  }

  /** Closes the window: removes every rule and stops the bursts. Idempotent. */
  off(label: string): void {
    if (!this.active) return;
    this.active = false;
    if (this.burstTimer !== undefined) clearTimeout(this.burstTimer);
    this.burstTimer = undefined;
    for (const r of this.rules) r.remove();
    this.rules = [];
    this.onEvent({ kind: 'faults-off', detail: label });
  }

  private scheduleBurst(): void {
    const s = this.settings;
    this.burstTimer = setTimeout(
      () => {
        if (!this.active) return;
        const calls = this.rng.int(s.burstCalls[0], s.burstCalls[1]);
        const service = this.rng.pick(burstTargets);
        const status = this.rng.pick([500, 502, 503]);
        // Checked after the throttling rule: a burst fails the next N calls that are not throttled.
        this.rules.push(
          this.proxy.inject({
            ...(service !== undefined ? { service } : {}),
            fault: { kind: 'error', status },
            times: calls,
          }),
        );
        this.bursts++;
        this.onEvent({
          kind: '5xx-burst',
          detail: `next ${calls} ${service ?? 'AWS'} calls answer HTTP ${status}`,
        });
        this.scheduleBurst();
      },
      this.rng.int(s.burstEveryMs[0], s.burstEveryMs[1]),
    );
  }
}
