// The Queue test kind: an SQS queue, served through the same KindModule contract as the product's
// kinds (src/kinds/<kind>/index.ts) and built by the same steps (docs/architecture.md, "Adding a
// kind"), but defined in test/ so the product never imports @aws-sdk/client-sqs. Importing it
// loads no SQS code: the adapter and the trace are imported on first use.
import type { KindModule } from '../../../src/kinds/module.ts';
import { queueCrd, queueFieldContract, queueType, type Queue } from './api.ts';
import { queueController } from './controller.ts';
import { queueAdmission, queueGuardrailSection } from './guardrails.ts';
import { parseQueueSettings, queueFlags } from './settings.ts';

/** The Queue kind as one KindModule value: plain data and pure functions, importing it starts nothing. */
export const queueKind: KindModule = {
  type: queueType,
  names: ['queue', 'queues', 'tq', `${queueType.plural}.${queueType.group}`],
  traceShows: 'the SQS queue and its attributes',
  crd: queueCrd,
  fieldContract: queueFieldContract,
  guardrails: queueGuardrailSection,
  admission: queueAdmission,
  flags: queueFlags,
  configure(values) {
    const settings = parseQueueSettings(values);
    return {
      module: queueKind,
      controller: (plumbing) => queueController(plumbing, settings),
      // Imported when a trace asks for it: trace.ts loads the SQS SDK.
      trace: async (obj, ctx) => (await import('./trace.ts')).traceQueue(obj, ctx),
    };
  },
  devFlags: [],
  commands: [],
  healthCheck: { lua: new URL('./health.lua', import.meta.url), constants: {} },
  summarize(obj: Queue): string[] {
    return [`  Queue          ${obj.status?.url ?? '?'}   (Queue ${obj.metadata.name})`];
  },
};
