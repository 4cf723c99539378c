// Builds a Gadget controller (the test kind) from shared plumbing.
import { sharedClient } from '../../src/runtime/adapter.ts';
import { pino, type Logger } from 'pino';
import { realClock, type Clock } from '../../src/runtime/clock.ts';
import { Controller, type SecondaryWatch } from '../../src/runtime/controller.ts';
import { EventRecorder } from '../../src/runtime/events.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { type FakeCloud, GadgetAdapter, gadgetType, type Gadget } from './gadget.ts';

/** Options for {@link gadgetController}. */
export interface GadgetControllerOptions {
  readonly client: KubeClient;
  readonly cloud: FakeCloud;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly namespaces?: readonly string[];
  readonly labelSelector?: string;
  readonly watchdogMs?: number;
  readonly watches?: readonly SecondaryWatch[];
  readonly resyncPeriodMs?: number;
  /** The adapter (default a GadgetAdapter over `cloud`), e.g. one that records what it saw. */
  readonly adapter?: GadgetAdapter;
}

export function gadgetController(o: GadgetControllerOptions): {
  controller: Controller<Gadget>;
  metrics: Metrics;
} {
  const metrics = o.metrics ?? new Metrics();
  const logger = o.logger ?? pino({ level: 'silent' });
  const clock = o.clock ?? realClock;
  const events = new EventRecorder({
    client: o.client,
    clock,
    logger,
    controller: 'skylift.dev/test',
    instance: 'test',
  });
  const controller = new Controller<Gadget>({
    type: gadgetType,
    connector: sharedClient(o.adapter ?? new GadgetAdapter(o.cloud)),
    client: o.client,
    clock,
    logger,
    metrics,
    events,
    clusterId: 'test-cluster',
    workers: 2,
    pollMs: 200,
    resyncPeriodMs: o.resyncPeriodMs ?? 60_000,
    createGraceMs: 5000,
    ...(o.namespaces !== undefined ? { namespaces: o.namespaces } : {}),
    ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
    ...(o.watchdogMs !== undefined ? { watchdogMs: o.watchdogMs } : {}),
    ...(o.watches !== undefined ? { watches: o.watches } : {}),
  });
  return { controller, metrics };
}

/** The value of a counter with the given labels (0 when never incremented). */
export async function counterValue(
  metric: { get(): Promise<{ values: { labels: Record<string, string | number>; value: number }[] }> },
  labels: Record<string, string>,
): Promise<number> {
  const values = (await metric.get()).values.filter((v) =>
    Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want),
  );
  return values.reduce((sum, v) => sum + v.value, 0);
}
