// The Queue controller: the engine's Controller with Queue's adapter, wired
// from the plumbing like every product kind's. The kind brings its own SQS
// client; the plumbing adopts it (rate limit, metrics, tracing, shutdown).
import type { SQSClient } from '@aws-sdk/client-sqs';
import { controllerOptions } from '../../../src/kinds/controllerOptions.ts';
import type { KindPlumbing } from '../../../src/kinds/module.ts';
import { sharedClient } from '../../../src/runtime/adapter.ts';
import { Controller, type RunnableController } from '../../../src/runtime/controller.ts';
import { QueueAdapter, type QueueDetails, type QueueField } from './adapter.ts';
import { queueType, type Queue } from './api.ts';
import { defaultQueueSettings, type QueueSettings } from './settings.ts';

/** The Queue controller; `sqs` is adopted by the plumbing's AWS clients (and destroyed with them). */
export function queueController(
  p: KindPlumbing,
  sqs: SQSClient,
  settings: QueueSettings = defaultQueueSettings,
): RunnableController {
  return new Controller<Queue, QueueDetails, QueueField>({
    type: queueType,
    connector: sharedClient(new QueueAdapter(p.aws.adopt('sqs', sqs))),
    ...controllerOptions(p),
    pollMs: settings.pollMs,
  });
}
