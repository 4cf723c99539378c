// What Elastic Load Balancing's (and EC2's) terminal refusals mean for a
// MyIngress's spec: the field and a fix that works. Rows are tried in order
// (most specific first); a refusal no row matches keeps AWS's words with
// generic advice (src/kinds/refusals.ts).
import { accessDenied, type Refusal, type RefusalHint, type RefusalTable } from '../refusals.ts';
import type { ActionSpec, BackendServiceSpec, MyIngressSpec } from './api.ts';

type Row = Refusal<MyIngressSpec>;
type HealthCheckField = keyof NonNullable<BackendServiceSpec['healthCheck']>;

/** Every forward backend in the spec with the path of its field (`forward.service`, `forward.services[j]`). Pure. */
export function backendPaths(s: MyIngressSpec): { path: string; service: BackendServiceSpec }[] {
  const of = (path: string, a: ActionSpec): { path: string; service: BackendServiceSpec }[] => [
    ...(a.forward?.service !== undefined
      ? [{ path: `${path}.forward.service`, service: a.forward.service }]
      : []),
    ...(a.forward?.services ?? []).map((service, j) => ({ path: `${path}.forward.services[${j}]`, service })),
  ];
  return [
    ...(s.listeners ?? []).flatMap((l, i) => of(`spec.listeners[${i}].defaultAction`, l.defaultAction)),
    ...(s.rules ?? []).flatMap((r, i) => of(`spec.rules[${i}].action`, r.action)),
  ];
}

/**
 * The health-check field AWS refused: the first backend that sets it (the
 * value AWS saw), else the generic path. Pure.
 */
function healthCheckHint(s: MyIngressSpec, field: HealthCheckField, fix: string): RefusalHint {
  const set = backendPaths(s).find((b) => b.service.healthCheck?.[field] !== undefined);
  return set !== undefined
    ? { field: `${set.path}.healthCheck.${field}`, value: set.service.healthCheck?.[field], fix }
    : { field: `spec.listeners[].defaultAction.forward.service.healthCheck.${field}`, fix };
}

/**
 * The listener field whose certificate AWS refused: the certificateArn or additionalCertificateArns
 * entry AWS's message names; else, when listeners name hosts (certificateHosts: the certificate was
 * one ACM listed for a host, an ARN the spec does not hold), their certificateHosts — alone when
 * it is the only place a certificate can come from, beside certificateArn otherwise; else the only
 * listener with a certificateArn, or all of them. Pure.
 */
function certificateHint(s: MyIngressSpec, message: string, fix: string, hostsFix: string): RefusalHint {
  const listeners = (s.listeners ?? []).map((l, i) => ({ l, i }));
  const withCert = listeners.filter(({ l }) => l.certificateArn !== undefined);
  const named = withCert.find(({ l }) => message.includes(l.certificateArn ?? '\u0000'));
  if (named !== undefined)
    return { field: `spec.listeners[${named.i}].certificateArn`, value: named.l.certificateArn, fix };
  for (const { l, i } of listeners) {
    const j = (l.additionalCertificateArns ?? []).findIndex((a) => message.includes(a));
    if (j >= 0)
      return {
        field: `spec.listeners[${i}].additionalCertificateArns[${j}]`,
        value: l.additionalCertificateArns?.[j],
        fix,
      };
  }
  const withHosts = listeners.filter(({ l }) => (l.certificateHosts ?? []).length > 0);
  const onlyHosts = withHosts.length === 1 && withCert.length === 0 ? withHosts[0] : undefined;
  if (onlyHosts !== undefined)
    return {
      field: `spec.listeners[${onlyHosts.i}].certificateHosts`,
      value: onlyHosts.l.certificateHosts,
      fix: hostsFix,
    };
  if (withHosts.length > 0)
    return {
      field: 'spec.listeners[].certificateArn or spec.listeners[].certificateHosts',
      fix: `${fix}; or, for certificateHosts, ${hostsFix}`,
    };
  return withCert.length === 1 && withCert[0] !== undefined
    ? { field: `spec.listeners[${withCert[0].i}].certificateArn`, value: withCert[0].l.certificateArn, fix }
    : { field: 'spec.listeners[].certificateArn', value: withCert.map(({ l }) => l.certificateArn), fix };
}

/** What to do when a certificate ACM listed for a listener host is refused. */
const hostsCertificateFix =
  "the certificate ACM listed for a host was refused: check that it is still ISSUED in the load balancer's account and region (aws acm list-certificates --certificate-statuses ISSUED) — one deleted or replaced is found again when Skylift next lists ACM (every --acm-certificate-list-max-age) — or name a certificate with certificateArn and remove the host";

/** spec.subnets when set, else the selector that chose them. Pure. */
function subnetsHint(s: MyIngressSpec, fix: string): RefusalHint {
  return s.subnets !== undefined
    ? { field: 'spec.subnets', value: s.subnets, fix }
    : { field: 'spec.subnetSelector', value: s.subnetSelector?.tags ?? 'kubernetes.io/role/elb=1', fix };
}

const quota = (name: string, what: string): string =>
  `raise the "${name}" quota in Service Quotas (aws service-quotas list-service-quotas --service-code elasticloadbalancing), or ${what}`;

/** The health check timeout and interval a backend gets (desired.ts's defaults: 5 and 15). Pure. */
function timing(service: BackendServiceSpec): { timeout: number; interval: number } {
  return {
    timeout: service.healthCheck?.timeoutSeconds ?? 5,
    interval: service.healthCheck?.intervalSeconds ?? 15,
  };
}

/**
 * How to bring a health check timeout below its interval, with values that work for the first
 * backend whose timeout is not below its interval (none: the rule alone, no example). Pure.
 */
export function healthCheckTimingFix(s: MyIngressSpec): string {
  const rule = 'keep healthCheck.timeoutSeconds below healthCheck.intervalSeconds (defaults 5 and 15)';
  const bad = backendPaths(s).find((b) => {
    const t = timing(b.service);
    return t.timeout >= t.interval;
  });
  if (bad === undefined) return rule;
  const { timeout, interval } = timing(bad.service);
  // AWS's bounds: a timeout of 2 to 120 s, an interval of 5 to 300 s.
  const options = [
    ...(interval - 1 >= 2 ? [`set timeoutSeconds to ${interval - 1} or less`] : []),
    ...(timeout + 1 <= 300 ? [`set intervalSeconds to ${timeout + 1} or more`] : []),
  ];
  return `${rule}: ${bad.path}.healthCheck has timeout ${timeout} and interval ${interval}; ${options.join(', or ')}`;
}

const rows: readonly Row[] = [
  // Listeners: certificates and TLS policies.
  {
    codes: ['CertificateNotFound'],
    hint: (s, f) =>
      certificateHint(
        s,
        f.message,
        'set it to the ARN of an ISSUED ACM certificate in this account and region (aws acm list-certificates --certificate-statuses ISSUED), whose domain the listener serves',
        hostsCertificateFix,
      ),
  },
  {
    codes: ['InvalidConfigurationRequest', 'ValidationError'],
    message: /certificate/i,
    hint: (s, f) =>
      certificateHint(
        s,
        f.message,
        'set it to the ARN of an ISSUED ACM (or IAM) certificate in the same region as the load balancer (aws acm list-certificates --certificate-statuses ISSUED)',
        hostsCertificateFix,
      ),
  },
  // WAFv2: the web ACL (spec.waf).
  {
    codes: ['WAFNonexistentItemException', 'WAFInvalidParameterException'],
    hint: (s) => ({
      field: 'spec.waf.webAclArn',
      value: s.waf?.webAclArn,
      fix: 'AWS WAF refused this web ACL for the load balancer: set it to the ARN of an existing REGIONAL web ACL in the load balancer’s account and region (aws wafv2 list-web-acls --scope REGIONAL), or remove it',
    }),
  },
  {
    codes: ['TooManyCertificates'],
    hint: (s, f) =>
      certificateHint(
        s,
        f.message,
        quota('Certificates per Application Load Balancer', 'use fewer certificates'),
        quota('Certificates per Application Load Balancer', 'use fewer certificateHosts'),
      ),
  },
  {
    codes: ['SSLPolicyNotFound', 'InvalidConfigurationRequest', 'ValidationError'],
    message: /ssl ?policy|security policy/i,
    hint: (s) => {
      const i = (s.listeners ?? []).findIndex((l) => l.sslPolicy !== undefined);
      const fix =
        "set it to a policy Elastic Load Balancing offers (aws elbv2 describe-ssl-policies --query 'SslPolicies[].Name', e.g. ELBSecurityPolicy-TLS13-1-2-2021-06), or remove it for the default";
      return i >= 0
        ? { field: `spec.listeners[${i}].sslPolicy`, value: (s.listeners ?? [])[i]?.sslPolicy, fix }
        : { field: 'spec.listeners[].sslPolicy', fix };
    },
  },
  {
    codes: ['SSLPolicyNotFound'],
    hint: () => ({
      field: 'spec.listeners[].sslPolicy',
      fix: "set it to a policy Elastic Load Balancing offers (aws elbv2 describe-ssl-policies --query 'SslPolicies[].Name'), or remove it for the default",
    }),
  },
  {
    codes: ['UnsupportedProtocol'],
    hint: (s) => ({
      field: 'spec.listeners[].protocol',
      value: (s.listeners ?? []).map((l) => l.protocol),
      fix: 'an Application Load Balancer listens on HTTP or HTTPS only: set each listener protocol to one of them',
    }),
  },
  // Target groups: health checks.
  {
    codes: ['ValidationError', 'InvalidConfigurationRequest', 'InvalidParameterValue'],
    message: /health ?check (?:timeout|interval)|healthCheckTimeoutSeconds|healthCheckIntervalSeconds/i,
    hint: (s, f) =>
      healthCheckHint(
        s,
        /interval/i.test(f.message.split(/must/i)[0] ?? '') ? 'intervalSeconds' : 'timeoutSeconds',
        healthCheckTimingFix(s),
      ),
  },
  {
    codes: ['ValidationError', 'InvalidConfigurationRequest', 'InvalidParameterValue'],
    message: /HttpCode|matcher/i,
    hint: (s) =>
      healthCheckHint(
        s,
        'matcher',
        'set healthCheck.matcher to HTTP codes from 200 to 499: one (200), a list (200,204) or a range (200-399)',
      ),
  },
  {
    codes: ['ValidationError', 'InvalidConfigurationRequest'],
    message: /health ?check ?path/i,
    hint: (s) =>
      healthCheckHint(
        s,
        'path',
        'set healthCheck.path to an absolute path of at most 1024 characters, e.g. /healthz',
      ),
  },
  {
    codes: ['ValidationError', 'InvalidConfigurationRequest'],
    message: /(?:un)?healthy ?threshold/i,
    hint: (s, f) =>
      healthCheckHint(
        s,
        /unhealthy/i.test(f.message) ? 'unhealthyThresholdCount' : 'healthyThresholdCount',
        'set the health-check threshold counts between 2 and 10',
      ),
  },
  {
    codes: ['TooManyTargetGroups'],
    hint: () => ({
      subject:
        'the account\'s "Target groups per Region" quota is used up (each backend Service and port of a MyIngress is one target group)',
      fix: quota(
        'Target groups per Region',
        'delete target groups you no longer need (aws elbv2 describe-target-groups)',
      ),
    }),
  },
  {
    codes: ['TooManyTargets'],
    hint: () => ({
      subject:
        'a target group would have more targets than the quota allows (one per ready endpoint of the backend Service)',
      fix: quota('Targets per Application Load Balancer', 'scale the backend Service down'),
    }),
  },
  {
    codes: ['InvalidTarget'],
    hint: (s) => {
      const fix =
        "IP targets must be addresses in the load balancer's VPC: run the Service's pods on a CNI that gives them VPC addresses (the AWS VPC CNI), or forward to another Service";
      const backends = backendPaths(s);
      const only = backends.length === 1 ? backends[0] : undefined;
      return only !== undefined
        ? { field: only.path, value: only.service.name, fix }
        : {
            subject: "the backend Services' endpoints are not addresses Elastic Load Balancing can target",
            fix,
          };
    },
  },
  // Load balancer: network placement.
  {
    codes: ['InvalidSubnet', 'InvalidConfigurationRequest'],
    message: /internet gateway/i,
    hint: (s) => ({
      field: 'spec.scheme',
      value: s.scheme ?? 'internet-facing',
      fix: 'set spec.scheme to internal, or place the load balancer in public subnets of a VPC with an internet gateway',
    }),
  },
  {
    codes: ['InvalidSubnet', 'SubnetNotFound', 'InvalidSubnetID.NotFound', 'InvalidConfigurationRequest'],
    message: /subnet|Availability Zone/i,
    hint: (s) =>
      subnetsHint(
        s,
        'name (or tag) at least two existing subnets of one VPC, in different Availability Zones, each with at least 8 free IP addresses (aws ec2 describe-subnets)',
      ),
  },
  {
    codes: ['InvalidSubnet', 'SubnetNotFound', 'InvalidSubnetID.NotFound'],
    hint: (s) =>
      subnetsHint(
        s,
        'name (or tag) at least two existing subnets of one VPC, in different Availability Zones (aws ec2 describe-subnets)',
      ),
  },
  {
    codes: ['InvalidSecurityGroup', 'InvalidSecurityGroupID.NotFound', 'InvalidConfigurationRequest'],
    message: /security group|\bsg-[0-9a-f]+/i,
    hint: (s) => ({
      field: 'spec.securityGroups',
      value: s.securityGroups,
      fix: "set spec.securityGroups to security groups of the load balancer's VPC (aws ec2 describe-security-groups --filters Name=vpc-id,Values=<the subnets' VPC>), or remove it for the VPC's default",
    }),
  },
  {
    codes: ['InvalidSecurityGroup', 'InvalidSecurityGroupID.NotFound'],
    hint: (s) => ({
      field: 'spec.securityGroups',
      value: s.securityGroups,
      fix: "set spec.securityGroups to security groups of the load balancer's VPC (aws ec2 describe-security-groups)",
    }),
  },
  {
    codes: ['InvalidScheme'],
    hint: (s) => ({
      field: 'spec.scheme',
      value: s.scheme ?? 'internet-facing',
      fix: 'set spec.scheme to internet-facing or internal (internal needs no internet gateway)',
    }),
  },
  {
    codes: ['InvalidConfigurationRequest', 'ValidationError'],
    message: /dualstack|ipAddressType|IPv6/i,
    hint: (s) => ({
      field: 'spec.ipAddressType',
      value: s.ipAddressType ?? 'ipv4',
      fix: 'set spec.ipAddressType to ipv4, or give every subnet an IPv6 CIDR block first',
    }),
  },
  // Load balancer attributes.
  {
    codes: ['InvalidConfigurationRequest', 'ValidationError'],
    message: /access ?logs?|bucket/i,
    hint: (s) => ({
      field: 'spec.attributes.accessLogs.bucket',
      value: s.attributes?.accessLogs?.bucket,
      fix: "name an S3 bucket in the load balancer's region whose bucket policy lets Elastic Load Balancing write logs (AWS: 'Enable access logs for your Application Load Balancer'), or remove spec.attributes.accessLogs",
    }),
  },
  {
    codes: ['InvalidConfigurationRequest', 'ValidationError'],
    message: /idle[_ ]?timeout/i,
    hint: (s) => ({
      field: 'spec.attributes.idleTimeoutSeconds',
      value: s.attributes?.idleTimeoutSeconds,
      fix: 'set spec.attributes.idleTimeoutSeconds between 1 and 4000',
    }),
  },
  // Rules.
  {
    codes: ['ValidationError', 'InvalidConfigurationRequest'],
    message: /priority/i,
    hint: (s) => ({
      field: 'spec.rules[].priority',
      value: (s.rules ?? []).map((r) => r.priority),
      fix: 'give each rule of a listener its own priority between 1 and 50000',
    }),
  },
  {
    codes: ['ValidationError', 'InvalidConfigurationRequest'],
    message: /condition value|condition values|host-header|path-pattern/i,
    hint: (_s, f) => ({
      field: /host/i.test(f.message) ? 'spec.rules[].hosts' : 'spec.rules[].paths',
      fix: 'keep each rule to at most 5 host and path values in total, each up to 128 characters of a-z A-Z 0-9 _ - . $ / ~ " \' @ : + & ( ) ! , ; = and the wildcards * and ?',
    }),
  },
  {
    codes: ['TooManyRules'],
    hint: (s) => ({
      field: 'spec.rules',
      value: (s.rules ?? []).length,
      fix: quota(
        'Rules per Application Load Balancer',
        'use fewer rules (100 per load balancer by default, default actions excluded)',
      ),
    }),
  },
  {
    codes: ['TooManyListeners'],
    hint: (s) => ({
      field: 'spec.listeners',
      value: (s.listeners ?? []).length,
      fix: quota('Listeners per Application Load Balancer', 'use fewer listeners (50 by default)'),
    }),
  },
  {
    codes: ['TooManyLoadBalancers'],
    hint: () => ({
      subject: 'the account\'s "Application Load Balancers per Region" quota is used up',
      fix: quota(
        'Application Load Balancers per Region',
        'delete load balancers you no longer need (aws elbv2 describe-load-balancers)',
      ),
    }),
  },
  {
    codes: ['TooManyTags'],
    hint: (s) => ({
      field: 'spec.tags',
      value: Object.keys(s.tags ?? {}).length,
      fix: 'keep spec.tags to at most 47 entries (Elastic Load Balancing allows 50 per resource and Skylift adds 3 ownership tags)',
    }),
  },
  accessDenied((operation) =>
    operation === 'DescribeSubnets'
      ? 'ec2'
      : /WebACL/.test(operation ?? '')
        ? 'wafv2'
        : 'elasticloadbalancing',
  ),
];

/** MyIngress's refusal table. */
export const myingressRefusals: RefusalTable<MyIngressSpec> = {
  service: 'Elastic Load Balancing',
  entries: rows,
};
