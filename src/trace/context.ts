// What every collector gets to look things up with.
import type { AwsClients } from '../providers/aws/clients.ts';
import type { KubeClient } from '../runtime/kube/client.ts';
import type { ManagedObject } from '../apis/managed.ts';
import type { TraceNode } from './tree.ts';

/** Read-only access to the cluster and to AWS, and the time the trace is taken at. */
export interface TraceContext {
  readonly kube: KubeClient;
  readonly aws: AwsClients;
  /** Milliseconds since the epoch, for ages. */
  readonly now: number;
}

/**
 * Builds the AWS side of one kind's trace from the resource's status and
 * live, read-only describe calls. Never throws for AWS or Kubernetes
 * errors: they become Error nodes.
 */
export type Collector = (obj: ManagedObject, ctx: TraceContext) => Promise<TraceNode[]>;
