// The Queue controller: the engine's Controller with Queue's connector, wired from the plumbing
// like every product kind's (src/kinds/<kind>/controller.ts). The tenancy connector picks each
// object's TeamPolicy, its AWS identity and region, and checks the queue guardrails before any
// AWS change; the adapter for a set of AWS clients comes from adapterFor.ts, imported when the
// first object served by that set connects.
import { accountsOf, controllerOptions } from '../../../src/kinds/controllerOptions.ts';
import type { KindPlumbing } from '../../../src/kinds/module.ts';
import { Controller, type RunnableController } from '../../../src/runtime/controller.ts';
import { tenantConnector } from '../../../src/tenancy/connector.ts';
import type { QueueDetails, QueueField } from './adapter.ts';
import { queueType, type Queue } from './api.ts';
import { checkQueue } from './guardrails.ts';
import { defaultQueueSettings, type QueueSettings } from './settings.ts';

/** The Queue controller; nothing runs until the manager starts it, and no SQS code is loaded before its first object. */
export function queueController(
  p: KindPlumbing,
  settings: QueueSettings = defaultQueueSettings,
): RunnableController {
  return new Controller<Queue, QueueDetails, QueueField>({
    type: queueType,
    connector: tenantConnector({
      tenants: p.tenants,
      accounts: accountsOf(p),
      adapterFor: async (aws) => (await import('./adapterFor.ts')).queueAdapterFor(aws),
      guard: (mr, g) => {
        checkQueue(g.policy, mr.spec);
        return Promise.resolve();
      },
    }),
    ...controllerOptions(p),
    pollMs: settings.pollMs,
  });
}
