import { managedDbType, type ManagedDB } from '../../apis/manageddb.ts';
import { Controller } from '../../runtime/controller.ts';
import type { ManagedObject } from '../../runtime/managed.ts';
import { controllerSettings, type SharedPlumbing } from '../../operator.ts';
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
    ...controllerSettings(s),
    pollMs: opts.pollMs ?? 15_000,
  });
  return controller as unknown as Controller<ManagedObject>;
}
