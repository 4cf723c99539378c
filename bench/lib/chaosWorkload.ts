// The mixed set of objects a chaos run converges and then half deletes:
// DNSRecords over two zones (some of them aliases to a MyIngress),
// MyIngresses with their Services and stand-in EndpointSlices, ManagedDBs.
// Pure: the same seed gives the same objects.
import type { DNSRecordSpec } from '../../src/kinds/dnsrecord/api.ts';
import type { ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { standInEndpointSlices } from '../../dev/samples.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import type { SeededRandom } from './chaosRandom.ts';
import type { SkyliftKind } from './invariants.ts';

/** One Skylift object of the workload. */
export interface WorkloadItem {
  readonly kind: SkyliftKind;
  readonly namespace: string;
  readonly name: string;
  readonly object: KubeObject;
  /** Deleted together with this item's group (a MyIngress and the aliases pointing at it). */
  readonly group: string;
}

/** Everything a chaos run applies. */
export interface Workload {
  /** Services and EndpointSlices, applied before the Skylift objects. */
  readonly supporting: readonly KubeObject[];
  /** The Skylift objects, in the (shuffled) order they are applied. */
  readonly items: readonly WorkloadItem[];
}

/** Share of each kind in the workload (they need not add up to 1; DNSRecords take the rest). */
export interface WorkloadMix {
  readonly myIngress: number;
  readonly managedDb: number;
}

/** The default mix: 60 % DNSRecords, 25 % MyIngresses, 15 % ManagedDBs. */
export const defaultMix: WorkloadMix = { myIngress: 0.25, managedDb: 0.15 };

/** How many objects of each kind `total` makes with `mix` (at least one of each for total ≥ 3). Pure. */
export function kindCounts(
  total: number,
  mix: WorkloadMix = defaultMix,
): { dns: number; myIngress: number; managedDb: number } {
  const atLeastOne = (n: number): number => (total >= 3 ? Math.max(1, n) : n);
  const myIngress = atLeastOne(Math.round(total * mix.myIngress));
  const managedDb = atLeastOne(Math.round(total * mix.managedDb));
  return { dns: Math.max(0, total - myIngress - managedDb), myIngress, managedDb };
}

const apiVersion = 'aws.skylift.dev/v1alpha1';

function myIngress(namespace: string, i: number): { objects: KubeObject[]; item: WorkloadItem } {
  const name = `ing-${i}`;
  const service: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace },
    spec: { selector: { app: `svc-${i}` }, ports: [{ port: 80, targetPort: 8080 }] },
  } as KubeObject;
  const spec: MyIngressSpec = {
    scheme: 'internet-facing',
    subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
    listeners: [
      { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: `svc-${i}`, port: 80 } } } },
    ],
    rules: [
      {
        priority: 10,
        paths: ['/old/*'],
        action: { redirect: { path: '/new/#{path}', statusCode: 'HTTP_301' } },
      },
    ],
  };
  return {
    // One slice per Service on its own call: the helper numbers addresses by position.
    objects: [service, ...standInEndpointSlices([service], namespace)],
    item: {
      kind: 'MyIngress',
      namespace,
      name,
      group: name,
      object: { apiVersion, kind: 'MyIngress', metadata: { name, namespace }, spec } as KubeObject,
    },
  };
}

function managedDb(namespace: string, i: number): WorkloadItem {
  const name = `db-${i}`;
  const spec: ManagedDBSpec = {
    engine: 'postgres',
    engineVersion: '16',
    instanceClass: 'db.t3.micro',
    allocatedStorage: 20,
    masterUsername: 'app',
    // No final snapshot: after deletion nothing of the instance may be left in AWS.
    finalSnapshot: { enabled: false },
  };
  return {
    kind: 'ManagedDB',
    namespace,
    name,
    group: name,
    object: { apiVersion, kind: 'ManagedDB', metadata: { name, namespace }, spec } as KubeObject,
  };
}

function dnsRecord(
  namespace: string,
  i: number,
  zone: string,
  rng: SeededRandom,
  ingresses: number,
): WorkloadItem {
  const name = `rec-${i}`;
  const flavour = rng.int(0, 9);
  let spec: DNSRecordSpec;
  let group = name;
  if (flavour < 2 && ingresses > 0) {
    const target = `ing-${rng.int(0, ingresses - 1)}`;
    spec = { zoneName: zone, name, type: 'A', aliasTarget: { myIngressRef: { name: target } } };
    group = target;
  } else if (flavour < 4) {
    spec = { zoneName: zone, name, type: 'TXT', ttl: 300, records: [`"chaos ${i}"`] };
  } else if (flavour < 5) {
    spec = { zoneName: zone, name, type: 'CNAME', ttl: 300, records: [`target-${i}.example.net`] };
  } else {
    spec = { zoneName: zone, name, type: 'A', ttl: 60, records: [`192.0.2.${(i % 250) + 1}`] };
  }
  return {
    kind: 'DNSRecord',
    namespace,
    name,
    group,
    object: { apiVersion, kind: 'DNSRecord', metadata: { name, namespace }, spec } as KubeObject,
  };
}

/**
 * `total` Skylift objects in `namespace` by {@link kindCounts}: MyIngress
 * `ing-<i>` (one HTTP listener forwarding to Service `svc-<i>`, one redirect
 * rule) with its Service and a stand-in EndpointSlice; ManagedDB `db-<i>`
 * (postgres, no final snapshot); DNSRecord `rec-<i>` alternating between the
 * zones — A, TXT or CNAME values, or (about one in five) an A alias to a
 * random MyIngress, which then belongs to that MyIngress's deletion group.
 * Items come in a shuffled order. Pure given `rng`.
 */
export function chaosWorkload(
  namespace: string,
  total: number,
  zones: readonly string[],
  rng: SeededRandom,
  mix: WorkloadMix = defaultMix,
): Workload {
  if (zones.length === 0) throw new Error('chaos workload: no hosted zones');
  const counts = kindCounts(total, mix);
  const supporting: KubeObject[] = [];
  const items: WorkloadItem[] = [];
  for (let i = 0; i < counts.myIngress; i++) {
    const { objects, item } = myIngress(namespace, i);
    supporting.push(...objects);
    items.push(item);
  }
  for (let i = 0; i < counts.managedDb; i++) items.push(managedDb(namespace, i));
  for (let i = 0; i < counts.dns; i++)
    items.push(dnsRecord(namespace, i, zones[i % zones.length] as string, rng, counts.myIngress));
  return { supporting, items: rng.shuffle(items) };
}

/** One namespace of a workload spread over several, with the hosted zones its DNSRecords use. */
export interface WorkloadPart {
  readonly namespace: string;
  readonly zones: readonly string[];
}

/**
 * `total` objects spread evenly over the parts' namespaces (the first ones get one more when it does
 * not divide), each namespace's share made by {@link chaosWorkload} with its own zones, all of them
 * applied in one shuffled order. One part: exactly `chaosWorkload` (a seed replays as before).
 * Pure given `rng`.
 */
export function chaosWorkloads(
  parts: readonly WorkloadPart[],
  total: number,
  rng: SeededRandom,
  mix: WorkloadMix = defaultMix,
): Workload {
  if (parts.length === 0) throw new Error('chaos workload: no namespaces');
  const one = parts[0];
  if (parts.length === 1 && one !== undefined)
    return chaosWorkload(one.namespace, total, one.zones, rng, mix);
  const each = parts.map((p, i) => {
    const share = Math.floor(total / parts.length) + (i < total % parts.length ? 1 : 0);
    return chaosWorkload(p.namespace, share, p.zones, rng, mix);
  });
  return {
    supporting: each.flatMap((w) => w.supporting),
    items: rng.shuffle(each.flatMap((w) => w.items)),
  };
}

/**
 * Whole deletion groups, picked at random until at least half of `items` are
 * chosen: a MyIngress always goes with the aliases that follow it (in its
 * namespace), so the survivors can all stay Ready. Returns the chosen items.
 * Pure given `rng`.
 */
export function pickHalf(items: readonly WorkloadItem[], rng: SeededRandom): WorkloadItem[] {
  const groups = new Map<string, WorkloadItem[]>();
  for (const item of items) {
    const key = `${item.namespace}/${item.group}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  const chosen: WorkloadItem[] = [];
  for (const group of rng.shuffle([...groups.keys()].sort())) {
    if (chosen.length * 2 >= items.length) break;
    chosen.push(...(groups.get(group) ?? []));
  }
  return chosen;
}
