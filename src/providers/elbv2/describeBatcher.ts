import {
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  type ElasticLoadBalancingV2Client,
  type LoadBalancer,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import type { Clock } from '../../runtime/clock.ts';
import { CoalescingLookup } from '../aws/coalescingLookup.ts';
import { clientOf, type ClientSource } from '../aws/readers.ts';
import { toTypedAwsError } from '../aws/errors.ts';
import { elbv2ErrorTable, isElbv2NotFound } from './errors.ts';

/** ARNs DescribeLoadBalancers and DescribeTags accept per call. */
const arnsPerCall = 20;

/** A lookup by ARN over one ELBv2 describe call, with ELBv2's not-found codes and error table. */
function elbv2Lookup<V>(
  what: string,
  clock: Clock,
  windowMs: number,
  fetch: (arns: readonly string[]) => Promise<ReadonlyMap<string, V>>,
): CoalescingLookup<V> {
  return new CoalescingLookup({
    clock,
    windowMs,
    maxPerCall: arnsPerCall,
    fetch,
    isNotFound: isElbv2NotFound,
    toError: (err) => toTypedAwsError(what, err, elbv2ErrorTable),
  });
}

/**
 * Coalesces DescribeLoadBalancers by ARN: lookups within a short window go
 * out together, up to 20 ARNs per call (the API's limit). An ARN that no
 * longer exists resolves `undefined` without failing the others. Read-only.
 */
export class LoadBalancerDescriber {
  private readonly lookup: CoalescingLookup<LoadBalancer>;

  constructor(elbv2: ClientSource<ElasticLoadBalancingV2Client>, clock: Clock, windowMs = 20) {
    this.lookup = elbv2Lookup('describe load balancers', clock, windowMs, async (arns) => {
      const out = await clientOf(elbv2).send(
        new DescribeLoadBalancersCommand({ LoadBalancerArns: [...arns] }),
      );
      return new Map((out.LoadBalancers ?? []).map((lb) => [lb.LoadBalancerArn ?? '', lb]));
    });
  }

  /** The load balancer with this ARN, or undefined when it does not exist. */
  describe(arn: string): Promise<LoadBalancer | undefined> {
    return this.lookup.get(arn);
  }
}

/**
 * Coalesces DescribeTags by ARN (load balancers and target groups alike), up
 * to 20 ARNs per call: a resync of many MyIngresses asks for their ownership
 * tags in a few calls. A resource that does not exist resolves `undefined`.
 * Read-only.
 */
export class TagDescriber {
  private readonly lookup: CoalescingLookup<Record<string, string>>;

  constructor(elbv2: ClientSource<ElasticLoadBalancingV2Client>, clock: Clock, windowMs = 20) {
    this.lookup = elbv2Lookup('describe tags', clock, windowMs, async (arns) => {
      const out = await clientOf(elbv2).send(new DescribeTagsCommand({ ResourceArns: [...arns] }));
      return new Map(
        (out.TagDescriptions ?? []).map((t) => [
          t.ResourceArn ?? '',
          Object.fromEntries((t.Tags ?? []).map((x) => [x.Key ?? '', x.Value ?? ''])),
        ]),
      );
    });
  }

  /** The resource's tags by key, or undefined when it does not exist. */
  tags(arn: string): Promise<Record<string, string> | undefined> {
    return this.lookup.get(arn);
  }
}
