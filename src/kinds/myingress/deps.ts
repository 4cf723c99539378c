// What the parts of the MyIngress adapter are given: the clients and caches
// they are built with, and, during one update, the object and load balancer
// in hand.
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { ElasticLoadBalancingV2Client, LoadBalancer } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { WAFV2Client } from '@aws-sdk/client-wafv2';
import type { LoadBalancerDescriber, TagDescriber } from '../../providers/elbv2/describeBatcher.ts';
import type { TaggedResources } from '../../providers/aws/taggedResources.ts';
import type { ReconcileContext } from '../../runtime/adapter.ts';
import type { MyIngress } from './api.ts';
import type { AppliedChildren } from './applied.ts';
import type { PodLike } from './readinessGate.ts';
import type { BackendEndpointSlice, BackendService } from './references.ts';
import type { TargetHealthBoard } from './targetHealthBoard.ts';
import type { HostCertificates } from './acm.ts';

/** What the MyIngress adapter needs. */
export interface MyIngressAdapterDeps {
  readonly elbv2: ElasticLoadBalancingV2Client;
  /** The same service without SDK retries, for creates (see AwsClients.elbv2Create). */
  readonly elbv2Create: ElasticLoadBalancingV2Client;
  /** EC2 for subnet lookups by tag (spec.subnetSelector), made on first call: see AwsClients.ec2. */
  readonly ec2: () => Promise<EC2Client>;
  /** WAFv2 for spec.waf, made on first call (webAcl.ts): a process without web ACLs never loads its SDK. */
  readonly wafv2: () => Promise<WAFV2Client>;
  readonly describer: LoadBalancerDescriber;
  readonly tagDescriber: TagDescriber;
  /**
   * Resources by tag (the Tagging API, its SDK loaded by the first lookup): the target groups a
   * full look or a deletion finds by ownership tag (targetGroups.ts).
   */
  readonly taggedResources: TaggedResources;
  /** Cached Service by namespace and name. */
  readonly service: (namespace: string, name: string) => BackendService | undefined;
  /** Cached EndpointSlices the EndpointSlice controller manages for a Service (see isServiceEndpointSlice). */
  readonly endpointSlices: (namespace: string, service: string) => BackendEndpointSlice[];
  /**
   * True once the Service and EndpointSlice caches have listed: before that,
   * a Service or endpoint missing from them may well exist.
   */
  readonly backendCachesSynced: () => boolean;
  /**
   * A cached Pod carrying the target-health gate's label, by namespace and name (readinessGate.ts);
   * undefined for any other Pod.
   */
  readonly gatedPod: (namespace: string, name: string) => PodLike | undefined;
  /** The cached Pods carrying the target-health gate's label in a namespace. */
  readonly gatedPods: (namespace: string) => readonly PodLike[];
  /** The cached MyIngresses of a namespace (the target groups routing to a gated Pod may be any of theirs). */
  readonly ingressesIn: (namespace: string) => readonly MyIngress[];
  /** What the readiness gates of this controller last read of target health, shared by all its adapters. */
  readonly targetHealth: TargetHealthBoard;
  /** How often the target health of Pods waiting for the gate is read (one DescribeTargetHealth per target group). */
  readonly gatePollMs: number;
  /** First interval between looks at a load balancer that is not Ready yet (longer waits are polled less often). */
  readonly pollMs: number;
  /** The ACM certificates of the load balancer's account and region by host (spec.listeners[].certificateHosts). */
  readonly certificates: HostCertificates;
  /** Longest time between two full looks at a load balancer's children (0: every look is full); see memory.ts. */
  readonly fullCheckMs: number;
}

/**
 * The reconcile context of a load balancer's update, and, for a shared one (a MyIngressGroup's),
 * the extra tags of each child it creates: a rule (`<port>/<priority>`) or target group
 * (`<service>:<port>`) is attributed to the member it is made for (sharedResource.ts). Pure.
 */
export interface IngressContext extends ReconcileContext {
  readonly childTags?: (child: string) => Readonly<Record<string, string>>;
}

/** The tags a child gets beside its owner's (`childTags`; none for a MyIngress's own). Pure. */
export function childTagList(ctx: IngressContext, child: string): { Key: string; Value: string }[] {
  return Object.entries(ctx.childTags?.(child) ?? {}).map(([Key, Value]) => ({ Key, Value }));
}

/** One update of a live load balancer, handed to each of its steps. */
export interface IngressUpdate {
  readonly mr: MyIngress;
  readonly ctx: IngressContext;
  /** The load balancer as observe found it. */
  readonly lb: LoadBalancer;
  /** Its ARN ('' if AWS gave none). */
  readonly arn: string;
  /** What was changed so far, in order, for the update's description: each step appends. */
  readonly done: string[];
  /** The children as the update leaves them: each step reports what AWS accepted. */
  readonly applied: AppliedChildren;
}
