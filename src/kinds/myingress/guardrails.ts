// MyIngress's part of a TeamPolicy: which schemes, subnets, security groups, certificates and web
// ACLs a namespace's load balancers may use, and whether internet-facing ones need a web ACL.
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { GuardrailSection, TeamPolicy } from '../../apis/teampolicy.ts';
import { arr, bool, obj, str, stringMap } from '../../apis/schema.ts';
import {
  celSection,
  celJoinOrNone,
  celListedOrPrefixed,
  celString,
  forbidsMessage,
  type KindAdmission,
} from '../../tenancy/admission.ts';
import { forbidden } from '../../tenancy/connector.ts';
import type { MyIngressSpec } from './api.ts';
import { elbv2Call } from './elbv2.ts';
import { cidrWithin, inboundCIDRs, managedGroupKept } from './securityGroupPlan.ts';
import { hasErrorCode } from '../../providers/aws/errors.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { realClock } from '../../runtime/clock.ts';
import { acmOf } from '../../providers/acm/client.ts';
import { hostCertificates, type HostCertificates } from './acm.ts';
import { defaultMyIngressSettings } from './settings.ts';

/** Resources allowed by ID or by tags (a resource is allowed when it matches either). */
export interface IdsOrTags {
  ids?: string[];
  tags?: Record<string, string>;
}

/** spec.guardrails.loadBalancers. */
export interface LoadBalancerGuardrails {
  schemes?: ('internal' | 'internet-facing')[];
  subnets?: IdsOrTags;
  securityGroups?: IdsOrTags;
  certificates?: { arns?: string[]; tags?: Record<string, string> };
  endpointSliceManagers?: string[];
  accessLogBuckets?: string[];
  webAcls?: WebAclGuardrails;
  /**
   * The CIDRs the security group Skylift manages may let in: each of a MyIngress's inboundCIDRs (or
   * the defaults: anywhere for internet-facing, the VPC's CIDRs for internal) must lie within one.
   */
  inboundCIDRs?: string[];
}

/** spec.guardrails.loadBalancers.webAcls. */
export interface WebAclGuardrails {
  /** An internet-facing MyIngress must name a web ACL Skylift manages (spec.waf.webAclArn). */
  requiredOnInternetFacing?: boolean;
  /** The web ACLs spec.waf.webAclArn may name; an entry ending in `*` allows every ARN starting with the rest. */
  arns?: string[];
}

const idsOrTags = (what: string, idPattern: string) =>
  obj(`Allowed ${what}: those listed by ID, and those carrying all of the tags. Absent: any.`, {
    ids: arr(`${what} IDs.`, str('An ID.', { pattern: idPattern }), { maxItems: 256 }),
    tags: stringMap(`Tags an allowed ${what.replace(/s$/, '')} carries (all of them).`),
  });

export const loadBalancerGuardrailSection: GuardrailSection = {
  key: 'loadBalancers',
  schema: obj('What MyIngresses in the selected namespaces may use.', {
    schemes: arr(
      'Allowed schemes, e.g. [internal] to keep load balancers off the internet. Absent: both.',
      str('A scheme.', { enum: ['internal', 'internet-facing'] }),
      { maxItems: 2 },
    ),
    subnets: idsOrTags('subnets', '^subnet-[0-9a-f]+$'),
    securityGroups: idsOrTags('security groups', '^sg-[0-9a-f]+$'),
    certificates: obj(
      'Allowed ACM certificates for HTTPS listeners: those listed, and those carrying all of the tags. Absent: any.',
      {
        arns: arr(
          'Certificate ARNs; an entry ending in * allows every ARN starting with the rest (e.g. arn:aws:acm:eu-west-1:111122223333:certificate/*).',
          str('An ARN or ARN prefix with *.', { pattern: '^arn:aws[a-z-]*:acm:' }),
          { maxItems: 256 },
        ),
        tags: stringMap('Tags an allowed certificate carries in ACM (all of them).'),
      },
    ),
    accessLogBuckets: arr(
      'The S3 buckets a load balancer may write its access logs to (spec.attributes.accessLogs.bucket); an entry ending in * allows every bucket starting with the rest. Absent: any (the bucket’s own policy still decides).',
      str('A bucket name or a prefix with *.', { minLength: 1, maxLength: 63 }),
      { maxItems: 64 },
    ),
    webAcls: obj(
      'AWS WAF web ACLs (spec.waf) of the namespace’s load balancers. Absent: any, and none required.',
      {
        requiredOnInternetFacing: bool(
          'When true, an internet-facing MyIngress must name a web ACL that Skylift associates and keeps (spec.waf.webAclArn, with spec.waf.policy Managed).',
        ),
        arns: arr(
          'The web ACLs spec.waf.webAclArn may name; an entry ending in * allows every ARN starting with the rest (e.g. arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/payments-*). Absent: any.',
          str('A web ACL ARN or ARN prefix with *.', { pattern: '^arn:aws[a-z-]*:wafv2:', maxLength: 2048 }),
          { maxItems: 256 },
        ),
      },
    ),
    inboundCIDRs: arr(
      'The CIDRs the security group Skylift manages for a load balancer (a MyIngress without spec.securityGroups) may let in: each of spec.inboundCIDRs — or, without it, 0.0.0.0/0 (and ::/0 with dualstack) for internet-facing and the VPC’s CIDRs for internal — must lie within one of these, e.g. [10.0.0.0/8] keeps load balancers reachable from the private network only. Absent: any. With securityGroups set here, also what lets a MyIngress without spec.securityGroups have a managed group at all. Groups named in spec.securityGroups are limited by securityGroups, not by this.',
      str('A CIDR, e.g. 10.0.0.0/8 or 0.0.0.0/0.', {
        maxLength: 43,
        'x-kubernetes-validations': [
          { rule: 'isCIDR(self)', message: 'must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32' },
        ],
      }),
      { maxItems: 32 },
    ),
    endpointSliceManagers: arr(
      'Other managers (the endpointslice.kubernetes.io/managed-by label) whose EndpointSlices may give a MyIngress its targets — and the backends a namespace’s MyIngressGroup members and HTTPRoutes bring to a shared load balancer — besides Kubernetes’ EndpointSlice controller (always trusted), e.g. a mesh’s controller. Whoever can create such a slice can put any address behind the load balancer. `*` trusts every EndpointSlice of the Service, also one that names no manager (hand-made): only for namespaces where RBAC keeps others from writing EndpointSlices (Kubernetes’ default admin and edit roles do not grant it).',
      str('A managed-by value, or * for any.', { minLength: 1, maxLength: 253 }),
      { maxItems: 16 },
    ),
  }),
};

/** CEL: the policy's lb section, as an optional. */
const LB = celSection(loadBalancerGuardrailSection.key);

/** The policy's loadBalancers section, or undefined. Pure. */
export function loadBalancerGuardrailsOf(policy: TeamPolicy): LoadBalancerGuardrails | undefined {
  return policy.spec.guardrails?.[loadBalancerGuardrailSection.key] as LoadBalancerGuardrails | undefined;
}

/** True when `arn` is listed, or starts with an entry that ends in `*`. Pure. */
export function arnAllowed(arn: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => (a.endsWith('*') ? arn.startsWith(a.slice(0, -1)) : a === arn));
}

/** True when `tags` carries every pair of `required`. Pure. */
export function hasTags(
  tags: Readonly<Record<string, string>>,
  required: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(required).every(([k, v]) => tags[k] === v);
}

/** The tags of EC2 resources by ID, as a lookup gives them. */
export type TagLookup = (
  ids: readonly string[],
) => Promise<ReadonlyMap<string, Readonly<Record<string, string>>>>;

/** What {@link checkMyIngress} may look up in EC2 and ACM (reads only). */
export interface GuardLookups {
  /** The IPv4 and IPv6 CIDRs of the VPC the subnets are in. */
  readonly vpcCidrs: (subnets: readonly string[]) => Promise<{ cidrs: string[]; ipv6Cidrs: string[] }>;
  readonly subnetTags: TagLookup;
  readonly securityGroupTags: TagLookup;
  /** The tags of one ACM certificate. */
  readonly certificateTags: (arn: string) => Promise<Readonly<Record<string, string>>>;
  /** The subnets a selector's tags match. */
  readonly subnetsMatching: (tags: Readonly<Record<string, string>>) => Promise<string[]>;
  /**
   * The ARN of the certificate ACM has for a host of spec.listeners[].certificateHosts (the one the
   * adapter will use: the same shared list), or undefined when none covers it.
   */
  readonly certificateForHost: (host: string) => Promise<string | undefined>;
}

/**
 * Checks a MyIngress against the policy's loadBalancers guardrails. Looks up tags in EC2 only when
 * the policy allows by tag and the spec names resources by ID (or the reverse). Throws
 * ForbiddenError naming the policy and the field.
 */
export async function checkMyIngress(
  policy: TeamPolicy,
  spec: MyIngressSpec,
  lookups: GuardLookups,
): Promise<void> {
  const g = loadBalancerGuardrailsOf(policy);
  if (g === undefined) return;
  const scheme = spec.scheme ?? 'internet-facing';
  if (g.schemes !== undefined && !g.schemes.includes(scheme)) {
    throw forbidden(
      policy,
      'spec.scheme',
      `${scheme} load balancers are not allowed in this namespace (allowed: ${g.schemes.join(', ') || 'none'})`,
      `the scheme is fixed at create: delete this MyIngress and create it with spec.scheme: ${g.schemes[0] ?? 'internal'}, or ask the platform team to add ${scheme} to spec.guardrails.loadBalancers.schemes`,
    );
  }
  const bucket = spec.attributes?.accessLogs?.bucket;
  if (g.accessLogBuckets !== undefined && bucket !== undefined && !arnAllowed(bucket, g.accessLogBuckets)) {
    throw forbidden(
      policy,
      'spec.attributes.accessLogs.bucket',
      `${bucket} is not among the buckets this namespace’s load balancers may write access logs to (${g.accessLogBuckets.join(', ') || 'none'})`,
      'name an allowed bucket, or ask the platform team to add it to spec.guardrails.loadBalancers.accessLogBuckets',
    );
  }
  if (g.webAcls !== undefined) checkWebAcl(policy, spec, g.webAcls);
  if (g.subnets !== undefined) await checkSubnets(policy, spec, g.subnets, lookups);
  if (g.inboundCIDRs !== undefined && managedGroupKept(spec))
    await checkInbound(policy, spec, g.inboundCIDRs, lookups);
  if (g.securityGroups !== undefined) {
    const allowed = g.securityGroups;
    const groups = spec.securityGroups ?? [];
    if (groups.length === 0 && g.inboundCIDRs === undefined) {
      throw forbidden(
        policy,
        'spec.securityGroups',
        unboundedManagedGroup,
        `set spec.securityGroups to allowed groups (${describeIdsOrTags(allowed)}), or ask the platform team to set spec.guardrails.loadBalancers.inboundCIDRs`,
      );
    }
    const bad = await outside(groups, allowed, lookups.securityGroupTags);
    if (bad.length > 0) {
      throw forbidden(
        policy,
        'spec.securityGroups',
        `${bad.join(', ')} ${bad.length === 1 ? 'is' : 'are'} not among the security groups this namespace may use (${describeIdsOrTags(allowed)})`,
        'use allowed security groups, or ask the platform team to allow these in spec.guardrails.loadBalancers.securityGroups',
      );
    }
  }
  const certs = g.certificates;
  if (certs !== undefined && (certs.arns !== undefined || certs.tags !== undefined)) {
    const named: { arn: string; field: string; host?: string }[] = (spec.listeners ?? []).flatMap((l, i) => [
      ...(l.certificateArn !== undefined
        ? [{ arn: l.certificateArn, field: `spec.listeners[${i}].certificateArn` }]
        : []),
      ...(l.additionalCertificateArns ?? []).map((arn, j) => ({
        arn,
        field: `spec.listeners[${i}].additionalCertificateArns[${j}]`,
      })),
    ]);
    // Each certificate found for a host is checked like one named by ARN (a host none covers is
    // the adapter's to report: nothing would be served for it).
    for (const [i, l] of (spec.listeners ?? []).entries())
      for (const [j, host] of (l.certificateHosts ?? []).entries()) {
        const arn = await lookups.certificateForHost(host);
        if (arn !== undefined)
          named.push({ arn, field: `spec.listeners[${i}].certificateHosts[${j}]`, host });
      }
    for (const { arn, field, host } of named) {
      if (arnAllowed(arn, certs.arns ?? [])) continue;
      if (certs.tags !== undefined && hasTags(await lookups.certificateTags(arn), certs.tags)) continue;
      const allowed = [
        ...(certs.arns ?? []),
        ...(certs.tags !== undefined
          ? [
              `tagged ${Object.entries(certs.tags)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}`,
            ]
          : []),
      ].join('; ');
      throw forbidden(
        policy,
        field,
        `certificate ${arn}${host !== undefined ? `, which ACM has for ${host},` : ''} is not among the certificates this namespace may use (${allowed})`,
        host !== undefined
          ? `use a host whose certificate is allowed (or name an allowed certificate in certificateArn), or ask the platform team to allow ${arn} in spec.guardrails.loadBalancers.certificates`
          : 'use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates',
      );
    }
  }
}

/** Why a managed group is refused where the policy limits security groups and not what they open. */
const unboundedManagedGroup =
  'a load balancer without spec.securityGroups gets a security group Skylift manages, and this namespace’s TeamPolicy limits security groups without saying which CIDRs a managed one may let in (loadBalancers.inboundCIDRs)';

/** The CIDRs `allowed` lists, for messages. Pure. */
function describeCidrs(allowed: readonly string[]): string {
  return allowed.join(', ') || 'none';
}

/**
 * spec.inboundCIDRs — or the defaults the managed group gets without it (anywhere for
 * internet-facing; the VPC's CIDRs for internal, looked up in EC2) — each within an allowed CIDR.
 */
async function checkInbound(
  policy: TeamPolicy,
  spec: MyIngressSpec,
  allowed: readonly string[],
  lookups: GuardLookups,
): Promise<void> {
  const internal = (spec.scheme ?? 'internet-facing') === 'internal';
  const vpc =
    spec.inboundCIDRs === undefined && internal
      ? await lookups.vpcCidrs(
          spec.subnets ?? (await lookups.subnetsMatching(spec.subnetSelector?.tags ?? {})),
        )
      : { cidrs: [], ipv6Cidrs: [] };
  const bad = inboundCIDRs(spec, vpc).find((c) => !allowed.some((a) => cidrWithin(c, a)));
  if (bad === undefined) return;
  const what =
    spec.inboundCIDRs !== undefined
      ? `${bad} is not within the CIDRs this namespace’s load balancers may let in (${describeCidrs(allowed)})`
      : `without spec.inboundCIDRs the managed security group lets in ${bad} (${internal ? 'the VPC’s CIDR' : 'anywhere: the default for internet-facing'}), which is not within the CIDRs this namespace’s load balancers may let in (${describeCidrs(allowed)})`;
  throw forbidden(
    policy,
    'spec.inboundCIDRs',
    what,
    'set spec.inboundCIDRs to CIDRs within those, or ask the platform team to allow it in spec.guardrails.loadBalancers.inboundCIDRs',
  );
}

/** The ACLs `allowed` lists, for messages: joined, 'none' when empty, any when not listed. Pure. */
function describeWebAcls(allowed: WebAclGuardrails): string {
  return allowed.arns !== undefined ? allowed.arns.join(', ') || 'none' : 'any REGIONAL WAFv2 web ACL';
}

/** The web ACL guardrails: one required on internet-facing load balancers, and which are allowed. */
function checkWebAcl(policy: TeamPolicy, spec: MyIngressSpec, allowed: WebAclGuardrails): void {
  // An ACL left alone is not Skylift's to keep: it does not count as one.
  const arn = spec.waf?.policy === 'LeaveAlone' ? undefined : spec.waf?.webAclArn;
  if (
    allowed.requiredOnInternetFacing === true &&
    (spec.scheme ?? 'internet-facing') === 'internet-facing' &&
    arn === undefined
  ) {
    throw forbidden(
      policy,
      'spec.waf.webAclArn',
      'an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps',
      `set spec.waf.webAclArn to an allowed web ACL (${describeWebAcls(allowed)}) with spec.waf.policy Managed (the default), or ask the platform team to turn off spec.guardrails.loadBalancers.webAcls.requiredOnInternetFacing`,
    );
  }
  if (arn !== undefined && allowed.arns !== undefined && !arnAllowed(arn, allowed.arns)) {
    throw forbidden(
      policy,
      'spec.waf.webAclArn',
      `web ACL ${arn} is not among the web ACLs this namespace may use (${describeWebAcls(allowed)})`,
      'use an allowed web ACL, or ask the platform team to allow it in spec.guardrails.loadBalancers.webAcls.arns',
    );
  }
}

async function checkSubnets(
  policy: TeamPolicy,
  spec: MyIngressSpec,
  allowed: IdsOrTags,
  lookups: GuardLookups,
): Promise<void> {
  const selector = spec.subnetSelector?.tags;
  // A selector that demands the policy's tags only ever finds allowed subnets: no lookup needed.
  if (selector !== undefined && allowed.tags !== undefined && hasTags(selector, allowed.tags)) return;
  const field = spec.subnets !== undefined ? 'spec.subnets' : 'spec.subnetSelector';
  const subnets = spec.subnets ?? (await lookups.subnetsMatching(selector ?? {}));
  const bad = await outside(subnets, allowed, lookups.subnetTags);
  if (bad.length > 0) {
    throw forbidden(
      policy,
      field,
      `subnet${bad.length === 1 ? '' : 's'} ${bad.join(', ')} ${bad.length === 1 ? 'is' : 'are'} not among the subnets this namespace may use (${describeIdsOrTags(allowed)})`,
      spec.subnets !== undefined
        ? 'list allowed subnets in spec.subnets, or ask the platform team to allow these in spec.guardrails.loadBalancers.subnets'
        : `select allowed subnets${allowed.tags !== undefined ? ` (e.g. spec.subnetSelector.tags including ${JSON.stringify(allowed.tags)})` : ''}, or ask the platform team to allow these in spec.guardrails.loadBalancers.subnets`,
    );
  }
}

/** The IDs in `ids` that are neither listed in `allowed.ids` nor carry `allowed.tags`. */
async function outside(ids: readonly string[], allowed: IdsOrTags, tagsOf: TagLookup): Promise<string[]> {
  const listed = new Set(allowed.ids ?? []);
  const rest = ids.filter((id) => !listed.has(id));
  if (rest.length === 0) return [];
  const required = allowed.tags;
  if (required === undefined) return rest;
  const tags = await tagsOf(rest);
  return rest.filter((id) => !hasTags(tags.get(id) ?? {}, required));
}

function describeIdsOrTags(a: IdsOrTags): string {
  const parts = [
    ...(a.ids !== undefined ? [a.ids.join(', ')] : []),
    ...(a.tags !== undefined
      ? [
          `tagged ${Object.entries(a.tags)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}`,
        ]
      : []),
  ];
  return parts.join('; ') || 'none';
}

/**
 * EC2 and ACM lookups for the guard, through `aws`'s clients (reads only); certificates by host
 * through `hosts` (the account's shared list: give it the controller's clock and list age). A
 * client is asked for, and its SDK package loaded, only by the first lookup that needs it (issue
 * 16): checks that look nothing up (schemes, IDs against IDs) load neither.
 */
export function guardLookups(
  aws: AwsClients,
  hosts: HostCertificates = hostCertificates(
    aws,
    realClock,
    defaultMyIngressSettings.certificateListMaxAgeMs,
  ),
): GuardLookups {
  const ec2 = (): Promise<EC2Client> => aws.ec2();
  const acm = () => acmOf(aws);
  const toMap = (
    items: {
      id: string | undefined;
      tags: { Key?: string | undefined; Value?: string | undefined }[] | undefined;
    }[],
  ) =>
    new Map(
      items
        .filter(
          (
            i,
          ): i is {
            id: string;
            tags: { Key?: string | undefined; Value?: string | undefined }[] | undefined;
          } => i.id !== undefined,
        )
        .map((i) => [i.id, Object.fromEntries((i.tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']))]),
    );
  return {
    vpcCidrs: async (subnets) => {
      const out = await elbv2Call('read the VPC of the subnets for the TeamPolicy check', async () => {
        const client = await ec2();
        const { DescribeSubnetsCommand, DescribeVpcsCommand } = await import('@aws-sdk/client-ec2');
        const vpcId = (await client.send(new DescribeSubnetsCommand({ SubnetIds: [...subnets] })))
          .Subnets?.[0]?.VpcId;
        return vpcId !== undefined ? client.send(new DescribeVpcsCommand({ VpcIds: [vpcId] })) : { Vpcs: [] };
      });
      const vpc = out.Vpcs?.[0];
      return {
        cidrs: (vpc?.CidrBlockAssociationSet ?? []).flatMap((a) =>
          a.CidrBlock !== undefined ? [a.CidrBlock] : [],
        ),
        ipv6Cidrs: (vpc?.Ipv6CidrBlockAssociationSet ?? []).flatMap((a) =>
          a.Ipv6CidrBlock !== undefined ? [a.Ipv6CidrBlock] : [],
        ),
      };
    },
    subnetTags: async (ids) => {
      const out = await elbv2Call('read subnet tags for the TeamPolicy check', async () => {
        const client = await ec2();
        const { DescribeSubnetsCommand } = await import('@aws-sdk/client-ec2');
        return client.send(new DescribeSubnetsCommand({ SubnetIds: [...ids] }));
      });
      return toMap((out.Subnets ?? []).map((s) => ({ id: s.SubnetId, tags: s.Tags })));
    },
    securityGroupTags: async (ids) => {
      const out = await elbv2Call('read security group tags for the TeamPolicy check', async () => {
        const client = await ec2();
        const { DescribeSecurityGroupsCommand } = await import('@aws-sdk/client-ec2');
        return client.send(new DescribeSecurityGroupsCommand({ GroupIds: [...ids] }));
      });
      return toMap((out.SecurityGroups ?? []).map((g) => ({ id: g.GroupId, tags: g.Tags })));
    },
    certificateTags: async (arn) => {
      const out = await elbv2Call('read certificate tags for the TeamPolicy check', async () => {
        const client = await acm();
        const { ListTagsForCertificateCommand } = await import('@aws-sdk/client-acm');
        return client
          .send(new ListTagsForCertificateCommand({ CertificateArn: arn }))
          .catch((err: unknown) => {
            // A certificate this identity cannot see (another account's, or none) carries no tag it may use.
            if (hasErrorCode(err, 'ResourceNotFound') || hasErrorCode(err, 'InvalidArn')) return { Tags: [] };
            throw err;
          });
      });
      return Object.fromEntries((out.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
    },
    certificateForHost: async (host) => (await hosts.forHost(host))?.arn,
    subnetsMatching: async (tags) => {
      const out = await elbv2Call('find subnets by tag for the TeamPolicy check', async () => {
        const client = await ec2();
        const { DescribeSubnetsCommand } = await import('@aws-sdk/client-ec2');
        return client.send(
          new DescribeSubnetsCommand({
            Filters: Object.entries(tags).map(([k, v]) => ({ Name: `tag:${k}`, Values: [v] })),
          }),
        );
      });
      return (out.Subnets ?? []).map((s) => s.SubnetId ?? '').filter((s) => s !== '');
    },
  };
}

/** CEL: describeIdsOrTags of the policy's `section` (subnets or securityGroups), or 'none'. */
const celDescribe = (section: string): string => {
  const ids = `${LB}.?${section}.?ids`;
  const tags = `${LB}.?${section}.?tags`;
  const parts = `((${ids}.hasValue() ? [${ids}.value().join(', ')] : []) + (${tags}.hasValue() ? ['tagged ' + ${tags}.value().map(k, k + '=' + ${tags}.value()[k]).join(', ')] : []))`;
  return `${parts}.join('; ') == '' ? 'none' : ${parts}.join('; ')`;
};

/**
 * The load balancer guardrails at admission, for what the object alone decides: the scheme; subnets
 * and security groups listed by ID when the policy allows by ID only (tags need EC2: pass; a
 * subnetSelector needs EC2: pass); a missing spec.securityGroups where the policy limits groups and
 * not inboundCIDRs; the managed group's inbound CIDRs (an internal one's default, the VPC's, needs
 * EC2: pass); certificate ARNs when the policy
 * allows certificates by ARN only (by tag needs ACM: pass); a web ACL required on an
 * internet-facing load balancer, and the ACL named against those allowed. As {@link checkMyIngress}.
 */
export const myIngressAdmission: KindAdmission = {
  variables: [
    { name: 'scheme', expression: "object.spec.?scheme.orValue('internet-facing')" },
    { name: 'schemes', expression: `${LB}.?schemes.orValue([])` },
    {
      name: 'badSubnets',
      expression: `${LB}.?subnets.hasValue() && !${LB}.?subnets.?tags.hasValue() ? object.spec.?subnets.orValue([]).filter(s, !(s in ${LB}.?subnets.?ids.orValue([]))) : []`,
    },
    { name: 'groups', expression: 'object.spec.?securityGroups.orValue([])' },
    { name: 'allowedSubnets', expression: celDescribe('subnets') },
    { name: 'allowedGroups', expression: celDescribe('securityGroups') },
    {
      name: 'badGroups',
      expression: `${LB}.?securityGroups.hasValue() && !${LB}.?securityGroups.?tags.hasValue() ? variables.groups.filter(g, !(g in ${LB}.?securityGroups.?ids.orValue([]))) : []`,
    },
    { name: 'arns', expression: `${LB}.?certificates.?arns.orValue([])` },
    { name: 'logBuckets', expression: `${LB}.?accessLogBuckets.orValue([])` },
    {
      name: 'badCertificates',
      // Certificates allowed by tag need ACM: then an ARN not listed cannot be decided here.
      expression: `${LB}.?certificates.?arns.hasValue() && !${LB}.?certificates.?tags.hasValue() ? object.spec.?listeners.orValue([]).filter(l, has(l.certificateArn) && !${celListedOrPrefixed('l.certificateArn', 'variables.arns')}).map(l, l.certificateArn) : []`,
    },
    {
      // Per listener: whether one of its SNI certificates is not allowed (decidable by ARN only).
      name: 'badSniListeners',
      expression: `${LB}.?certificates.?arns.hasValue() && !${LB}.?certificates.?tags.hasValue() ? object.spec.?listeners.orValue([]).map(l, l.?additionalCertificateArns.orValue([]).exists(sni, !${celListedOrPrefixed('sni', 'variables.arns')})) : []`,
    },
    { name: 'badSniListener', expression: 'variables.badSniListeners.indexOf(true)' },
    {
      // The ACL Skylift keeps: none when spec.waf.policy is LeaveAlone.
      name: 'wafArn',
      expression:
        "object.spec.?waf.?policy.orValue('Managed') == 'LeaveAlone' ? '' : object.spec.?waf.?webAclArn.orValue('')",
    },
    { name: 'aclArns', expression: `${LB}.?webAcls.?arns.orValue([])` },
    {
      name: 'allowedAcls',
      expression: `${LB}.?webAcls.?arns.hasValue() ? ${celJoinOrNone('variables.aclArns')} : 'any REGIONAL WAFv2 web ACL'`,
    },
    {
      // The CIDRs the managed group lets in, when the object has one and it is decidable here:
      // spec.inboundCIDRs, or anywhere for internet-facing; an internal default needs EC2 (pass).
      name: 'cidrs',
      expression:
        "has(object.spec.securityGroups) || object.spec.?externalName.orValue('') != '' ? [] : has(object.spec.inboundCIDRs) ? object.spec.inboundCIDRs : variables.scheme == 'internet-facing' ? (object.spec.?ipAddressType.orValue('ipv4') == 'dualstack' ? ['0.0.0.0/0', '::/0'] : ['0.0.0.0/0']) : []",
    },
    { name: 'allowedCidrs', expression: `${LB}.?inboundCIDRs.orValue([])` },
    {
      name: 'badCidrs',
      expression: `${LB}.?inboundCIDRs.hasValue() ? variables.cidrs.filter(c, !variables.allowedCidrs.exists(a, a.contains(':') == c.contains(':') && cidr(a).containsCIDR(cidr(c)))) : []`,
    },
    {
      name: 'badSni',
      expression: `variables.badSniListener < 0 ? '' : object.spec.listeners[variables.badSniListener].additionalCertificateArns.filter(sni, !${celListedOrPrefixed('sni', 'variables.arns')})[0]`,
    },
  ],
  validations: [
    {
      expression: `!${LB}.?webAcls.?requiredOnInternetFacing.orValue(false) || variables.scheme != 'internet-facing' || variables.wafArn != ''`,
      messageExpression: forbidsMessage(
        'spec.waf.webAclArn',
        celString(
          'an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps; set spec.waf.webAclArn to an allowed web ACL (',
        ),
        'variables.allowedAcls',
        celString(
          ') with spec.waf.policy Managed (the default), or ask the platform team to turn off spec.guardrails.loadBalancers.webAcls.requiredOnInternetFacing',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.waf.webAclArn: an internet-facing load balancer in this namespace must have a web ACL that Skylift associates and keeps',
    },
    {
      expression: `!${LB}.?webAcls.?arns.hasValue() || variables.wafArn == '' || ${celListedOrPrefixed('variables.wafArn', 'variables.aclArns')}`,
      messageExpression: forbidsMessage(
        'spec.waf.webAclArn',
        "'web ACL ' + variables.wafArn + ' is not among the web ACLs this namespace may use (' + variables.allowedAcls + ')'",
        celString(
          '; use an allowed web ACL, or ask the platform team to allow it in spec.guardrails.loadBalancers.webAcls.arns',
        ),
      ),
      message: 'a TeamPolicy forbids spec.waf.webAclArn: a web ACL this namespace may not use',
    },
    {
      expression: `!${LB}.?schemes.hasValue() || variables.scheme in variables.schemes`,
      messageExpression: forbidsMessage(
        'spec.scheme',
        `variables.scheme + ' load balancers are not allowed in this namespace (allowed: ' + ${celJoinOrNone('variables.schemes')} + ')'`,
        "'; the scheme is fixed at create: delete this MyIngress and create it with spec.scheme: ' + (size(variables.schemes) > 0 ? variables.schemes[0] : 'internal')",
        "', or ask the platform team to add ' + variables.scheme + ' to spec.guardrails.loadBalancers.schemes'",
      ),
      message: 'a TeamPolicy forbids spec.scheme: this scheme is not allowed in this namespace',
    },
    {
      expression: 'size(variables.badSubnets) == 0',
      messageExpression: forbidsMessage(
        'spec.subnets',
        "(size(variables.badSubnets) == 1 ? 'subnet ' : 'subnets ') + variables.badSubnets.join(', ') + (size(variables.badSubnets) == 1 ? ' is' : ' are')",
        `' not among the subnets this namespace may use (' + variables.allowedSubnets + ')'`,
        celString(
          '; list allowed subnets in spec.subnets, or ask the platform team to allow these in spec.guardrails.loadBalancers.subnets',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.subnets: some subnets are not among the subnets this namespace may use',
    },
    {
      expression: `!${LB}.?securityGroups.hasValue() || size(variables.groups) > 0 || ${LB}.?inboundCIDRs.hasValue()`,
      messageExpression: forbidsMessage(
        'spec.securityGroups',
        celString(`${unboundedManagedGroup}; set spec.securityGroups to allowed groups (`),
        'variables.allowedGroups',
        celString('), or ask the platform team to set spec.guardrails.loadBalancers.inboundCIDRs'),
      ),
      message: `a TeamPolicy forbids spec.securityGroups: ${unboundedManagedGroup}`,
    },
    {
      expression: 'size(variables.badCidrs) == 0',
      messageExpression: forbidsMessage(
        'spec.inboundCIDRs',
        `(has(object.spec.inboundCIDRs) ? variables.badCidrs[0] + ' is not within' : 'without spec.inboundCIDRs the managed security group lets in ' + variables.badCidrs[0] + ' (anywhere: the default for internet-facing), which is not within')`,
        `' the CIDRs this namespace’s load balancers may let in (' + ${celJoinOrNone('variables.allowedCidrs')} + ')'`,
        celString(
          '; set spec.inboundCIDRs to CIDRs within those, or ask the platform team to allow it in spec.guardrails.loadBalancers.inboundCIDRs',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.inboundCIDRs: the managed security group would let in CIDRs this namespace’s load balancers may not',
    },
    {
      expression: 'size(variables.badGroups) == 0',
      messageExpression: forbidsMessage(
        'spec.securityGroups',
        "variables.badGroups.join(', ') + (size(variables.badGroups) == 1 ? ' is' : ' are')",
        `' not among the security groups this namespace may use (' + variables.allowedGroups + ')'`,
        celString(
          '; use allowed security groups, or ask the platform team to allow these in spec.guardrails.loadBalancers.securityGroups',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.securityGroups: some security groups are not among the groups this namespace may use',
    },
    {
      expression: `!${LB}.?accessLogBuckets.hasValue() || !has(object.spec.attributes) || !has(object.spec.attributes.accessLogs) || ${celListedOrPrefixed('object.spec.attributes.accessLogs.bucket', 'variables.logBuckets')}`,
      messageExpression: forbidsMessage(
        'spec.attributes.accessLogs.bucket',
        `object.spec.attributes.accessLogs.bucket + ' is not among the buckets this namespace’s load balancers may write access logs to (' + ${celJoinOrNone('variables.logBuckets')} + ')'`,
        celString(
          '; name an allowed bucket, or ask the platform team to add it to spec.guardrails.loadBalancers.accessLogBuckets',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.attributes.accessLogs.bucket: a bucket this namespace’s load balancers may not write access logs to',
    },
    {
      expression: 'size(variables.badCertificates) == 0',
      messageExpression: [
        "'TeamPolicy ' + params.metadata.name + ' forbids spec.listeners[' + string(object.spec.?listeners.orValue([]).map(l, l.?certificateArn.orValue('')).indexOf(variables.badCertificates[0])) + '].certificateArn: certificate '",
        "variables.badCertificates[0] + ' is not among the certificates this namespace may use (' + variables.arns.join('; ') + ')'",
        celString(
          '; use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates',
        ),
      ].join(' + '),
      message:
        'a TeamPolicy forbids spec.listeners[].certificateArn: a certificate is not among the certificates this namespace may use',
    },
    {
      expression: 'variables.badSniListener < 0',
      messageExpression: [
        "'TeamPolicy ' + params.metadata.name + ' forbids spec.listeners[' + string(variables.badSniListener) + '].additionalCertificateArns[' + string(object.spec.listeners[variables.badSniListener].additionalCertificateArns.indexOf(variables.badSni)) + ']: certificate '",
        "variables.badSni + ' is not among the certificates this namespace may use (' + variables.arns.join('; ') + ')'",
        celString(
          '; use an allowed certificate, or ask the platform team to allow it in spec.guardrails.loadBalancers.certificates',
        ),
      ].join(' + '),
      message:
        'a TeamPolicy forbids spec.listeners[].additionalCertificateArns: a certificate is not among the certificates this namespace may use',
    },
  ],
};
