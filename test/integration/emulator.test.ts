// Proves the AWS side of the harness is real: the AWS SDK v3 clients create a
// load balancer, an RDS instance and a Route 53 record in moto through the
// fault proxy, which counts every call and injects faults the SDK reacts to.
import { DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateLoadBalancerCommand,
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { CreateDBInstanceCommand, DescribeDBInstancesCommand, RDSClient } from '@aws-sdk/client-rds';
import {
  ChangeResourceRecordSetsCommand,
  CreateHostedZoneCommand,
  GetChangeCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
} from '@aws-sdk/client-route-53';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rdsSlowCreate, route53Pending, type AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { resetEmulator, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let proxy: AwsFaultProxy;

beforeAll(async () => {
  proxy = await startFaultProxy();
});
afterAll(async () => {
  await proxy.stop();
});
beforeEach(async () => {
  await resetEmulator();
  proxy.clearFaults();
  proxy.resetCalls();
});
afterEach(() => {
  proxy.clearFaults();
});

async function createZone(route53: Route53Client, name: string): Promise<string> {
  const zone = await route53.send(
    new CreateHostedZoneCommand({ Name: name, CallerReference: `smoke-${name}-${Date.now()}` }),
  );
  const id = zone.HostedZone?.Id;
  if (id === undefined) throw new Error('CreateHostedZone returned no id');
  return id;
}

describe('AWS emulator through the fault proxy', () => {
  it('creates an application load balancer in the default VPC subnets', async () => {
    const ec2 = new EC2Client(awsClientConfig(proxy.endpoint));
    const elbv2 = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
    const subnets = await ec2.send(
      new DescribeSubnetsCommand({ Filters: [{ Name: 'default-for-az', Values: ['true'] }] }),
    );
    const ids = (subnets.Subnets ?? []).map((s) => s.SubnetId).filter((id): id is string => id !== undefined);
    expect(ids.length).toBeGreaterThanOrEqual(2);

    const created = await elbv2.send(
      new CreateLoadBalancerCommand({
        Name: 'smoke-alb',
        Subnets: ids.slice(0, 2),
        Type: 'application',
        Scheme: 'internal',
      }),
    );
    const arn = created.LoadBalancers?.[0]?.LoadBalancerArn;
    expect(arn).toMatch(/^arn:aws:elasticloadbalancing:us-east-1:\d{12}:loadbalancer\/app\/smoke-alb\//);
    const described = await elbv2.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [arn ?? ''] }));
    expect(described.LoadBalancers?.[0]?.DNSName).toContain('smoke-alb');
    expect(proxy.count({ service: 'elasticloadbalancing', operation: 'CreateLoadBalancer' })).toBe(1);
    expect(proxy.count({ service: 'ec2', operation: 'DescribeSubnets' })).toBe(1);
  });

  it('creates an RDS instance and fakes a slow creation for the first describes', async () => {
    const rds = new RDSClient(awsClientConfig(proxy.endpoint));
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: 'smoke-db',
        Engine: 'postgres',
        DBInstanceClass: 'db.t3.micro',
        AllocatedStorage: 20,
        MasterUsername: 'app',
        MasterUserPassword: 'not-a-real-password-1',
      }),
    );
    const slow = proxy.inject(rdsSlowCreate(2));
    const statuses: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: 'smoke-db' }));
      statuses.push(d.DBInstances?.[0]?.DBInstanceStatus);
    }
    expect(statuses).toEqual(['creating', 'creating', 'available']);
    expect(slow.hits).toBe(2);
    expect(proxy.count({ service: 'rds', operation: 'DescribeDBInstances' })).toBe(3);
  });

  it('writes a Route 53 record and reports a pending change until it is in sync', async () => {
    const route53 = new Route53Client(awsClientConfig(proxy.endpoint));
    const zoneId = await createZone(route53, 'smoke.example.com');
    proxy.inject(route53Pending(2));
    const change = await route53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ChangeBatch: {
          Changes: [
            {
              Action: 'UPSERT',
              ResourceRecordSet: {
                Name: 'www.smoke.example.com',
                Type: 'A',
                TTL: 60,
                ResourceRecords: [{ Value: '192.0.2.10' }],
              },
            },
          ],
        },
      }),
    );
    expect(change.ChangeInfo?.Status).toBe('PENDING');
    const first = await route53.send(new GetChangeCommand({ Id: change.ChangeInfo?.Id ?? '' }));
    const second = await route53.send(new GetChangeCommand({ Id: change.ChangeInfo?.Id ?? '' }));
    expect([first.ChangeInfo?.Status, second.ChangeInfo?.Status]).toEqual(['PENDING', 'INSYNC']);

    const records = await route53.send(new ListResourceRecordSetsCommand({ HostedZoneId: zoneId }));
    const www = records.ResourceRecordSets?.find(
      (r) => r.Name === 'www.smoke.example.com.' && r.Type === 'A',
    );
    expect(www?.ResourceRecords?.[0]?.Value).toBe('192.0.2.10');
  });

  it.each([
    {
      reason: 'Route 53 throttling',
      fault: { kind: 'throttle', code: 'Throttling' } as const,
      expectedName: 'Throttling',
    },
    {
      reason: 'Route 53 PriorRequestNotComplete',
      fault: { kind: 'throttle', code: 'PriorRequestNotComplete' } as const,
      expectedName: 'PriorRequestNotComplete',
    },
    {
      reason: 'a 503 from the service',
      fault: { kind: 'error', status: 503 } as const,
      expectedName: 'ServiceUnavailable',
    },
    { reason: 'a dropped connection', fault: { kind: 'drop' } as const, expectedName: undefined },
  ])(
    'the SDK retries after $reason and gives up when the fault persists',
    async ({ fault, expectedName }) => {
      const route53 = new Route53Client(awsClientConfig(proxy.endpoint, 3));
      const zoneId = await createZone(route53, 'retry.example.com');
      proxy.resetCalls();

      const transient = proxy.inject({
        service: 'route53',
        operation: 'ListResourceRecordSets',
        fault,
        times: 2,
      });
      const listed = await route53.send(new ListResourceRecordSetsCommand({ HostedZoneId: zoneId }));
      expect(listed.ResourceRecordSets?.length).toBeGreaterThanOrEqual(2); // SOA + NS
      expect(transient.hits).toBe(2);
      expect(proxy.count({ service: 'route53', operation: 'ListResourceRecordSets' })).toBe(3);
      expect(
        proxy.count({ service: 'route53', operation: 'ListResourceRecordSets', outcome: 'forwarded' }),
      ).toBe(1);

      proxy.inject({ service: 'route53', operation: 'ListResourceRecordSets', fault });
      const failure = await route53.send(new ListResourceRecordSetsCommand({ HostedZoneId: zoneId })).then(
        () => undefined,
        (e: unknown) => e as Error & { $metadata?: { attempts?: number } },
      );
      expect(failure).toBeDefined();
      if (expectedName !== undefined) expect(failure?.name).toBe(expectedName);
      expect(failure?.$metadata?.attempts).toBe(3);
    },
  );
});
