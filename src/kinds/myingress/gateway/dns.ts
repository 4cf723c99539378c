// Route 53 records for the hostnames of a Gateway's routes (docs/gateway.md, "DNS"): a Gateway
// annotated `skylift.dev/dns-zone: <zone name>` gets one DNSRecord per distinct hostname its
// attached routes serve inside that zone — an alias A record to the Gateway's load balancer — in
// the Gateway's namespace, owned by the Gateway. The DNSRecord kind does the Route 53 work
// (ownership TXT, batching, TeamPolicy guardrails); this module only plans which objects the
// Gateway controller applies and deletes, tells its own objects from anyone else's, and says how
// they stand as a Gateway condition. Pure.
import { createHash } from 'node:crypto';
import { gatewayApiGroup, gatewayType, type Gateway } from '../../../apis/gatewayApi.ts';
import { apiGroup, apiVersion } from '../../../apis/crd.ts';
import type { ManagedObject, ManagedSpec, ManagedStatus } from '../../../apis/managed.ts';
import type { ResourceType } from '../../../apis/meta.ts';
import { ConditionType, getCondition } from '../../../runtime/conditions.ts';
import { isWildcard } from './hostnames.ts';
import type { Verdict } from './listeners.ts';

// The DNSRecord kind as the Gateway controller writes and reads it. The DNSRecord kind's folder
// imports MyIngress's api.ts (its alias follows a MyIngress), so MyIngress's folder cannot import
// DNSRecord's back (rooms have no cycles, test/unit/architecture.test.ts): the resource type and the
// fields used are restated here, and test/unit/gatewayDns.test.ts proves them the same as
// src/kinds/dnsrecord/api.ts's (the type, and a DNSRecord assignable to GatewayDnsRecord).

/** The DNSRecord resource (equal to src/kinds/dnsrecord/api.ts's dnsRecordType). */
export const dnsRecordResource: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'dnsrecords',
  kind: 'DNSRecord',
  namespaced: true,
};

/** The DNSRecord spec fields the Gateway controller writes or compares (a subset of DNSRecordSpec). */
export interface GatewayDnsRecordSpec extends ManagedSpec {
  zoneId?: string;
  zoneName?: string;
  name: string;
  type: string;
  aliasTarget?: { dnsName?: string; hostedZoneId?: string; evaluateTargetHealth?: boolean };
  setIdentifier?: string;
}

/** A DNSRecord as the Gateway controller reads it (any DNSRecord of the namespace). */
export type GatewayDnsRecord = ManagedObject<
  GatewayDnsRecordSpec,
  ManagedStatus & { fqdn?: string | undefined }
>;

/** Gateway annotation opting in: the Route 53 hosted zone (by name) the routes' hostnames go to. */
export const dnsZoneAnnotation = 'skylift.dev/dns-zone';
/** Label on the DNSRecords a Gateway makes: the Gateway's name (shortened with a hash past 63). */
export const gatewayRecordLabel = 'skylift.dev/gateway';
/** The Gateway condition saying how its DNSRecords stand (a domain-prefixed custom type). */
export const dnsConditionType = 'skylift.dev/DNSRecordsReady';

/** Reasons of the {@link dnsConditionType} condition. */
export const DnsReason = {
  /** Every hostname of the attached routes is in the zone and its record is Ready. */
  Ready: 'Ready',
  /** Records are being made or propagated, or the load balancer has no DNS name yet. */
  Pending: 'Pending',
  /** Some hostnames are outside the zone and are not published (the others may be). */
  HostnamesOutsideZone: 'HostnamesOutsideZone',
  /** A record was refused (TeamPolicy, admission, Route 53) or conflicts with someone else's. */
  RecordsNotSynced: 'RecordsNotSynced',
} as const;

/** The longest value a label takes. */
const maxLabelValue = 63;
/** The longest object name Kubernetes takes (a DNS subdomain). */
const maxName = 253;
/** At most this many names are listed in one condition message (the rest are counted). */
const maxListed = 10;

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 10);
}

/** A host or zone name without case or trailing dot. Pure. */
function bare(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * The zone a Gateway publishes its routes' hostnames in: its `skylift.dev/dns-zone` annotation,
 * lower case, without a trailing dot; undefined when absent or empty (the Gateway makes no
 * DNSRecords). Pure.
 */
export function gatewayDnsZone(gw: Gateway): string | undefined {
  const v = gw.metadata.annotations?.[dnsZoneAnnotation];
  if (v === undefined) return undefined;
  const z = bare(v);
  return z === '' ? undefined : z;
}

/**
 * Whether `hostname` (possibly a wildcard `*.a.example.com`) is a name of zone `zone`: the apex
 * itself or a name under it, case and trailing dot aside. A wildcard covering the zone's parent
 * (`*.com` for `example.com`) is not. Pure.
 */
export function hostnameInZone(hostname: string, zone: string): boolean {
  const h = bare(hostname);
  const z = bare(zone);
  return h === z || h.endsWith(`.${z}`);
}

/** The label value naming Gateway `name` on its DNSRecords: the name, or a shortened one with a hash. Pure. */
export function gatewayLabelValue(name: string): string {
  if (name.length <= maxLabelValue) return name;
  return `${name.slice(0, maxLabelValue - 11).replace(/[.-]+$/, '')}-${hash(name)}`;
}

/**
 * The DNSRecord object name for `hostname` of Gateway `gateway`: `<gateway>.<hostname>`, a
 * wildcard `*.rest` as `<gateway>.wildcard.<rest>`; shortened with a hash of both past 253
 * characters, or when `taken` (another hostname of the plan has the name). Pure.
 */
export function gatewayRecordName(gateway: string, hostname: string, taken = false): string {
  const h = bare(hostname);
  const full = `${gateway}.${isWildcard(h) ? `wildcard.${h.slice(2)}` : h}`;
  if (full.length <= maxName && !taken) return full;
  const suffix = hash(`${gateway}/${h}`);
  return `${full.slice(0, maxName - suffix.length - 1).replace(/[.-]+$/, '')}-${suffix}`;
}

/** A hostname one route serves on the Gateway (an intersection of the route's and a listener's). */
export interface ServedHostname {
  /** The route, `<kind> namespace/name` (e.g. `HTTPRoute team-a/shop`). */
  readonly route: string;
  readonly hostname: string;
}

/** One record the Gateway wants: its hostname, the routes serving it, and the DNSRecord's name. */
export interface WantedRecord {
  readonly hostname: string;
  readonly routes: readonly string[];
  readonly objectName: string;
}

/** Which records a Gateway wants in its zone, and which hostnames it leaves out. */
export interface DnsPlan {
  readonly zone: string;
  /** The hostnames inside the zone, one record each, by hostname. */
  readonly records: readonly WantedRecord[];
  /** The hostnames outside the zone (not published), by hostname, with their routes. */
  readonly outside: readonly { readonly hostname: string; readonly routes: readonly string[] }[];
}

/**
 * The records Gateway `gateway` wants in `zone` for the hostnames its attached routes serve:
 * one per distinct hostname (case and trailing dot aside; a wildcard is its own name) inside the
 * zone, the routes serving each sorted; the others in `outside`. Object names are given to plain
 * hostnames first, so a wildcard whose name a plain hostname has (`*.x` and `wildcard.x`) is the
 * one shortened with a hash, and a plain hostname's record keeps its name. Pure.
 */
export function planGatewayDns(gateway: string, zone: string, served: readonly ServedHostname[]): DnsPlan {
  const z = bare(zone);
  const byHost = new Map<string, Set<string>>();
  for (const s of served) {
    const h = bare(s.hostname);
    if (h === '') continue;
    const routes = byHost.get(h) ?? new Set<string>();
    routes.add(s.route);
    byHost.set(h, routes);
  }
  const hosts = [...byHost.keys()].sort();
  const inside = hosts.filter((h) => hostnameInZone(h, z));
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const h of [...inside.filter((x) => !isWildcard(x)), ...inside.filter(isWildcard)]) {
    let n = gatewayRecordName(gateway, h);
    if (used.has(n)) n = gatewayRecordName(gateway, h, true);
    used.add(n);
    names.set(h, n);
  }
  const routesOf = (h: string): string[] => [...(byHost.get(h) ?? [])].sort();
  return {
    zone: z,
    records: inside.map((h) => ({ hostname: h, routes: routesOf(h), objectName: names.get(h) ?? '' })),
    outside: hosts.filter((h) => !hostnameInZone(h, z)).map((h) => ({ hostname: h, routes: routesOf(h) })),
  };
}

/** The load balancer an alias points at: its DNS name and canonical hosted zone ID. */
export interface AliasOf {
  readonly dnsName: string;
  readonly hostedZoneId: string;
}

/** A DNSRecord as the Gateway controller server-side applies it (every field it owns). */
export interface GatewayDnsRecordApply {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean }[];
  };
  spec: GatewayDnsRecordSpec & { type: 'A' };
}

/**
 * The DNSRecord of `record` for Gateway `gw`: in the Gateway's namespace, labelled with
 * {@link gatewayRecordLabel}, owned by the Gateway (controller reference, so Kubernetes's garbage
 * collector deletes it with the Gateway; no blockOwnerDeletion, which would need rights on the
 * Gateway's finalizers), an A record named by its fully qualified hostname in zone `zone` (by
 * name), aliasing the load balancer `alias` without evaluating target health. Pure.
 */
export function gatewayDnsRecord(
  gw: Gateway,
  zone: string,
  record: WantedRecord,
  alias: AliasOf,
): GatewayDnsRecordApply {
  return {
    apiVersion: `${apiGroup}/${apiVersion}`,
    kind: dnsRecordResource.kind,
    metadata: {
      name: record.objectName,
      namespace: gw.metadata.namespace ?? '',
      labels: { [gatewayRecordLabel]: gatewayLabelValue(gw.metadata.name) },
      ownerReferences: [
        {
          apiVersion: `${gatewayType.group}/${gatewayType.version}`,
          kind: gatewayType.kind,
          name: gw.metadata.name,
          uid: gw.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      zoneName: bare(zone),
      name: `${record.hostname}.`,
      type: 'A',
      aliasTarget: { dnsName: alias.dnsName, hostedZoneId: alias.hostedZoneId, evaluateTargetHealth: false },
    },
  };
}

/**
 * The Gateway a DNSRecord says it was made by: its controller ownerReference to a Gateway, when
 * the record also carries the {@link gatewayRecordLabel} of that Gateway's name; else undefined
 * (never one of a Gateway's). Pure.
 */
export function recordGateway(
  r: GatewayDnsRecord,
): { namespace: string; name: string; uid: string } | undefined {
  const label = r.metadata.labels?.[gatewayRecordLabel];
  if (label === undefined) return undefined;
  const ref = r.metadata.ownerReferences?.find(
    (o) =>
      o.controller === true &&
      o.kind === gatewayType.kind &&
      o.apiVersion.split('/')[0] === gatewayApiGroup &&
      gatewayLabelValue(o.name) === label,
  );
  return ref === undefined
    ? undefined
    : { namespace: r.metadata.namespace ?? '', name: ref.name, uid: ref.uid };
}

/**
 * True when the DNSRecord was made by Gateway `namespace/name` — and by the Gateway of uid `uid`
 * when given (a Gateway that is gone has none to compare; a new Gateway of the same name is
 * another). The label and the controller ownerReference must both say so. Pure.
 */
export function madeByGateway(r: GatewayDnsRecord, namespace: string, name: string, uid?: string): boolean {
  const g = recordGateway(r);
  return (
    g !== undefined && g.namespace === namespace && g.name === name && (uid === undefined || g.uid === uid)
  );
}

/** A DNSRecord's fully qualified name (lower case, no trailing dot), when it can be told without Route 53. Pure. */
export function recordHostname(r: GatewayDnsRecord): string | undefined {
  if (r.status?.fqdn !== undefined && r.status.fqdn !== '') return bare(r.status.fqdn);
  const n = r.spec.name.trim();
  if (n.endsWith('.')) return bare(n);
  const zone = r.spec.zoneName;
  if (zone === undefined) return undefined;
  const z = bare(zone);
  if (n === '@') return z;
  const lower = bare(n);
  return lower === z || lower.endsWith(`.${z}`) ? lower : `${lower}.${z}`;
}

/** How one wanted record stands. */
export type RecordState =
  | { readonly state: 'ready' }
  | { readonly state: 'pending'; readonly message: string }
  | { readonly state: 'failed'; readonly message: string };

/**
 * How a Gateway's DNSRecord stands from its status: ready (Ready=True at its generation), failed
 * (Synced=False: a TeamPolicy guardrail, Route 53's refusal or an ownership conflict — the
 * condition's reason and message), else pending (not looked at yet, being written or
 * propagated). Pure.
 */
export function recordState(r: GatewayDnsRecord): RecordState {
  const gen = r.metadata.generation;
  const conditions = r.status?.conditions;
  const synced = getCondition(conditions, ConditionType.Synced);
  const ready = getCondition(conditions, ConditionType.Ready);
  const current = (c: { observedGeneration?: number } | undefined): boolean =>
    c !== undefined &&
    (gen === undefined || c.observedGeneration === undefined || c.observedGeneration === gen);
  if (synced?.status === 'False' && current(synced))
    return { state: 'failed', message: `${synced.reason}: ${synced.message}` };
  if (ready?.status === 'True' && current(ready)) return { state: 'ready' };
  return {
    state: 'pending',
    message: ready !== undefined ? `${ready.reason}: ${ready.message}` : 'not looked at yet',
  };
}

/** `items`, at most {@link maxListed} of them, then how many more. Pure. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, maxListed).join('; ');
  return items.length > maxListed ? `${shown}; and ${items.length - maxListed} more` : shown;
}

/**
 * The {@link dnsConditionType} condition of a Gateway from its plan and the state of each wanted
 * record (by hostname; a missing one is pending): True/`Ready` when every hostname is published
 * and Ready; else False with, in this order of precedence, `RecordsNotSynced` (a record refused
 * or conflicting, naming each), `HostnamesOutsideZone` (naming them and their routes), `Pending`.
 * The message says all that holds, not just the reason's part. Pure.
 */
export function dnsVerdict(plan: DnsPlan, states: ReadonlyMap<string, RecordState>): Verdict {
  const failed: string[] = [];
  const pending: string[] = [];
  for (const r of plan.records) {
    const s = states.get(r.hostname) ?? { state: 'pending', message: 'not made yet' };
    if (s.state === 'failed') failed.push(`${r.hostname}: ${s.message}`);
    else if (s.state === 'pending') pending.push(`${r.hostname} (${s.message})`);
  }
  const outside = plan.outside.map((o) => `${o.hostname} (${o.routes.join(', ')})`);
  const parts: string[] = [];
  if (failed.length > 0) parts.push(`not synced: ${listed(failed)}`);
  if (outside.length > 0) parts.push(`outside zone ${plan.zone}, not published: ${listed(outside)}`);
  if (pending.length > 0) parts.push(`pending: ${listed(pending)}`);
  if (parts.length === 0)
    return {
      status: 'True',
      reason: DnsReason.Ready,
      message:
        plan.records.length === 0
          ? `no route hostname to publish in zone ${plan.zone}`
          : `${plan.records.length} record(s) in zone ${plan.zone} alias the load balancer`,
    };
  const reason =
    failed.length > 0
      ? DnsReason.RecordsNotSynced
      : outside.length > 0
        ? DnsReason.HostnamesOutsideZone
        : DnsReason.Pending;
  return { status: 'False', reason, message: parts.join('. ') };
}
