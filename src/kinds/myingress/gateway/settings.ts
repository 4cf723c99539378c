// Where a Gateway's load balancer goes: the Gateway controller's flags of `skylift run` (the
// Gateway API has no field for an ALB's scheme or subnets; the AWS Load Balancer Controller reads
// them from a LoadBalancerConfiguration, Skylift from these until GatewayClass parameters exist).
import { SettingsError } from '../../../runtime/settings.ts';
import type { KindFlag } from '../../module.ts';
import { defaultGatewayDefaults, type GatewayDefaults } from './status.ts';

/** The Gateway controller's flags. */
export const gatewayFlags: readonly KindFlag[] = [
  {
    name: 'gateway-scheme',
    env: 'SKYLIFT_GATEWAY_SCHEME',
    placeholder: 'SCHEME',
    usage: `the scheme of every Gateway's Application Load Balancer: internal or internet-facing (default ${defaultGatewayDefaults.scheme})`,
  },
  {
    name: 'gateway-subnet-tags',
    env: 'SKYLIFT_GATEWAY_SUBNET_TAGS',
    placeholder: 'KEY=VALUE,…',
    usage: `the tags of the subnets a Gateway's load balancer is placed in, one per Availability Zone: by default the role tag the AWS Load Balancer Controller discovers subnets by (default ${Object.entries(
      defaultGatewayDefaults.subnetTags,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(',')})`,
  },
  {
    name: 'gateway-inbound-cidrs',
    env: 'SKYLIFT_GATEWAY_INBOUND_CIDRS',
    placeholder: 'CIDR,…',
    usage:
      "who may connect to a Gateway's listeners through the security group Skylift manages (default: the VPC's CIDRs for internal, anywhere for internet-facing)",
  },
];

/** The Gateway defaults from flag values by name; absent ones take the defaults. Throws SettingsError. Pure. */
export function parseGatewaySettings(values: ReadonlyMap<string, string>): GatewayDefaults {
  const scheme = values.get('gateway-scheme') ?? defaultGatewayDefaults.scheme;
  if (scheme !== 'internal' && scheme !== 'internet-facing')
    throw new SettingsError(`--gateway-scheme: ${JSON.stringify(scheme)} is not internal or internet-facing`);
  const tagsText = values.get('gateway-subnet-tags');
  let subnetTags = defaultGatewayDefaults.subnetTags;
  if (tagsText !== undefined) {
    const tags: Record<string, string> = {};
    for (const pair of tagsText
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new SettingsError(`--gateway-subnet-tags: ${JSON.stringify(pair)} is not KEY=VALUE`);
      tags[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    if (Object.keys(tags).length === 0)
      throw new SettingsError('--gateway-subnet-tags: name at least one KEY=VALUE');
    subnetTags = tags;
  }
  const cidrsText = values.get('gateway-inbound-cidrs');
  const cidrs = cidrsText
    ?.split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  for (const c of cidrs ?? [])
    if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(c))
      throw new SettingsError(`--gateway-inbound-cidrs: ${JSON.stringify(c)} is not an IPv4 CIDR`);
  return { scheme, subnetTags, ...(cidrs !== undefined && cidrs.length > 0 ? { inboundCIDRs: cidrs } : {}) };
}
