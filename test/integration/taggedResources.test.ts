// Resources found by tag (src/providers/aws/taggedResources.ts) against moto through the fault
// proxy: ELBv2 target groups by their tags, page after page; counted as the Tagging API's calls of
// the set of clients; throttling retried by the SDK then a retryable error, a refusal terminal.
import { randomBytes } from 'node:crypto';
import { CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateTargetGroupCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { createAwsClients, type AwsClients } from '../../src/providers/aws/clients.ts';
import { AwsRetryableError, AwsTerminalError } from '../../src/providers/aws/errors.ts';
import { taggedResourcesOf } from '../../src/providers/aws/taggedResources.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { counterValue } from '../support/gadgetController.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

let proxy: AwsFaultProxy;
let elb: ElasticLoadBalancingV2Client;
let vpcId: string;

beforeAll(async () => {
  proxy = await startFaultProxy();
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  elb = new ElasticLoadBalancingV2Client(direct);
  const vpc = await new EC2Client(direct).send(new CreateVpcCommand({ CidrBlock: '10.41.0.0/16' }));
  vpcId = vpc.Vpc?.VpcId ?? '';
});
afterAll(async () => {
  await proxy.stop();
});

/** A target group with these tags in the emulator; its ARN. */
async function targetGroup(tags: Record<string, string>): Promise<string> {
  const out = await elb.send(
    new CreateTargetGroupCommand({
      Name: `tagged-${randomBytes(4).toString('hex')}`,
      Protocol: 'HTTP',
      Port: 80,
      VpcId: vpcId,
      TargetType: 'ip',
      Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
    }),
  );
  return out.TargetGroups?.[0]?.TargetGroupArn ?? '';
}

function clients(metrics: Metrics): AwsClients {
  return createAwsClients({
    region: 'us-east-1',
    clock: realClock,
    metrics,
    endpoint: proxy.endpoint,
    maxAttempts: 2,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
}

const targetGroups = 'elasticloadbalancing:targetgroup';

describe('resources found by tag (GetResources)', () => {
  it('finds the target groups carrying every tag asked, page after page, counted as the Tagging API’s calls', async () => {
    const uid = `uid-${randomBytes(4).toString('hex')}`;
    const ours = await Promise.all(
      [1, 2, 3].map((i) => targetGroup({ 'skylift.dev/uid': uid, 'skylift.dev/cluster': 'c', n: String(i) })),
    );
    await targetGroup({ 'skylift.dev/uid': `${uid}-other`, 'skylift.dev/cluster': 'c' });
    await targetGroup({ 'skylift.dev/uid': uid, 'skylift.dev/cluster': 'another' });
    const metrics = new Metrics();
    const aws = clients(metrics);
    try {
      proxy.resetCalls();
      // One resource a page: four pages for three resources (the last one answers no token).
      const paged = taggedResourcesOf(aws, 1);
      const found = await paged.find('find target groups by tag', {
        resourceTypes: [targetGroups],
        tags: { 'skylift.dev/uid': uid, 'skylift.dev/cluster': 'c' },
      });
      expect(found.map((r) => r.arn).sort()).toEqual([...ours].sort());
      expect(found.find((r) => r.arn === ours[0])?.tags).toEqual({
        'skylift.dev/uid': uid,
        'skylift.dev/cluster': 'c',
        n: '1',
      });
      const pages = proxy.count({ service: 'tagging', operation: 'GetResources' });
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(
        await counterValue(metrics.awsCalls, {
          service: 'tagging',
          operation: 'GetResources',
          outcome: 'success',
        }),
      ).toBe(pages);

      // Filters are ANDed: without the cluster tag, the other cluster's one too; 100 a page by default.
      proxy.resetCalls();
      const one = await taggedResourcesOf(aws).find('find target groups by tag', {
        resourceTypes: [targetGroups],
        tags: { 'skylift.dev/uid': uid },
      });
      expect(one).toHaveLength(4);
      expect(proxy.count({ service: 'tagging', operation: 'GetResources' })).toBe(1);
    } finally {
      aws.destroy();
    }
  });

  it('is retried by the SDK when throttled, then fails retryable (Throttled); a refusal is terminal', async () => {
    const aws = clients(new Metrics());
    const tagged = taggedResourcesOf(aws);
    const q = { resourceTypes: [targetGroups], tags: { 'skylift.dev/uid': 'nobody' } };
    try {
      proxy.resetCalls();
      const once = proxy.inject({
        service: 'tagging',
        operation: 'GetResources',
        fault: { kind: 'throttle' },
        times: 1,
      });
      expect(await tagged.find('find target groups by tag', q)).toEqual([]);
      expect(once.hits).toBe(1);

      proxy.inject({ service: 'tagging', operation: 'GetResources', fault: { kind: 'throttle' }, times: 2 });
      const throttled = await tagged.find('find target groups by tag', q).catch((e: unknown) => e);
      expect(throttled).toBeInstanceOf(AwsRetryableError);
      expect(throttled).toMatchObject({ reason: 'Throttled' });
      expect(String(throttled)).toContain('find target groups by tag');

      proxy.inject({
        service: 'tagging',
        operation: 'GetResources',
        fault: { kind: 'error', status: 400, code: 'AccessDeniedException' },
        times: 1,
      });
      await expect(tagged.find('find target groups by tag', q)).rejects.toBeInstanceOf(AwsTerminalError);

      proxy.inject({
        service: 'tagging',
        operation: 'GetResources',
        fault: { kind: 'error', status: 400, code: 'PaginationTokenExpiredException' },
        times: 2,
      });
      await expect(tagged.find('find target groups by tag', q)).rejects.toBeInstanceOf(AwsRetryableError);
    } finally {
      proxy.clearFaults();
      aws.destroy();
    }
  });
});
