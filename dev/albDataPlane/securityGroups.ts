// Which clients a load balancer's security groups let in, as the ALB data plane enforces it: a
// connection to a listener port is accepted only from an address some inbound rule of one of the
// load balancer's groups allows for that port (docs/development.md, "The ALB data plane").
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { SecurityGroup } from '@aws-sdk/client-ec2';

/** Who may connect to one listener: everyone, or the addresses within these CIDRs. */
export type Admission = { readonly all: true } | { readonly all: false; readonly cidrs: readonly string[] };

/**
 * Who may connect to `port` of a load balancer in `groupIds`, from the groups' inbound rules
 * (`groups`: what DescribeSecurityGroups returned). No groups: everyone (a load balancer the emulator
 * gave no group, as before the data plane modelled them). A rule for TCP or all traffic whose port
 * range holds `port` admits its IPv4 and IPv6 CIDRs; rules naming other groups or prefix lists admit
 * no loopback client, so they count for nothing here; a group not found admits nothing. Pure.
 */
export function admissionFor(
  groupIds: readonly string[],
  groups: readonly SecurityGroup[],
  port: number,
): Admission {
  if (groupIds.length === 0) return { all: true };
  const cidrs: string[] = [];
  for (const id of groupIds) {
    const g = groups.find((x) => x.GroupId === id);
    for (const p of g?.IpPermissions ?? []) {
      const proto = p.IpProtocol ?? '-1';
      const allPorts = proto === '-1' || ((p.FromPort ?? -1) === -1 && (p.ToPort ?? -1) === -1);
      if (proto !== 'tcp' && proto !== '6' && proto !== '-1') continue;
      if (!allPorts && !(port >= (p.FromPort ?? 0) && port <= (p.ToPort ?? 65535))) continue;
      for (const r of p.IpRanges ?? []) if (r.CidrIp !== undefined) cidrs.push(r.CidrIp);
      for (const r of p.Ipv6Ranges ?? []) if (r.CidrIpv6 !== undefined) cidrs.push(r.CidrIpv6);
    }
  }
  return { all: false, cidrs: [...new Set(cidrs)].sort() };
}

/** Whether `address` (as a socket reports it, IPv4-mapped IPv6 included) is admitted. Pure. */
export function admits(a: Admission, address: string): boolean {
  if (a.all) return true;
  const ip = address.replace(/^::ffff:/, '');
  const family = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
  if (family === undefined) return false;
  const list = new BlockList();
  for (const c of a.cidrs) {
    const slash = c.lastIndexOf('/');
    const net = c.slice(0, slash);
    const prefix = Number(c.slice(slash + 1));
    const f = isIPv4(net) ? 'ipv4' : isIPv6(net) ? 'ipv6' : undefined;
    if (f === undefined || !Number.isInteger(prefix)) continue;
    list.addSubnet(net, prefix, f);
  }
  return list.check(ip, family);
}

/** Two admissions are the same. Pure. */
export function sameAdmission(a: Admission, b: Admission): boolean {
  if (a.all || b.all) return a.all === b.all;
  return a.cidrs.join(',') === b.cidrs.join(',');
}
