import { awsErrorCode } from '../aws/errors.ts';

/** ELBv2 codes no retry fixes (beyond the generic table); quotas included. */
export const elbv2Terminal: readonly string[] = [
  'InvalidConfigurationRequest',
  'InvalidSubnet',
  'InvalidSecurityGroup',
  'InvalidScheme',
  'SubnetNotFound',
  // EC2's spelling of the same refusals, which some endpoints (moto among them) answer with.
  'InvalidSubnetID.NotFound',
  'InvalidSecurityGroupID.NotFound',
  'CertificateNotFound',
  'UnsupportedProtocol',
  'SSLPolicyNotFound',
  'TooManyLoadBalancers',
  'TooManyTargetGroups',
  'TooManyListeners',
  'TooManyRules',
  'TooManyTargets',
  'TooManyTags',
  'TooManyCertificates',
  'DuplicateLoadBalancerName',
  'DuplicateTargetGroupName',
  'InvalidTarget',
];

/** The table to pass to classifyAwsError for ELBv2. */
export const elbv2ErrorTable = { terminal: elbv2Terminal } as const;

const notFound = ['LoadBalancerNotFound', 'ListenerNotFound', 'RuleNotFound', 'TargetGroupNotFound'];

/** True for "that ELBv2 object does not exist". Pure. */
export function isElbv2NotFound(err: unknown): boolean {
  const code = awsErrorCode(err)?.replace(/Exception$/, '');
  return code !== undefined && notFound.includes(code);
}

/** True for a target group still used by a listener or rule (retry after they are gone). Pure. */
export function isResourceInUse(err: unknown): boolean {
  return awsErrorCode(err)?.replace(/Exception$/, '') === 'ResourceInUse';
}
