// Runs any kind's controller in the test process, wired like `skylift run`
// but talking to AWS at a given endpoint (the fault proxy).
import { pino } from 'pino';
import { parseRunOptions } from '../../src/cli/options.ts';
import type { SharedPlumbing } from '../../src/operator.ts';
import { createAwsClients } from '../../src/providers/aws/clients.ts';
import { realClock } from '../../src/runtime/clock.ts';
import type { Controller } from '../../src/runtime/controller.ts';
import { EventRecorder } from '../../src/runtime/events.ts';
import type { ManagedObject } from '../../src/runtime/managed.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { kubeClient } from './kube.ts';

export interface RunningController {
  readonly controller: Controller<ManagedObject>;
  readonly metrics: Metrics;
  stop(): Promise<void>;
}

export async function startController(
  factory: (s: SharedPlumbing) => Controller<ManagedObject>,
  opts: { namespace: string; endpoint: string; resyncPeriod?: string },
): Promise<RunningController> {
  const options = parseRunOptions(
    [
      '--namespaces',
      opts.namespace,
      '--resync-period',
      opts.resyncPeriod ?? '10m',
      '--cluster-id',
      'test-cluster',
    ],
    {
      AWS_REGION: 'us-east-1',
    },
  );
  const client = kubeClient();
  const metrics = new Metrics();
  const logger = pino({ level: process.env.SKYLIFT_TEST_LOG_LEVEL ?? 'silent' });
  const events = new EventRecorder({
    client,
    clock: realClock,
    logger,
    controller: 'skylift.dev/test',
    instance: 'test',
  });
  const aws = createAwsClients({
    region: 'us-east-1',
    clock: realClock,
    metrics,
    endpoint: opts.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const controller = factory({ options, client, clock: realClock, logger, metrics, events, aws });
  await controller.start();
  return {
    controller,
    metrics,
    stop: async () => {
      await controller.stop(5000);
      aws.destroy();
    },
  };
}
