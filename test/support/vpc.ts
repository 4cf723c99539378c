// A VPC with two subnets in moto, for the tests that make load balancers.
import { CreateSubnetCommand, CreateVpcCommand, type EC2Client } from '@aws-sdk/client-ec2';

/**
 * Creates a VPC `10.<second>.0.0/16` with subnets `10.<second>.1.0/24` (us-east-1a) and
 * `10.<second>.2.0/24` (us-east-1b), straight at the emulator; returns the subnet IDs and the VPC's.
 * Pick a `second` octet no other test file uses. Not idempotent: each call makes a new VPC.
 */
export async function vpcWithTwoSubnets(
  ec2: EC2Client,
  second: number,
): Promise<{ readonly vpcId: string; readonly subnets: string[] }> {
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: `10.${second}.0.0/16` }));
  const vpcId = vpc.Vpc?.VpcId ?? '';
  const subnets: string[] = [];
  for (const [i, az] of ['us-east-1a', 'us-east-1b'].entries()) {
    const s = await ec2.send(
      new CreateSubnetCommand({
        VpcId: vpcId,
        CidrBlock: `10.${second}.${i + 1}.0/24`,
        AvailabilityZone: az,
      }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
  return { vpcId, subnets };
}
