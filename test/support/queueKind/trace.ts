// Queue → the SQS queue recorded in status, read live for `skylift trace`. Imported by index.ts
// with `import()` when a trace asks for it (this file loads the SQS SDK).
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { ManagedObject } from '../../../src/apis/managed.ts';
import type { Queue } from './api.ts';
import type { Collector, TraceContext } from '../../../src/trace/context.ts';
import { describeSafely, node } from '../../../src/trace/tree.ts';
import { isQueueAbsent } from './adapter.ts';

/**
 * The Queue collector: the queue recorded in status, described live. TraceContext.aws has only
 * the product's clients, so the kind makes its own SQS client from their configuration (region,
 * endpoint, credentials) per trace and destroys it after.
 */
export const traceQueue: Collector = async (obj: ManagedObject, ctx: TraceContext) => {
  const url = (obj as Queue).status?.url;
  if (url === undefined)
    return [node('SQSQueue', '-', 'NotCreated', false, ['no queue recorded in status yet'])];
  const sqs = new SQSClient(ctx.aws.config);
  try {
    return [
      await describeSafely(
        'SQSQueue',
        url,
        async () => {
          const out = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: ['QueueArn', 'VisibilityTimeout'],
            }),
          );
          const a = out.Attributes ?? {};
          return node('SQSQueue', url, 'exists', true, [
            `arn=${a.QueueArn ?? '?'}`,
            `visibilityTimeout=${a.VisibilityTimeout ?? '?'}s`,
          ]);
        },
        isQueueAbsent,
      ),
    ];
  } finally {
    sqs.destroy();
  }
};
