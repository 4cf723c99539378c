// The bench's own view of AWS, straight at the emulator (not through the
// counting proxy, so setup and checks never show up in the operator's counts):
// what an account needs before a scenario, and what is left after one.
import { WAFV2Client } from '@aws-sdk/client-wafv2';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeDBInstancesCommand, RDSClient } from '@aws-sdk/client-rds';
import { ListResourceRecordSetsCommand, Route53Client, type RRType } from '@aws-sdk/client-route-53';
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { ensureElbSubnets, ensureHostedZone } from '../../dev/awsAccount.ts';
import { emulatorCredentials } from '../../dev/emulator.ts';
import { roleAccount } from '../../src/tenancy/accounts.ts';

/** SDK clients for one endpoint. */
export interface AwsClients {
  readonly ec2: EC2Client;
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly rds: RDSClient;
  readonly route53: Route53Client;
  readonly wafv2: WAFV2Client;
}

/** Static credentials for the SDK clients. */
interface StaticCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

const emulatorKeys: StaticCredentials = {
  accessKeyId: emulatorCredentials.accessKeyId,
  secretAccessKey: emulatorCredentials.secretAccessKey,
};

/** Clients for `endpoint` with the emulator's credentials (or `credentials`) and region. */
export function awsClients(endpoint: string, credentials: StaticCredentials = emulatorKeys): AwsClients {
  const config = { endpoint, region: emulatorCredentials.region, credentials: { ...credentials } };
  return {
    ec2: new EC2Client(config),
    elbv2: new ElasticLoadBalancingV2Client(config),
    rds: new RDSClient(config),
    route53: new Route53Client(config),
    wafv2: new WAFV2Client(config),
  };
}

/** Clients of one account and the 12-digit account they reach. */
export interface AccountClients {
  /** The account, as STS GetCallerIdentity answers with these clients' credentials. */
  readonly account: string;
  readonly aws: AwsClients;
}

/** The account STS says `credentials` belong to. */
async function callerAccount(endpoint: string, credentials: StaticCredentials): Promise<string> {
  const sts = new STSClient({
    endpoint,
    region: emulatorCredentials.region,
    credentials: { ...credentials },
  });
  try {
    const out = await sts.send(new GetCallerIdentityCommand({}));
    if (out.Account === undefined) throw new Error('GetCallerIdentity answered without an account');
    return out.Account;
  } finally {
    sts.destroy();
  }
}

/** Clients with the emulator's own credentials (the operator's identity in a run), and their account. */
export async function ownAccountClients(endpoint: string): Promise<AccountClients> {
  return { account: await callerAccount(endpoint, emulatorKeys), aws: awsClients(endpoint) };
}

/**
 * Clients acting as role `roleArn`: STS AssumeRole with the emulator's credentials, then the
 * session's keys, as a team's platform engineers would in the role's account (moto puts what
 * they make there, and needs no such role to exist). Throws when STS does not place the session
 * in the role's account.
 */
export async function assumedAccountClients(
  endpoint: string,
  roleArn: string,
  sessionName: string,
): Promise<AccountClients> {
  const sts = new STSClient({
    endpoint,
    region: emulatorCredentials.region,
    credentials: { ...emulatorKeys },
  });
  let credentials: StaticCredentials;
  try {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: sessionName }));
    const c = out.Credentials;
    if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined || c.SessionToken === undefined)
      throw new Error(`AssumeRole ${roleArn} answered without credentials`);
    credentials = {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
    };
  } finally {
    sts.destroy();
  }
  const account = await callerAccount(endpoint, credentials);
  const want = roleAccount(roleArn);
  if (account !== want)
    throw new Error(`AssumeRole ${roleArn}: the session is in account ${account}, not ${String(want)}`);
  return { account, aws: awsClients(endpoint, credentials) };
}

/** Destroys the clients' sockets. */
export function destroyAwsClients(aws: AwsClients): void {
  aws.ec2.destroy();
  aws.elbv2.destroy();
  aws.rds.destroy();
  aws.route53.destroy();
  aws.wafv2.destroy();
}

/** Creates the hosted zones (if missing) and returns their ids in order. Idempotent. */
export async function ensureZones(aws: AwsClients, names: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) ids.push(await ensureHostedZone(aws.route53, name));
  return ids;
}

/** Makes sure two subnets tagged for load balancers exist. Idempotent. */
export async function ensureSubnets(aws: AwsClients): Promise<void> {
  await ensureElbSubnets(aws.ec2, emulatorCredentials.region);
}

/** AWS resources of the kinds Skylift creates, as counted by {@link countAwsResources}. */
export interface AwsInventory {
  /** Record sets other than the zone's own NS and SOA, across the given zones. */
  readonly route53Records: number;
  readonly loadBalancers: number;
  readonly targetGroups: number;
  readonly dbInstances: number;
}

/**
 * Counts what exists in the account: every load balancer, target group and
 * DB instance, and the record sets (not NS/SOA) in `zoneIds`. After a
 * scenario's cleanup all four should be 0 (the emulator is reset between
 * scenarios, so nothing else is there).
 */
export async function countAwsResources(aws: AwsClients, zoneIds: readonly string[]): Promise<AwsInventory> {
  let route53Records = 0;
  for (const zoneId of zoneIds) {
    let start: { name?: string; type?: string } = {};
    for (;;) {
      const page = await aws.route53.send(
        new ListResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          ...(start.name !== undefined ? { StartRecordName: start.name } : {}),
          ...(start.type !== undefined ? { StartRecordType: start.type as RRType } : {}),
        }),
      );
      route53Records += (page.ResourceRecordSets ?? []).filter(
        (r) => r.Type !== 'NS' && r.Type !== 'SOA',
      ).length;
      if (page.IsTruncated !== true) break;
      start = {
        ...(page.NextRecordName !== undefined ? { name: page.NextRecordName } : {}),
        ...(page.NextRecordType !== undefined ? { type: page.NextRecordType } : {}),
      };
    }
  }
  const loadBalancers = await countPages(async (marker) => {
    const page = await aws.elbv2.send(
      new DescribeLoadBalancersCommand(marker !== undefined ? { Marker: marker } : {}),
    );
    return { count: page.LoadBalancers?.length ?? 0, next: page.NextMarker };
  });
  const targetGroups = await countPages(async (marker) => {
    const page = await aws.elbv2.send(
      new DescribeTargetGroupsCommand(marker !== undefined ? { Marker: marker } : {}),
    );
    return { count: page.TargetGroups?.length ?? 0, next: page.NextMarker };
  });
  const dbInstances = await countPages(async (marker) => {
    const page = await aws.rds.send(
      new DescribeDBInstancesCommand(marker !== undefined ? { Marker: marker } : {}),
    );
    return { count: page.DBInstances?.length ?? 0, next: page.Marker };
  });
  return { route53Records, loadBalancers, targetGroups, dbInstances };
}

/** Sums `count` over the pages of a marker-paginated list. */
async function countPages(
  fetchPage: (marker: string | undefined) => Promise<{ count: number; next: string | undefined }>,
): Promise<number> {
  let sum = 0;
  let marker: string | undefined;
  do {
    const page = await fetchPage(marker);
    sum += page.count;
    marker = page.next;
  } while (marker !== undefined && marker !== '');
  return sum;
}
