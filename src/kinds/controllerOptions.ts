import type { KindPlumbing } from './module.ts';

/**
 * The controller options every kind takes from the plumbing: client, clock,
 * logger, metrics, events and the controller settings. Pure.
 */
export function controllerOptions(p: KindPlumbing) {
  return {
    client: p.client,
    clock: p.clock,
    logger: p.logger,
    metrics: p.metrics,
    events: p.events,
    ...p.settings,
  } as const;
}
