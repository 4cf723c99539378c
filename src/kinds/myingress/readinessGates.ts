// The target-health gates a MyIngress's look opens (readinessGate.ts): while a Pod of its namespace
// waits for the gate and one of this object's target groups routes to it, the look reads those
// target groups' health (DescribeTargetHealth, one call each), keeps what it read on a board shared
// with the namespace's other MyIngresses, and asks the engine to set the Pod's condition — True once
// the target is healthy in every target group of every MyIngress routing to it — polling again soon
// while any is still waiting.
import { DescribeTargetHealthCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { PodConditionWrite } from '../../runtime/adapter.ts';
import type { MyIngress } from './api.ts';
import type { ObservedTargetGroup } from './delta.ts';
import type { MyIngressAdapterDeps } from './deps.ts';
import { desiredTargetGroups } from './desired.ts';
import { elbv2Call } from './elbv2.ts';
import {
  gatePending,
  gateVerdict,
  gateWrite,
  type GateRoute,
  type PodLike,
  type TargetState,
} from './readinessGate.ts';
import type { TargetGroups } from './targetGroups.ts';

/** The IP of an `ip:port` target. Pure. */
function ipOf(target: string): string {
  return target.slice(0, target.lastIndexOf(':'));
}

/** What a look learnt about the gates: the conditions to write, and whether any Pod still waits. */
export interface GateLook {
  readonly writes: readonly PodConditionWrite[];
  /** A Pod routed by this object still waits for its gate: look again within gatePollMs. */
  readonly waiting: boolean;
}

const nothing: GateLook = { writes: [], waiting: false };

/**
 * The readiness gates of one adapter's objects. Reads AWS (DescribeTargetHealth) only for target
 * groups of the object that route to a Pod waiting for its gate; never writes AWS; returns the
 * Kubernetes writes for the engine to make. Throws typed errors when AWS cannot be asked.
 */
export class ReadinessGates {
  private readonly d: Pick<MyIngressAdapterDeps, 'elbv2' | 'gatedPods' | 'ingressesIn' | 'targetHealth'>;
  private readonly targetGroups: TargetGroups;

  constructor(
    deps: Pick<MyIngressAdapterDeps, 'elbv2' | 'gatedPods' | 'ingressesIn' | 'targetHealth'>,
    targetGroups: TargetGroups,
  ) {
    this.d = deps;
    this.targetGroups = targetGroups;
  }

  /**
   * The gate conditions that follow from the target health of `mr`'s target groups (as `observed`
   * found them, with the targets wanted): nothing when no Pod it routes to waits for its gate.
   */
  async look(mr: MyIngress, observed: readonly ObservedTargetGroup[]): Promise<GateLook> {
    const ns = mr.metadata.namespace ?? '';
    const waiting = new Map<string, PodLike>();
    for (const p of this.d.gatedPods(ns))
      if (gatePending(p) && p.status?.podIP !== undefined) waiting.set(p.status.podIP, p);
    if (waiting.size === 0) return nothing;
    const routed = new Map<string, PodLike>();
    for (const t of observed) {
      const arn = t.tg?.TargetGroupArn;
      const hits = (t.wanted ?? []).filter((x) => waiting.has(ipOf(x)));
      if (arn === undefined || hits.length === 0) continue;
      this.d.targetHealth.record(ns, mr.metadata.name, t.want.key, await this.health(arn));
      for (const x of hits) {
        const pod = waiting.get(ipOf(x));
        if (pod !== undefined) routed.set(ipOf(x), pod);
      }
    }
    if (routed.size === 0) return nothing;
    const writes: PodConditionWrite[] = [];
    let stillWaiting = false;
    for (const [ip, pod] of routed) {
      const verdict = gateVerdict(this.routesTo(ns, ip));
      if (verdict === undefined) continue;
      if (verdict.status !== 'True') stillWaiting = true;
      const w = gateWrite(pod, verdict);
      if (w !== undefined) writes.push(w);
    }
    return { writes, waiting: stillWaiting };
  }

  /**
   * Every backend of every MyIngress in `namespace` whose wanted targets include `ip`, with the
   * target's health as last read (undefined: not read yet, so the gate stays shut). From the
   * caches and the board; no call.
   */
  private routesTo(namespace: string, ip: string): GateRoute[] {
    const routes: GateRoute[] = [];
    for (const m of this.d.ingressesIn(namespace)) {
      if (m.metadata.deletionTimestamp !== undefined) continue;
      for (const want of desiredTargetGroups(m.spec, m.metadata.uid ?? '')) {
        for (const target of this.targetGroups.wantedTargets(m, want) ?? []) {
          if (ipOf(target) !== ip) continue;
          routes.push({
            ingress: m.metadata.name,
            backend: want.key,
            target,
            health: this.d.targetHealth.stateOf(namespace, m.metadata.name, want.key, target),
          });
        }
      }
    }
    return routes;
  }

  /** The targets of a target group and their health (DescribeTargetHealth). Read-only. */
  private async health(arn: string): Promise<Map<string, TargetState>> {
    const out = await elbv2Call('describe target health for readiness gates', () =>
      this.d.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn })),
    );
    const states = new Map<string, TargetState>();
    for (const d of out.TargetHealthDescriptions ?? []) {
      const target = `${d.Target?.Id ?? ''}:${d.Target?.Port ?? ''}`;
      states.set(target, {
        state: d.TargetHealth?.State ?? 'unknown',
        ...(d.TargetHealth?.Reason !== undefined ? { reason: d.TargetHealth.Reason } : {}),
        ...(d.TargetHealth?.Description !== undefined ? { description: d.TargetHealth.Description } : {}),
      });
    }
    return states;
  }
}
