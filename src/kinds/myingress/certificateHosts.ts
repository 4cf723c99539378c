// spec.listeners[].certificateHosts: the ACM certificates found for a listener's hosts, merged
// with the certificates it names by ARN into the listener Skylift applies; a host no certificate
// covers holds its listener back (never another certificate in its place) and says what to do.
import type { ReadyState } from '../../runtime/adapter.ts';
import type { ListenerSpec, MyIngressSpec } from './api.ts';

/** The Ready reason of a listener host that no ISSUED ACM certificate covers. */
export const CertificateReason = {
  CertificateNotFound: 'CertificateNotFound',
} as const;

/** One certificateHosts entry with the certificate found for it (undefined: none). */
export interface HostCertificate {
  /** The path of the entry, e.g. `spec.listeners[1].certificateHosts[0]`. */
  readonly field: string;
  readonly host: string;
  readonly arn: string | undefined;
}

/** What was found for every listener's certificateHosts, by listener index. */
export interface CertificateResolution {
  /** The region the certificates were looked up in (the load balancer's). */
  readonly region: string;
  /** By listener index, in spec order; empty for a listener without certificateHosts. */
  readonly hosts: readonly (readonly HostCertificate[])[];
}

/** True when any listener of `spec` names hosts whose certificates must be looked up. Pure. */
export function usesCertificateHosts(spec: MyIngressSpec): boolean {
  return (spec.listeners ?? []).some((l) => (l.certificateHosts ?? []).length > 0);
}

/**
 * Looks up every listener's certificateHosts with `find` (the certificate ARN for a host, or
 * undefined), in spec order. Calls `find` once per distinct host. Read-only.
 */
export async function resolveCertificateHosts(
  spec: MyIngressSpec,
  region: string,
  find: (host: string) => Promise<string | undefined>,
): Promise<CertificateResolution> {
  const found = new Map<string, string | undefined>();
  const hosts: HostCertificate[][] = [];
  for (const [i, l] of (spec.listeners ?? []).entries()) {
    const out: HostCertificate[] = [];
    for (const [j, host] of (l.certificateHosts ?? []).entries()) {
      const key = host.toLowerCase();
      if (!found.has(key)) found.set(key, await find(host));
      out.push({ field: `spec.listeners[${i}].certificateHosts[${j}]`, host, arn: found.get(key) });
    }
    hosts.push(out);
  }
  return { region, hosts };
}

/**
 * The ports of the listeners held back: those with a host no certificate covers. Skylift neither
 * creates nor changes such a listener (it keeps what AWS has) until every host is covered. Pure.
 */
export function heldListeners(spec: MyIngressSpec, r: CertificateResolution | undefined): Set<number> {
  const held = new Set<number>();
  if (r === undefined) return held;
  (spec.listeners ?? []).forEach((l, i) => {
    if ((r.hosts[i] ?? []).some((h) => h.arn === undefined)) held.add(l.port);
  });
  return held;
}

/**
 * The listener as applied, its hosts' certificates merged in: the default is certificateArn, else
 * the first host's certificate; the SNI certificates are additionalCertificateArns, then the other
 * hosts' certificates, without repeats (and never the default). A listener without
 * certificateHosts, or one held back, is returned as the spec has it, less certificateHosts. Pure.
 */
export function appliedListener(l: ListenerSpec, hosts: readonly HostCertificate[]): ListenerSpec {
  const { certificateHosts: _hosts, ...rest } = l;
  const arns = hosts.map((h) => h.arn);
  if (arns.length === 0 || arns.some((a) => a === undefined)) return rest;
  const found = arns.filter((a): a is string => a !== undefined);
  const certificateArn = l.certificateArn ?? found[0];
  const sni: string[] = [];
  for (const arn of [...(l.additionalCertificateArns ?? []), ...found])
    if (arn !== certificateArn && !sni.includes(arn)) sni.push(arn);
  return {
    ...rest,
    ...(certificateArn !== undefined ? { certificateArn } : {}),
    ...(sni.length > 0 ? { additionalCertificateArns: sni } : {}),
  };
}

/**
 * The spec as Skylift applies it: each listener's certificateHosts replaced by the certificates
 * found ({@link appliedListener}). The same object when no listener names hosts (or nothing was
 * looked up), so a spec without certificateHosts is compared and remembered exactly as before. Pure.
 */
export function appliedSpec(spec: MyIngressSpec, r: CertificateResolution | undefined): MyIngressSpec {
  if (r === undefined || !usesCertificateHosts(spec)) return spec;
  return { ...spec, listeners: (spec.listeners ?? []).map((l, i) => appliedListener(l, r.hosts[i] ?? [])) };
}

/**
 * Ready=False `CertificateNotFound` (actionRequired: a person must issue or import a certificate)
 * naming each host no certificate covers, with its field, the region and a fix that works; undefined
 * when every host is covered. Pure.
 */
export function certificatesReady(r: CertificateResolution | undefined): ReadyState | undefined {
  const missing = (r?.hosts ?? []).flat().filter((h) => h.arn === undefined);
  if (r === undefined || missing.length === 0) return undefined;
  const sentences = missing.map((m) => {
    const listener = m.field.replace(/\.certificateHosts\[\d+\]$/, '');
    return `${m.field} ${JSON.stringify(m.host)}: no ISSUED ACM certificate in ${r.region} covers ${m.host}, so the listener is left as it is; request or import a certificate for ${m.host} in ACM in ${r.region}, or set ${listener}.certificateArn and remove the host.`;
  });
  return {
    ready: false,
    reason: CertificateReason.CertificateNotFound,
    message: sentences.join(' '),
    actionRequired: true,
  };
}
