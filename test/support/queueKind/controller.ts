// The Queue controller: the engine's Controller with Queue's adapter, wired
// from the plumbing like every product kind's. KindPlumbing.aws holds only
// the product's clients, so the kind brings its own SQS client and closes it
// when the controller stops.
import type { SQSClient } from '@aws-sdk/client-sqs';
import { controllerOptions } from '../../../src/kinds/controllerOptions.ts';
import type { KindPlumbing } from '../../../src/kinds/module.ts';
import { sharedClient } from '../../../src/runtime/adapter.ts';
import { Controller, type RunnableController } from '../../../src/runtime/controller.ts';
import { QueueAdapter, type QueueDetails, type QueueField } from './adapter.ts';
import { queueType, type Queue } from './api.ts';
import { defaultQueueSettings, type QueueSettings } from './settings.ts';

/** The Queue controller; stopping it also destroys `sqs`. */
export function queueController(
  p: KindPlumbing,
  sqs: SQSClient,
  settings: QueueSettings = defaultQueueSettings,
): RunnableController {
  const controller = new Controller<Queue, QueueDetails, QueueField>({
    type: queueType,
    connector: sharedClient(new QueueAdapter(sqs)),
    ...controllerOptions(p),
    pollMs: settings.pollMs,
  });
  return {
    type: controller.type,
    get synced() {
      return controller.synced;
    },
    start: () => controller.start(),
    stop: async (deadlineMs) => {
      try {
        await controller.stop(deadlineMs);
      } finally {
        sqs.destroy();
      }
    },
  };
}
