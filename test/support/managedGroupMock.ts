// For unit tests of the MyIngress adapter with aws-sdk-client-mock: an EC2 that holds the managed
// security group of MyIngress shop/shop (uid uid-1) in VPC vpc-1 (10.0.0.0/16), with the rules a
// spec with one HTTP listener on port 80 and a backend on target port 8080 wants.
import {
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DescribeVpcsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { ownershipTagMap, type OwnershipTags } from '../../src/apis/managed.ts';
import { securityGroupName } from '../../src/kinds/myingress/names.ts';

/** The managed group's ID. */
export const managedGroupId = 'sg-managed';

/**
 * Mocks EC2 (every EC2Client made after this call answers from the mock) with the managed group of
 * shop/shop owned by `ownership`; returns the mock (its calls) and a client for the adapter's deps.
 */
export function mockManagedGroup(ownership: OwnershipTags): {
  readonly mock: ReturnType<typeof mockClient>;
  readonly ec2: () => Promise<EC2Client>;
} {
  const mock = mockClient(EC2Client);
  mock.on(DescribeSubnetsCommand).resolves({
    Subnets: [
      { SubnetId: 'subnet-1', VpcId: 'vpc-1' },
      { SubnetId: 'subnet-2', VpcId: 'vpc-1' },
    ],
  });
  mock.on(DescribeVpcsCommand).resolves({
    Vpcs: [
      {
        VpcId: 'vpc-1',
        CidrBlock: '10.0.0.0/16',
        CidrBlockAssociationSet: [{ CidrBlock: '10.0.0.0/16', CidrBlockState: { State: 'associated' } }],
      },
    ],
  });
  mock.on(DescribeSecurityGroupsCommand).resolves({
    SecurityGroups: [
      {
        GroupId: managedGroupId,
        GroupName: securityGroupName('shop', 'shop', 'uid-1'),
        VpcId: 'vpc-1',
        Tags: Object.entries(ownershipTagMap(ownership)).map(([Key, Value]) => ({ Key, Value })),
        IpPermissions: [{ IpProtocol: 'tcp', FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: '0.0.0.0/0' }] }],
        IpPermissionsEgress: [
          { IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080, IpRanges: [{ CidrIp: '10.0.0.0/16' }] },
        ],
      },
    ],
  });
  const client = new EC2Client({ region: 'us-east-1' });
  return { mock, ec2: () => Promise.resolve(client) };
}
