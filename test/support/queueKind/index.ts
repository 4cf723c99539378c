// The Queue test kind: an SQS queue, served through the same KindModule
// contract as the product's kinds (src/kinds/<kind>/index.ts), but defined
// in test/ so the product never imports @aws-sdk/client-sqs.
import { SQSClient } from '@aws-sdk/client-sqs';
import type { ManagedObject } from '../../../src/apis/managed.ts';
import type { KindModule } from '../../../src/kinds/module.ts';
import { awsClientConfig } from '../../../dev/emulator.ts';
import { queueCrd, queueType } from './api.ts';
import { queueController } from './controller.ts';
import { parseQueueSettings, queueFlags } from './settings.ts';
import { traceQueue } from './trace.ts';

/**
 * The Queue kind talking to SQS at `endpoint` (the emulator; the operator's
 * own clients take theirs from AWS_ENDPOINT_URL, which this in-process test
 * leaves alone).
 */
export function queueKind(endpoint: string): KindModule {
  const sqsFor = (region: string): SQSClient => new SQSClient({ ...awsClientConfig(endpoint), region });
  const kind: KindModule = {
    type: queueType,
    names: ['queue', 'queues', 'tq', `${queueType.plural}.${queueType.group}`],
    traceShows: 'the SQS queue and its attributes',
    crd: queueCrd,
    flags: queueFlags,
    configure(values) {
      const settings = parseQueueSettings(values);
      return {
        module: kind,
        controller: (plumbing) => queueController(plumbing, sqsFor(plumbing.aws.region), settings),
        trace: traceQueue(sqsFor),
      };
    },
    devFlags: [],
    commands: [],
    summarize(obj: ManagedObject): string[] {
      const url = obj.status?.url;
      return [`  Queue          ${typeof url === 'string' ? url : '?'}   (Queue ${obj.metadata.name})`];
    },
  };
  return kind;
}
