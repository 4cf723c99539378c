// What a user's AWS account already has before Skylift runs, recreated in an
// emulator: a VPC with two subnets tagged for load balancers, and a public
// hosted zone. Every function is idempotent, so it is safe against an
// emulator that already holds them (a second `skylift dev`, a test stack).
import {
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeSubnetsCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import {
  CreateHostedZoneCommand,
  ListHostedZonesByNameCommand,
  type Route53Client,
} from '@aws-sdk/client-route-53';

/** The tag the AWS Load Balancer Controller (and MyIngress subnetSelector) uses for public subnets. */
export const elbSubnetTag = { Key: 'kubernetes.io/role/elb', Value: '1' } as const;

/**
 * Returns the IDs of the subnets tagged `kubernetes.io/role/elb=1`; when
 * fewer than two exist, first creates a VPC (10.77.0.0/16) with two such
 * subnets in the region's zones a and b. Idempotent.
 */
export async function ensureElbSubnets(ec2: EC2Client, region: string): Promise<string[]> {
  const tagged = await ec2.send(
    new DescribeSubnetsCommand({
      Filters: [{ Name: `tag:${elbSubnetTag.Key}`, Values: [elbSubnetTag.Value] }],
    }),
  );
  const existing = (tagged.Subnets ?? []).map((s) => s.SubnetId ?? '').filter((id) => id !== '');
  if (existing.length >= 2) return existing;
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.77.0.0/16' }));
  const ids: string[] = [];
  for (const [cidr, az] of [
    ['10.77.1.0/24', `${region}a`],
    ['10.77.2.0/24', `${region}b`],
  ] as const) {
    const subnet = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId ?? '', CidrBlock: cidr, AvailabilityZone: az }),
    );
    ids.push(subnet.Subnet?.SubnetId ?? '');
  }
  await ec2.send(new CreateTagsCommand({ Resources: ids, Tags: [{ ...elbSubnetTag }] }));
  return ids;
}

/** Returns the ID (without `/hostedzone/`) of the public zone `name`, creating it if none exists. Idempotent. */
export async function ensureHostedZone(r53: Route53Client, name: string): Promise<string> {
  const found = await r53.send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 1 }));
  const existing = found.HostedZones?.find((z) => z.Name === `${name}.`);
  if (existing?.Id !== undefined) return existing.Id.replace('/hostedzone/', '');
  const created = await r53.send(
    new CreateHostedZoneCommand({ Name: name, CallerReference: `skylift-dev-${name}-${Date.now()}` }),
  );
  return (created.HostedZone?.Id ?? '').replace('/hostedzone/', '');
}
