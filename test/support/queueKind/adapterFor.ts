// The Queue adapter for one set of AWS clients. Loaded with `import()` at the kind's first object
// (controller.ts), so the SQS SDK, which this file and adapter.ts import, is loaded only by a
// process that serves a Queue. Mirrors src/kinds/<kind>/adapterFor.ts.
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../../../src/providers/aws/clients.ts';
import type { ExternalClient } from '../../../src/runtime/adapter.ts';
import { QueueAdapter, type QueueDetails, type QueueField } from './adapter.ts';
import type { Queue } from './api.ts';

/**
 * The adapter for `aws` (the operator's own clients, or a TeamPolicy's role and region): its SQS
 * client is built from `aws.config` and adopted by `aws` (rate limit, call metrics labelled with
 * the account, tracing; destroyed with the set). Starts nothing and calls nothing.
 */
export function queueAdapterFor(aws: AwsClients): ExternalClient<Queue, QueueDetails, QueueField> {
  return new QueueAdapter(aws.adopt('sqs', new SQSClient(aws.config)));
}
