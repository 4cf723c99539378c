import {
  DescribeLoadBalancersCommand,
  type ElasticLoadBalancingV2Client,
  type LoadBalancer,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import type { Clock } from '../../runtime/clock.ts';
import { toTypedAwsError } from '../aws/errors.ts';
import { elbv2ErrorTable, isElbv2NotFound } from './errors.ts';

interface Waiter {
  resolve(lb: LoadBalancer | undefined): void;
  reject(err: unknown): void;
}

/**
 * Coalesces DescribeLoadBalancers by ARN: lookups within a short window go
 * out together, up to 20 ARNs per call (the API's limit), so many
 * MyIngresses resyncing together cost a few calls, not one each. An ARN that
 * no longer exists resolves `undefined` (the call is retried ARN by ARN when
 * AWS answers "not found" for the whole batch).
 */
export class LoadBalancerDescriber {
  private readonly elbv2: ElasticLoadBalancingV2Client;
  private readonly clock: Clock;
  private readonly windowMs: number;
  private pending = new Map<string, Waiter[]>();
  private scheduled = false;

  constructor(elbv2: ElasticLoadBalancingV2Client, clock: Clock, windowMs = 20) {
    this.elbv2 = elbv2;
    this.clock = clock;
    this.windowMs = windowMs;
  }

  /** The load balancer with this ARN, or undefined when it does not exist. */
  describe(arn: string): Promise<LoadBalancer | undefined> {
    return new Promise((resolve, reject) => {
      const list = this.pending.get(arn) ?? [];
      list.push({ resolve, reject });
      this.pending.set(arn, list);
      if (!this.scheduled) {
        this.scheduled = true;
        this.clock.setTimer(this.windowMs, () => {
          this.scheduled = false;
          void this.flush();
        });
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    const arns = [...batch.keys()];
    for (let i = 0; i < arns.length; i += 20) {
      const chunk = arns.slice(i, i + 20);
      await this.describeChunk(chunk, batch);
    }
  }

  private async describeChunk(chunk: string[], batch: Map<string, Waiter[]>): Promise<void> {
    try {
      const out = await this.elbv2.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: chunk }));
      const found = new Map((out.LoadBalancers ?? []).map((lb) => [lb.LoadBalancerArn ?? '', lb]));
      for (const arn of chunk) for (const w of batch.get(arn) ?? []) w.resolve(found.get(arn));
    } catch (err) {
      if (isElbv2NotFound(err) && chunk.length > 1) {
        // One missing ARN fails the whole call: ask for each on its own.
        for (const arn of chunk) await this.describeChunk([arn], batch);
        return;
      }
      for (const arn of chunk) {
        for (const w of batch.get(arn) ?? []) {
          if (isElbv2NotFound(err)) w.resolve(undefined);
          else w.reject(toTypedAwsError('describe load balancers', err, elbv2ErrorTable));
        }
      }
    }
  }
}
