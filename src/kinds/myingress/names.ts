import { createHash } from 'node:crypto';

function hash(text: string, n: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, n);
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** ELBv2 names: at most 32 characters of [a-zA-Z0-9-], no leading or trailing hyphen. */
function fit(name: string): string {
  return name.slice(0, 32).replace(/-+$/, '');
}

/**
 * The deterministic load balancer name of a MyIngress: a hash of its uid
 * (unique, stable across restarts) plus a readable hint. Pure.
 */
export function loadBalancerName(namespace: string, name: string, uid: string): string {
  return fit(`sky-${hash(uid, 8)}-${slug(`${namespace}-${name}`)}`);
}

/** The deterministic target group name for one backend (service and port) of a MyIngress. Pure. */
export function targetGroupName(uid: string, service: string, port: number): string {
  return fit(`sky-${hash(`${uid}/${service}/${port}`, 8)}-${slug(service)}-${port}`);
}

/**
 * The deterministic name of the security group Skylift manages for a MyIngress's load balancer
 * (unique per VPC; up to 255 characters, no `sg-` prefix, which AWS reserves). Pure.
 */
export function securityGroupName(namespace: string, name: string, uid: string): string {
  return `sky-${hash(uid, 8)}-${slug(`${namespace}-${name}`)}`.slice(0, 255).replace(/-+$/, '');
}
