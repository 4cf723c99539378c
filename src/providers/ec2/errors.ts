// EC2's error codes for the security groups Skylift manages, as tables and small pure predicates
// (docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html).
import { awsErrorCode } from '../aws/errors.ts';

/** EC2 codes no retry fixes (beyond the generic table); quotas included. */
export const ec2Terminal: readonly string[] = [
  'InvalidGroup.Duplicate',
  'InvalidVpcID.NotFound',
  'InvalidSubnetID.NotFound',
  'RulesPerSecurityGroupLimitExceeded',
  'SecurityGroupLimitExceeded',
  'InvalidPermission.Malformed',
  'UnauthorizedOperation',
];

/** The table to pass to classifyAwsError for EC2. */
export const ec2ErrorTable = { terminal: ec2Terminal } as const;

/** True for "that security group does not exist". Pure. */
export function isSecurityGroupNotFound(err: unknown): boolean {
  const code = awsErrorCode(err);
  return code === 'InvalidGroup.NotFound' || code === 'InvalidSecurityGroupID.NotFound';
}

/** True when an authorized rule is there already (the wanted state: success). Pure. */
export function isDuplicatePermission(err: unknown): boolean {
  return awsErrorCode(err) === 'InvalidPermission.Duplicate';
}

/** True when a revoked rule is not there (the wanted state: success). Pure. */
export function isPermissionNotFound(err: unknown): boolean {
  return awsErrorCode(err) === 'InvalidPermission.NotFound';
}

/**
 * Codes with which DeleteSecurityGroup says "not yet": the group is still in use — by the network
 * interfaces of a load balancer being deleted (AWS releases them minutes after DeleteLoadBalancer),
 * or referenced by another group's rule. Waiting, not failing.
 */
export const securityGroupInUseCodes: readonly string[] = ['DependencyViolation', 'InvalidGroup.InUse'];

/** What a failed DeleteSecurityGroup means for the deletion. */
export type SecurityGroupDeleteOutcome = 'gone' | 'inUse' | 'error';

/**
 * Classifies a DeleteSecurityGroup failure: `gone` (already deleted: success), `inUse` (retry
 * later, see securityGroupInUseCodes), `error` (anything else, classified as any AWS error). Pure.
 */
export function classifySecurityGroupDelete(err: unknown): SecurityGroupDeleteOutcome {
  if (isSecurityGroupNotFound(err)) return 'gone';
  const code = awsErrorCode(err);
  return code !== undefined && securityGroupInUseCodes.includes(code) ? 'inUse' : 'error';
}
