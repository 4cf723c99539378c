import { managedDbType, type ManagedDB } from '../../apis/manageddb.ts';
import { Controller } from '../../runtime/controller.ts';
import type { ManagedObject } from '../../runtime/managed.ts';
import type { SharedPlumbing } from '../../operator.ts';
import { ManagedDBAdapter } from './adapter.ts';

/** The ManagedDB controller. */
export function managedDbController(
  s: SharedPlumbing,
  opts: { pollMs?: number; now?: () => number } = {},
): Controller<ManagedObject> {
  const controller = new Controller<ManagedDB>({
    type: managedDbType,
    adapter: new ManagedDBAdapter({
      rds: s.aws.rds,
      kube: s.client,
      events: s.events,
      ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
      ...(opts.now !== undefined ? { now: opts.now } : {}),
    }),
    client: s.client,
    clock: s.clock,
    logger: s.logger,
    metrics: s.metrics,
    events: s.events,
    clusterId: s.options.clusterId,
    namespaces: s.options.namespaces,
    labelSelector: s.options.labelSelector,
    workers: s.options.workers,
    resyncPeriodMs: s.options.resyncPeriodMs,
    pollMs: opts.pollMs ?? 15_000,
  });
  return controller as unknown as Controller<ManagedObject>;
}
