import { managedDbType, type ManagedDB } from './api.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import { controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import { ManagedDBAdapter } from './adapter.ts';
import { defaultManagedDBSettings, type ManagedDBSettings } from './settings.ts';

/** The ManagedDB controller. */
export function managedDbController(
  s: KindPlumbing,
  settings: ManagedDBSettings = defaultManagedDBSettings,
  opts: { now?: () => number } = {},
): RunnableController {
  const controller = new Controller<ManagedDB>({
    type: managedDbType,
    adapter: new ManagedDBAdapter({
      rds: s.aws.rds,
      kube: s.client,
      events: s.events,
      pollMs: settings.pollMs,
      ...(opts.now !== undefined ? { now: opts.now } : {}),
    }),
    ...controllerOptions(s),
    pollMs: settings.pollMs,
  });
  return controller;
}
