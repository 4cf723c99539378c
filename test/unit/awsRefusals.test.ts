// The refusal tables: which AWS refusal names which spec field, and the
// composed Terminal message (field first, AWS's words quoted, the fix last).
import { describe, expect, it } from 'vitest';
import {
  AwsRetryableError,
  AwsTerminalError,
  toTypedAwsError,
  tagOperation,
} from '../../src/providers/aws/errors.ts';
import {
  awsRefusalIn,
  ExplainedRefusal,
  matchRefusal,
  type RefusalFacts,
} from '../../src/providers/aws/refusals.ts';
import { composeRefusal, explainRefusal, refusalDocs, type RefusalHint } from '../../src/kinds/refusals.ts';
import { rdsErrorTable } from '../../src/providers/rds/states.ts';
import { OwnershipConflictError, RetryableError, TerminalError } from '../../src/runtime/errors.ts';
import { elbv2ErrorTable } from '../../src/providers/elbv2/errors.ts';
import type { ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import { manageddbRefusals } from '../../src/kinds/manageddb/awsRefusals.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myingressRefusals } from '../../src/kinds/myingress/awsRefusals.ts';
import type { DNSRecordSpec } from '../../src/kinds/dnsrecord/api.ts';
import { dnsrecordRefusals } from '../../src/kinds/dnsrecord/awsRefusals.ts';

function sdkError(code: string, message: string, operation?: string): Error {
  const e = Object.assign(new Error(message), { name: code, Code: code, $metadata: { httpStatusCode: 400 } });
  if (operation !== undefined) tagOperation(e, operation);
  return e;
}

const fieldOf = (h: RefusalHint | undefined): string | undefined =>
  h !== undefined && 'field' in h ? h.field : undefined;

const db: ManagedDBSpec = {
  engine: 'postgres',
  engineVersion: '16.99',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  masterUsername: 'app',
  dbName: 'app',
  backup: { window: '04:00-04:30' },
  maintenanceWindow: 'sun:04:00-sun:04:30',
  restoreFrom: { snapshotIdentifier: 'snap-1' },
  subnetGroupName: 'db-subnets',
  vpcSecurityGroupIds: ['sg-0abc'],
};

describe('ManagedDB refusal table', () => {
  it.each<{ reason: string; facts: RefusalFacts; field: string | undefined; fix?: RegExp | undefined }>([
    {
      reason: 'an engine version RDS does not offer',
      facts: {
        code: 'InvalidParameterCombination',
        message: 'Cannot find version 16.99 for postgres',
        operation: 'CreateDBInstance',
      },
      field: 'spec.engineVersion',
      fix: /describe-db-engine-versions --engine postgres/,
    },
    {
      reason: 'an upgrade RDS cannot make',
      facts: {
        code: 'InvalidParameterCombination',
        message: 'Cannot upgrade postgres from 16.4 to 18.1',
        operation: 'ModifyDBInstance',
      },
      field: 'spec.engineVersion',
      fix: /ValidUpgradeTarget/,
    },
    {
      reason: 'an instance class not offered for the engine',
      facts: {
        code: 'InvalidParameterCombination',
        message:
          'RDS does not support creating a DB instance with the following combination: DBInstanceClass=db.t3.huge, Engine=postgres, EngineVersion=16.4, LicenseModel=postgresql-license.',
        operation: 'CreateDBInstance',
      },
      field: 'spec.instanceClass',
      fix: /describe-orderable-db-instance-options/,
    },
    {
      reason: 'an unknown instance class',
      facts: { code: 'InvalidParameterValue', message: 'Invalid DB Instance class: db.x9.micro' },
      field: 'spec.instanceClass',
    },
    {
      reason: 'IOPS out of ratio (checked before storage size: the message names storage too)',
      facts: {
        code: 'InvalidParameterCombination',
        message: 'Invalid iops to storage (GB) ratio for engine name postgres and storage type io1: 60.0000',
      },
      field: 'spec.iops',
    },
    {
      reason: 'a storage size RDS refuses',
      facts: {
        code: 'InvalidParameterValue',
        message: 'Invalid storage size for engine name postgres and storage type io1: 20',
      },
      field: 'spec.allocatedStorage',
    },
    {
      reason: 'a storage size with no type in the message',
      facts: { code: 'InvalidParameterValue', message: 'The allocated storage must be at least 100 GiB' },
      field: 'spec.allocatedStorage',
    },
    {
      reason: 'a storage type the class does not support',
      facts: {
        code: 'StorageTypeNotSupported',
        message: 'Invalid storage type for DB instance class db.t3.micro: io2',
      },
      field: 'spec.storageType',
    },
    {
      reason: 'a reserved master user name',
      facts: {
        code: 'InvalidParameterValue',
        message: 'MasterUsername admin cannot be used as it is a reserved word used by the engine',
      },
      field: 'spec.masterUsername',
      fix: /delete this ManagedDB and create it again/,
    },
    {
      reason: 'a database name RDS refuses',
      facts: {
        code: 'InvalidParameterValue',
        message: 'DBName must begin with a letter and contain only alphanumeric characters.',
      },
      field: 'spec.dbName',
    },
    {
      reason: 'a subnet group that does not exist (Fault suffix aside)',
      facts: { code: 'DBSubnetGroupNotFoundFault', message: 'DBSubnetGroup db-subnets not found.' },
      field: 'spec.subnetGroupName',
      fix: /create-db-subnet-group/,
    },
    {
      reason: 'a subnet group in one Availability Zone',
      facts: {
        code: 'InvalidVPCNetworkStateFault',
        message: "DB Subnet Group doesn't meet availability zone coverage requirement.",
      },
      field: 'spec.subnetGroupName',
    },
    {
      reason: 'a security group of another VPC',
      facts: {
        code: 'InvalidParameterCombination',
        message: 'The DB instance and EC2 security group are in different VPCs.',
      },
      field: 'spec.vpcSecurityGroupIds',
    },
    {
      reason: 'a snapshot that does not exist',
      facts: {
        code: 'DBSnapshotNotFound',
        message: 'DBSnapshot snap-1 not found.',
        operation: 'RestoreDBInstanceFromDBSnapshot',
      },
      field: 'spec.restoreFrom.snapshotIdentifier',
      fix: /describe-db-snapshots/,
    },
    {
      reason: 'overlapping backup and maintenance windows',
      facts: {
        code: 'InvalidParameterValue',
        message: 'The backup window and maintenance window must not overlap.',
      },
      field: 'spec.backup.window',
      fix: /does not overlap spec.maintenanceWindow "sun:04:00-sun:04:30"/,
    },
    {
      reason: 'a maintenance window too short',
      facts: {
        code: 'InvalidParameterValue',
        message: 'The maintenance window must be at least 30 minutes.',
      },
      field: 'spec.maintenanceWindow',
    },
    {
      reason: 'the storage quota (no field)',
      facts: {
        code: 'StorageQuotaExceeded',
        message: 'The request cannot be processed because it would exceed the allowed storage quota',
      },
      field: undefined,
      fix: /Service Quotas.*delete DB instances/,
    },
    {
      reason: 'the instance quota (no field)',
      facts: { code: 'InstanceQuotaExceeded', message: 'Cannot create more than 40 db instances' },
      field: undefined,
      fix: /delete DB instances/,
    },
    {
      reason: 'an IAM action the role lacks, named from the message',
      facts: {
        code: 'AccessDenied',
        message:
          'User: arn:aws:sts::1:assumed-role/skylift/x is not authorized to perform: rds:CreateDBInstance on resource: arn:aws:rds:us-east-1:1:db:x',
        operation: 'CreateDBInstance',
      },
      field: undefined,
      fix: /allow rds:CreateDBInstance .*deploy\/iam\/policy.json/,
    },
    {
      reason: 'tags refused on adoption name no spec field (they are ownership tags)',
      facts: { code: 'InvalidParameterValue', message: 'tagging refused', operation: 'AddTagsToResource' },
      field: undefined,
      fix: undefined,
    },
  ])('$reason', ({ facts, field, fix }) => {
    const hint = matchRefusal(manageddbRefusals, db, facts);
    expect(fieldOf(hint)).toBe(field);
    if (fix !== undefined) expect(hint?.fix).toMatch(fix);
    else if (field === undefined) expect(hint).toBeUndefined();
  });

  it('composes the message: field and value first, AWS’s words quoted with step and code, then the fix', () => {
    const err = toTypedAwsError(
      'create DB instance sky-a',
      sdkError('InvalidParameterCombination', 'Cannot find version 16.99 for postgres', 'CreateDBInstance'),
      rdsErrorTable,
    );
    const explained = explainRefusal(err, manageddbRefusals, db);
    expect(explained).toBeInstanceOf(AwsTerminalError);
    expect((explained as AwsTerminalError).code).toBe('InvalidParameterCombination');
    expect((explained as Error).message).toBe(
      'spec.engineVersion "16.99": RDS refused it in create DB instance sky-a (InvalidParameterCombination: "Cannot find version 16.99 for postgres"): set spec.engineVersion to a version RDS offers for postgres (aws rds describe-db-engine-versions --engine postgres --query \'DBEngineVersions[].EngineVersion\'), or remove it for RDS\'s default',
    );
  });
});

const ing: MyIngressSpec = {
  subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
  securityGroups: ['sg-1'],
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } },
    {
      port: 443,
      protocol: 'HTTPS',
      certificateArn: 'arn:aws:acm:us-east-1:1:certificate/nope',
      sslPolicy: 'ELBSecurityPolicy-Nope',
      defaultAction: {
        forward: {
          service: { name: 'web', port: 80, healthCheck: { intervalSeconds: 5, timeoutSeconds: 10 } },
        },
      },
    },
  ],
  waf: { webAclArn: 'arn:aws:wafv2:us-east-1:1:regional/webacl/nope/0' },
};

describe('MyIngress refusal table', () => {
  it.each<{ reason: string; facts: RefusalFacts; field: string | undefined; value?: unknown }>([
    {
      reason: 'a certificate ACM does not have',
      facts: {
        code: 'CertificateNotFound',
        message: "Certificate 'arn:aws:acm:us-east-1:1:certificate/nope' not found",
      },
      field: 'spec.listeners[1].certificateArn',
      value: 'arn:aws:acm:us-east-1:1:certificate/nope',
    },
    {
      reason: 'an SSL policy that does not exist',
      facts: { code: 'SSLPolicyNotFound', message: "SSL policy 'ELBSecurityPolicy-Nope' not found" },
      field: 'spec.listeners[1].sslPolicy',
      value: 'ELBSecurityPolicy-Nope',
    },
    {
      reason: 'a health check timeout not below the interval (moto’s and AWS’s wording)',
      facts: {
        code: 'ValidationError',
        message: "Health check timeout '10' must be smaller than the interval '5'",
        operation: 'CreateTargetGroup',
      },
      field: 'spec.listeners[1].defaultAction.forward.service.healthCheck.timeoutSeconds',
      value: 10,
    },
    {
      reason: 'a health check interval not above the timeout',
      facts: { code: 'ValidationError', message: 'Health check interval must be greater than the timeout.' },
      field: 'spec.listeners[1].defaultAction.forward.service.healthCheck.intervalSeconds',
      value: 5,
    },
    {
      reason: 'a subnet that does not exist, chosen by the selector',
      facts: { code: 'SubnetNotFound', message: 'The specified subnet does not exist.' },
      field: 'spec.subnetSelector',
    },
    {
      reason: 'an internet-facing load balancer in a VPC without internet gateway',
      facts: { code: 'InvalidSubnet', message: 'VPC vpc-1 has no internet gateway' },
      field: 'spec.scheme',
    },
    {
      reason: 'a security group that does not exist',
      facts: { code: 'InvalidSecurityGroup', message: "One or more security groups are invalid: 'sg-1'" },
      field: 'spec.securityGroups',
      value: ['sg-1'],
    },
    {
      reason: 'an access-log bucket ELB may not write to',
      facts: {
        code: 'InvalidConfigurationRequest',
        message: 'Access Denied for bucket: logs. Please check S3bucket permission',
      },
      field: 'spec.attributes.accessLogs.bucket',
    },
    {
      reason: 'the load balancer quota (no field)',
      facts: {
        code: 'TooManyLoadBalancers',
        message: 'The quota for the number of load balancers has been reached',
      },
      field: undefined,
    },
    {
      reason: 'a web ACL WAF does not have (another account or region, or deleted)',
      facts: {
        code: 'WAFNonexistentItemException',
        message: 'AWS WAF couldn’t perform the operation because your resource doesn’t exist.',
        operation: 'AssociateWebACL',
      },
      field: 'spec.waf.webAclArn',
      value: 'arn:aws:wafv2:us-east-1:1:regional/webacl/nope/0',
    },
    {
      reason: 'the target group quota (no field)',
      facts: { code: 'TooManyTargetGroups', message: 'You have reached the maximum number of target groups' },
      field: undefined,
    },
  ])('$reason', ({ facts, field, value }) => {
    const hint = matchRefusal(myingressRefusals, ing, facts);
    expect(hint).toBeDefined();
    expect(fieldOf(hint)).toBe(field);
    if (value !== undefined)
      expect(hint !== undefined && 'value' in hint ? hint.value : undefined).toEqual(value);
  });

  // Issue 29: the fix said "e.g. set timeoutSeconds to 5" even when the timeout was 5 and the interval 5.
  it.each<{
    reason: string;
    healthCheck: { intervalSeconds?: number; timeoutSeconds?: number };
    fix: string;
  }>([
    {
      reason: 'timeout 5 and interval 5',
      healthCheck: { intervalSeconds: 5, timeoutSeconds: 5 },
      fix: 'timeout 5 and interval 5; set timeoutSeconds to 4 or less, or set intervalSeconds to 6 or more',
    },
    {
      reason: 'timeout 10 and interval 5',
      healthCheck: { intervalSeconds: 5, timeoutSeconds: 10 },
      fix: 'timeout 10 and interval 5; set timeoutSeconds to 4 or less, or set intervalSeconds to 11 or more',
    },
    {
      reason: 'timeout 20 and the default interval',
      healthCheck: { timeoutSeconds: 20 },
      fix: 'timeout 20 and interval 15; set timeoutSeconds to 14 or less, or set intervalSeconds to 21 or more',
    },
  ])('suggests health check timings that work: $reason', ({ healthCheck, fix }) => {
    const spec: MyIngressSpec = {
      ...ing,
      listeners: [
        {
          port: 80,
          protocol: 'HTTP',
          defaultAction: { forward: { service: { name: 'web', port: 80, healthCheck } } },
        },
      ],
    };
    const hint = matchRefusal(myingressRefusals, spec, {
      code: 'ValidationError',
      message: "Health check timeout '5' must be smaller than the interval '5'",
      operation: 'CreateTargetGroup',
    });
    expect(fieldOf(hint)).toBe('spec.listeners[0].defaultAction.forward.service.healthCheck.timeoutSeconds');
    expect(hint?.fix).toBe(
      `keep healthCheck.timeoutSeconds below healthCheck.intervalSeconds (defaults 5 and 15): spec.listeners[0].defaultAction.forward.service.healthCheck has ${fix}`,
    );
  });

  // Issue 29: a certificate found for certificateHosts was blamed on spec.listeners[].certificateArn.
  it.each<{
    reason: string;
    listeners: NonNullable<MyIngressSpec['listeners']>;
    field: string;
    value?: unknown;
  }>([
    {
      reason: 'a listener with hosts and no certificateArn: its certificateHosts',
      listeners: [
        { port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } },
        {
          port: 443,
          protocol: 'HTTPS',
          certificateHosts: ['shop.example.com'],
          defaultAction: { fixedResponse: { statusCode: 404 } },
        },
      ],
      field: 'spec.listeners[1].certificateHosts',
      value: ['shop.example.com'],
    },
    {
      reason: 'hosts beside a certificateArn the message does not name: both fields',
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: 'arn:aws:acm:us-east-1:1:certificate/default',
          certificateHosts: ['api.example.com'],
          defaultAction: { fixedResponse: { statusCode: 404 } },
        },
      ],
      field: 'spec.listeners[].certificateArn or spec.listeners[].certificateHosts',
    },
    {
      reason: 'hosts beside the certificateArn the message names: that certificateArn',
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: 'arn:aws:acm:us-east-1:1:certificate/found-by-host',
          certificateHosts: ['api.example.com'],
          defaultAction: { fixedResponse: { statusCode: 404 } },
        },
      ],
      field: 'spec.listeners[0].certificateArn',
      value: 'arn:aws:acm:us-east-1:1:certificate/found-by-host',
    },
    {
      reason: 'the SNI certificate the message names',
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: 'arn:aws:acm:us-east-1:1:certificate/default',
          additionalCertificateArns: ['arn:aws:acm:us-east-1:1:certificate/found-by-host'],
          defaultAction: { fixedResponse: { statusCode: 404 } },
        },
      ],
      field: 'spec.listeners[0].additionalCertificateArns[0]',
      value: 'arn:aws:acm:us-east-1:1:certificate/found-by-host',
    },
  ])('a certificate ELBv2 cannot find: $reason', ({ listeners, field, value }) => {
    const hint = matchRefusal(
      myingressRefusals,
      { ...ing, listeners },
      {
        code: 'CertificateNotFound',
        message: "Certificate 'arn:aws:acm:us-east-1:1:certificate/found-by-host' not found",
      },
    );
    expect(fieldOf(hint)).toBe(field);
    expect(hint !== undefined && 'value' in hint ? hint.value : undefined).toEqual(value);
    if (field.includes('certificateHosts'))
      expect(hint?.fix).toContain('the certificate ACM listed for a host');
  });

  it('names ec2:DescribeSubnets when the role may not describe subnets', () => {
    const hint = matchRefusal(myingressRefusals, ing, {
      code: 'UnauthorizedOperation',
      message: 'You are not authorized to perform this operation.',
      operation: 'DescribeSubnets',
    });
    expect(hint?.fix).toMatch(/allow ec2:DescribeSubnets/);
  });

  it('names the wafv2 action when the role may not associate a web ACL', () => {
    const hint = matchRefusal(myingressRefusals, ing, {
      code: 'AccessDeniedException',
      message: 'User is not authorized to perform: wafv2:AssociateWebACL',
      operation: 'AssociateWebACL',
    });
    expect(hint?.fix).toMatch(/allow wafv2:AssociateWebACL/);
  });
});

const rec: DNSRecordSpec = {
  zoneName: 'example.com',
  name: 'txt',
  type: 'TXT',
  records: ['"' + 'a'.repeat(300) + '"'],
};

describe('DNSRecord refusal table', () => {
  it.each<{ reason: string; spec?: DNSRecordSpec; facts: RefusalFacts; field: string | undefined }>([
    {
      reason: 'a TXT string over 255 characters',
      facts: {
        code: 'InvalidChangeBatch',
        message:
          "[Invalid Resource Record: 'FATAL problem: TXTRDataTooLong (Value is too long) encountered with '\"aaaa\"'']",
      },
      field: 'spec.records',
    },
    {
      reason: 'a value that is not the type’s presentation form',
      spec: { zoneName: 'example.com', name: 'mx', type: 'MX', records: ['10 mail..example.com'] },
      facts: {
        code: 'InvalidChangeBatch',
        message:
          "[Invalid Resource Record: 'FATAL problem: DomainLabelEmpty (Domain label is empty) encountered with 'mail..example.com'']",
      },
      field: 'spec.records',
    },
    {
      reason: 'an alias target outside its zone',
      spec: {
        zoneName: 'example.com',
        name: 'www',
        type: 'A',
        aliasTarget: { dnsName: 'lb.elb.amazonaws.com', hostedZoneId: 'ZWRONG' },
      },
      facts: {
        code: 'InvalidChangeBatch',
        message:
          '[Tried to create an alias that targets lb.elb.amazonaws.com., type A in zone ZWRONG, but the alias target name does not lie within the target zone]',
      },
      field: 'spec.aliasTarget',
    },
    {
      reason: 'a weighted set beside a plain one',
      spec: {
        zoneName: 'example.com',
        name: 'w',
        type: 'A',
        records: ['192.0.2.1'],
        setIdentifier: 'blue',
        weight: 10,
      },
      facts: {
        code: 'InvalidChangeBatch',
        message:
          '[RRSet with DNS name w.example.com., type A, SetIdentifier blue cannot be created as a non-weighted set exists with the same name and type.]',
      },
      field: 'spec.setIdentifier',
    },
    {
      reason: 'a CNAME beside another type',
      spec: { zoneName: 'example.com', name: 'c', type: 'CNAME', records: ['a.example.com'] },
      facts: {
        code: 'InvalidChangeBatch',
        message:
          '[RRSet of type CNAME with DNS name c.example.com. is not permitted because a conflicting RRSet of type  A with the same DNS name already exists in zone example.com.]',
      },
      field: 'spec.name',
    },
    {
      reason: 'a TTL out of range',
      facts: {
        code: 'InvalidInput',
        message:
          "1 validation error detected: Value '-1' at 'changeBatch.changes.1.member.resourceRecordSet.tTL' failed to satisfy constraint: Member must have value greater than or equal to 0",
      },
      field: 'spec.ttl',
    },
    {
      reason: 'a change batch refusal no row explains',
      facts: { code: 'InvalidChangeBatch', message: 'something new' },
      field: undefined,
    },
  ])('$reason', ({ spec, facts, field }) => {
    expect(fieldOf(matchRefusal(dnsrecordRefusals, spec ?? rec, facts))).toBe(field);
  });
});

describe('explainRefusal', () => {
  it('keeps today’s text and adds honest generic advice when no row matches', () => {
    const err = toTypedAwsError(
      'create load balancer x',
      sdkError('ValidationError', 'something odd'),
      elbv2ErrorTable,
    );
    const explained = explainRefusal(err, myingressRefusals, ing) as Error;
    expect(explained.message).toBe(
      `create load balancer x: ValidationError: something odd (Elastic Load Balancing refused the request and the words above are AWS's: correct the spec field they name, or see ${refusalDocs})`,
    );
    expect(explained.message).not.toMatch(/spec\./);
  });

  it('leaves retryable errors, Skylift’s own terminal errors and explained ones alone', () => {
    const retry = toTypedAwsError('x', sdkError('Throttling', 'slow down'));
    expect(retry).toBeInstanceOf(AwsRetryableError);
    expect(explainRefusal(retry, manageddbRefusals, db)).toBe(retry);
    const own = new AwsTerminalError('hosted zone Z is gone: set spec.zoneId', 'NoSuchHostedZone');
    expect(explainRefusal(own, dnsrecordRefusals, rec)).toBe(own);
    const once = explainRefusal(
      toTypedAwsError('create DB instance a', sdkError('InstanceQuotaExceeded', 'too many'), rdsErrorTable),
      manageddbRefusals,
      db,
    );
    expect(explainRefusal(once, manageddbRefusals, db)).toBe(once);
  });

  it('never turns an error that states its own retry intent into a Terminal refusal, whatever it wraps', () => {
    // The lifecycle model found this: a DNSRecord whose zone was recreated was retried (ZoneGone)
    // until the refusal wrapper found NoSuchHostedZone under it and made it Terminal.
    const gone = toTypedAwsError(
      'change batch',
      sdkError('NoSuchHostedZone', 'No hosted zone found with ID: Z1'),
      {
        terminal: ['NoSuchHostedZone'],
      },
    );
    expect(gone).toBeInstanceOf(AwsTerminalError);
    const retry = new RetryableError(
      'ZoneGone',
      'hosted zone Z1 no longer exists: looking the name up again',
      {
        cause: gone,
      },
    );
    expect(explainRefusal(retry, dnsrecordRefusals, rec)).toBe(retry);
    const conflict = new OwnershipConflictError('owned by shop/www', { cause: gone });
    expect(explainRefusal(conflict, dnsrecordRefusals, rec)).toBe(conflict);
    const own = new TerminalError('spec.zoneId Z1 does not exist', { cause: gone });
    expect(explainRefusal(own, dnsrecordRefusals, rec)).toBe(own);
  });

  it('finds the refusal under a step that wrapped it, and keeps that step', () => {
    const inner = toTypedAwsError(
      'create listener 443',
      sdkError('CertificateNotFound', 'Certificate not found'),
      elbv2ErrorTable,
    );
    const outer = new AwsTerminalError(`ensure listeners: ${inner.message}`, undefined, { cause: inner });
    expect((explainRefusal(outer, myingressRefusals, ing) as Error).message).toMatch(
      /^spec\.listeners\[1\]\.certificateArn "arn:aws:acm:us-east-1:1:certificate\/nope": Elastic Load Balancing refused it in ensure listeners: create listener 443 \(CertificateNotFound: "Certificate not found"\): set it to the ARN/,
    );
  });

  it('composes a refusal without a field around what is short', () => {
    expect(
      composeRefusal(
        'RDS',
        'create DB instance a',
        { code: 'InstanceQuotaExceeded', message: 'too many' },
        { subject: 'the quota is used up', fix: 'raise it' },
        'unused',
      ),
    ).toBe(
      'the quota is used up: RDS refused the request in create DB instance a (InstanceQuotaExceeded: "too many"): raise it',
    );
  });
});

describe('awsRefusalIn', () => {
  const refused = toTypedAwsError(
    'create listener 443',
    sdkError('CertificateNotFound', 'Certificate not found', 'CreateListener'),
    elbv2ErrorTable,
  );

  it('finds the refusal AWS wrote under the steps that wrapped it, with its facts and those steps', () => {
    const outer = new AwsTerminalError(`ensure listeners: ${refused.message}`, undefined, { cause: refused });
    expect(awsRefusalIn(outer)).toEqual({
      refusal: refused,
      facts: { code: 'CertificateNotFound', message: 'Certificate not found', operation: 'CreateListener' },
      step: 'ensure listeners: create listener 443',
    });
    expect(awsRefusalIn(refused)?.step).toBe('create listener 443');
  });

  it.each([
    { reason: 'a retryable AWS error', err: toTypedAwsError('x', sdkError('Throttling', 'slow down')) },
    {
      reason: 'a terminal error without AWS’s words',
      err: new AwsTerminalError('zone gone', 'NoSuchHostedZone'),
    },
    {
      reason: 'an explained refusal',
      err: new ExplainedRefusal('spec.x: …', 'CertificateNotFound', { cause: refused }),
    },
    {
      reason: 'a refusal under Skylift’s own retry intent',
      err: new RetryableError('ZoneGone', 'again', { cause: refused }),
    },
    { reason: 'a refusal under Skylift’s own Terminal', err: new TerminalError('no', { cause: refused }) },
    { reason: 'not an error', err: 'CertificateNotFound' },
  ])('finds none in $reason', ({ err }) => {
    expect(awsRefusalIn(err)).toBeUndefined();
  });
});
