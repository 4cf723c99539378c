// What the target-health readiness gates last read of target health (readinessGates.ts), shared by
// a MyIngress controller's adapters: a Pod's gate opens only once every MyIngress routing to it has
// seen its target healthy. Free of the ELBv2 SDK: the controller makes it at start.
import type { TargetState } from './readinessGate.ts';

/**
 * What was last read of target health, per MyIngress backend: `namespace/ingress/service:port` →
 * target (`ip:port`) → its state. In memory, per controller; a backend's entry is replaced whole
 * at each read, an object's entries dropped when it goes. Not shared between replicas: a new
 * leader reads again.
 */
export class TargetHealthBoard {
  private readonly entries = new Map<string, ReadonlyMap<string, TargetState>>();

  /** Records what a read of one backend's target group found (replacing the previous read). */
  record(
    namespace: string,
    ingress: string,
    backend: string,
    states: ReadonlyMap<string, TargetState>,
  ): void {
    this.entries.set(boardKey(namespace, ingress, backend), states);
  }

  /** A target's last read state in one backend of one MyIngress, or undefined when not read. */
  stateOf(namespace: string, ingress: string, backend: string, target: string): TargetState | undefined {
    return this.entries.get(boardKey(namespace, ingress, backend))?.get(target);
  }

  /** Drops what was read for a MyIngress (it is deleted or forgotten). */
  forget(namespace: string, ingress: string): void {
    const prefix = `${namespace}/${ingress}/`;
    for (const k of [...this.entries.keys()]) if (k.startsWith(prefix)) this.entries.delete(k);
  }

  /** How many backends have a read recorded. */
  get size(): number {
    return this.entries.size;
  }
}

function boardKey(namespace: string, ingress: string, backend: string): string {
  return `${namespace}/${ingress}/${backend}`;
}
