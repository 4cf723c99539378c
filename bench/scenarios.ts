// The benchmark's scenarios and the Kubernetes objects each one creates. Pure.
import type { DNSRecordSpec } from '../src/kinds/dnsrecord/api.ts';
import { dnsRecordType } from '../src/kinds/dnsrecord/api.ts';
import type { ManagedDBSpec } from '../src/kinds/manageddb/api.ts';
import { managedDbType } from '../src/kinds/manageddb/api.ts';
import type { MyIngressSpec } from '../src/kinds/myingress/api.ts';
import { myIngressType } from '../src/kinds/myingress/api.ts';
import { standInEndpointSlices } from '../dev/samples.ts';
import type { KubeObject, ResourceType } from '../src/apis/meta.ts';

/** A family of scenarios that differ only in size (what `--only` names). */
export interface ScenarioGroup {
  readonly name: string;
  readonly description: string;
  readonly type: ResourceType;
  /** DNSRecord: how many hosted zones the records are spread across (round robin). */
  readonly zones: number;
  /** Route 53 requests per second per account the proxy enforces; undefined: no limit. */
  readonly route53RatePerSecond?: number;
  /**
   * How long the proxy has Route 53 report each change PENDING after it was submitted (moto answers
   * INSYNC at once), ms; undefined: as moto answers. The report then says how soon after INSYNC each
   * record was Ready (bench/lib/propagation.ts).
   */
  readonly route53PendingMs?: number;
  readonly defaultSizes: readonly number[];
}

/** One run: a group at one size. */
export interface Scenario {
  /** `<group>-<size>`, e.g. `dns-1000`. */
  readonly id: string;
  readonly group: ScenarioGroup;
  readonly size: number;
}

/** Every scenario group, in the order a full run goes through them. */
export const scenarioGroups: readonly ScenarioGroup[] = [
  {
    name: 'dns',
    description: 'DNSRecords (A) in one hosted zone',
    type: dnsRecordType,
    zones: 1,
    defaultSizes: [100, 1000, 5000],
  },
  {
    name: 'dns-10zones',
    description: 'DNSRecords (A) spread over ten hosted zones',
    type: dnsRecordType,
    zones: 10,
    defaultSizes: [100, 1000, 5000],
  },
  {
    name: 'myingress',
    description: 'MyIngresses, each with a Service and a stand-in EndpointSlice',
    type: myIngressType,
    zones: 0,
    defaultSizes: [100],
  },
  {
    name: 'manageddb',
    description: 'ManagedDBs (postgres, no final snapshot)',
    type: managedDbType,
    zones: 0,
    defaultSizes: [100],
  },
  {
    name: 'dns-propagating',
    description: 'DNSRecords in one zone, each Route 53 change PENDING for 10 s after it was submitted',
    type: dnsRecordType,
    zones: 1,
    route53PendingMs: 10_000,
    defaultSizes: [1000],
  },
  {
    name: 'dns-throttled',
    description: 'DNSRecords in one zone, Route 53 limited to 5 requests/s by the proxy',
    type: dnsRecordType,
    zones: 1,
    route53RatePerSecond: 5,
    defaultSizes: [1000],
  },
  {
    name: 'dns-10zones-throttled',
    description: 'DNSRecords over ten zones, Route 53 limited to 5 requests/s by the proxy',
    type: dnsRecordType,
    zones: 10,
    route53RatePerSecond: 5,
    defaultSizes: [1000],
  },
];

/**
 * The scenarios to run. `only` names groups (each run at `sizes`, or its
 * default sizes when undefined, smallest first) or single scenarios by id
 * (`dns-5000`), in the order given; empty means every group in catalogue
 * order. Throws on a name that is neither.
 */
export function selectScenarios(only: readonly string[], sizes: readonly number[] | undefined): Scenario[] {
  const ofGroup = (group: ScenarioGroup): Scenario[] =>
    [...(sizes ?? group.defaultSizes)]
      .sort((a, b) => a - b)
      .map((size) => ({ id: `${group.name}-${size}`, group, size }));
  if (only.length === 0) return scenarioGroups.flatMap(ofGroup);
  const out: Scenario[] = [];
  for (const name of only) {
    const group = scenarioGroups.find((g) => g.name === name);
    if (group !== undefined) {
      out.push(...ofGroup(group));
      continue;
    }
    const m = /^(.+)-(\d+)$/.exec(name);
    const byId = m === null ? undefined : scenarioGroups.find((g) => g.name === m[1]);
    if (m === null || byId === undefined)
      throw new Error(
        `unknown scenario ${name}: choose from ${scenarioGroups.map((g) => g.name).join(', ')} (or <group>-<size>)`,
      );
    out.push({ id: name, group: byId, size: Number(m[2]) });
  }
  return out;
}

/** What a scenario applies: the measured Skylift objects and what they need (Services, EndpointSlices). */
export interface ScenarioObjects {
  /** Created before the operator starts; not measured. */
  readonly supporting: readonly KubeObject[];
  /** The Skylift objects, in creation order. */
  readonly measured: readonly KubeObject[];
}

/**
 * The objects of `scenario` in `namespace`. DNSRecord `i` is `r<i>` in zone
 * `zoneNames[i mod zones]`; MyIngress `i` is `ing-<i>` forwarding to Service
 * `svc-<i>`; ManagedDB `i` is `db-<i>`.
 */
export function scenarioObjects(
  scenario: Scenario,
  namespace: string,
  zoneNames: readonly string[],
): ScenarioObjects {
  const n = scenario.size;
  const meta = (name: string): KubeObject['metadata'] => ({ name, namespace });
  const idx = Array.from({ length: n }, (_, i) => i);
  switch (scenario.group.type.kind) {
    case 'DNSRecord': {
      if (zoneNames.length === 0) throw new Error(`${scenario.id}: no hosted zones`);
      return {
        supporting: [],
        measured: idx.map((i) => {
          const spec: DNSRecordSpec = {
            zoneName: zoneNames[i % zoneNames.length] as string,
            name: `r${i}`,
            type: 'A',
            ttl: 300,
            records: [`192.0.2.${(i % 254) + 1}`],
          };
          return {
            apiVersion: 'aws.skylift.dev/v1alpha1',
            kind: 'DNSRecord',
            metadata: meta(`r${i}`),
            spec,
          } as KubeObject;
        }),
      };
    }
    case 'MyIngress': {
      const services = idx.map(
        (i) =>
          ({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: meta(`svc-${i}`),
            spec: { selector: { app: `svc-${i}` }, ports: [{ port: 80, targetPort: 8080 }] },
          }) as KubeObject,
      );
      // One slice per Service, each on its own: standInEndpointSlices numbers addresses by
      // position, and a list of hundreds would run past the subnet's last address.
      const slices = services.flatMap((svc) => standInEndpointSlices([svc], namespace));
      return {
        supporting: [...services, ...slices],
        measured: idx.map((i) => {
          const spec: MyIngressSpec = {
            scheme: 'internet-facing',
            subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
            listeners: [
              {
                port: 80,
                protocol: 'HTTP',
                defaultAction: { forward: { service: { name: `svc-${i}`, port: 80 } } },
              },
            ],
          };
          return {
            apiVersion: 'aws.skylift.dev/v1alpha1',
            kind: 'MyIngress',
            metadata: meta(`ing-${i}`),
            spec,
          } as KubeObject;
        }),
      };
    }
    case 'ManagedDB':
      return {
        supporting: [],
        measured: idx.map((i) => {
          const spec: ManagedDBSpec = {
            engine: 'postgres',
            engineVersion: '16',
            instanceClass: 'db.t3.micro',
            allocatedStorage: 20,
            masterUsername: 'app',
            // No final snapshot: the bench checks that nothing is left in AWS after cleanup.
            finalSnapshot: { enabled: false },
          };
          return {
            apiVersion: 'aws.skylift.dev/v1alpha1',
            kind: 'ManagedDB',
            metadata: meta(`db-${i}`),
            spec,
          } as KubeObject;
        }),
      };
    default:
      throw new Error(`${scenario.id}: no objects for kind ${scenario.group.type.kind}`);
  }
}
