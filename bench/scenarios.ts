// The benchmark's scenarios and the Kubernetes objects each one creates. Pure.
import type { DNSRecordSpec } from '../src/kinds/dnsrecord/api.ts';
import { dnsRecordType } from '../src/kinds/dnsrecord/api.ts';
import type { ManagedDBSpec } from '../src/kinds/manageddb/api.ts';
import { managedDbType } from '../src/kinds/manageddb/api.ts';
import type { MyIngressSpec } from '../src/kinds/myingress/api.ts';
import { myIngressType } from '../src/kinds/myingress/api.ts';
import { standInEndpointSlices } from '../dev/samples.ts';
import type { KubeObject, ResourceType } from '../src/apis/meta.ts';
import type { TeamPolicySpec } from '../src/apis/teampolicy.ts';
import { httpRouteType } from '../src/apis/gatewayApi.ts';

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
  /**
   * Objects spread over namespaces, under TeamPolicies whose roles are in team accounts (the
   * `*teams*` groups) or under none (`dns-namespaces`); undefined: one namespace, the operator's
   * own account, no TeamPolicy.
   */
  readonly teams?: TeamsShape;
  /** Run only when named by `--only` (or the `teams` set), not in a full run. */
  readonly optIn?: boolean;
  /**
   * Not objects at a size but the rollout matrix on a node cluster of its own
   * (bench/lib/rolloutScenario.ts): one scenario named after the group, `--sizes` ignored, its size
   * the number of runs (changes × gate on/off); skipped with a reason where no node cluster can run.
   */
  readonly nodeRollout?: boolean;
  /**
   * Not one object per unit but members of shared load balancers (bench/lib/sharedLbScenario.ts):
   * MyIngresses in MyIngressGroups, or HTTPRoutes on one Gateway; the size is the number of members
   * or routes.
   */
  readonly shared?: SharedLbShape;
}

/** How a shared load balancer group lays its members out. */
export interface SharedLbShape {
  /** `myingress-group`: MyIngressGroups and their member MyIngresses; `gateway`: one Gateway and its HTTPRoutes. */
  readonly front: 'myingress-group' | 'gateway';
  /** MyIngressGroups: members per group (the groups: size ÷ this, rounded up); absent for the one Gateway. */
  readonly membersPerGroup?: number;
  /** Members (routes) per namespace: the namespaces are size ÷ this, rounded up, at most {@link maxNamespaces}. */
  readonly membersPerNamespace: number;
  readonly maxNamespaces: number;
}

/** How a teams group spreads its objects over namespaces, TeamPolicies and AWS accounts. */
export interface TeamsShape {
  /**
   * How many namespaces the objects are spread over (round robin): at most this many, never more
   * than the size, `--namespaces` instead when given; `per-object`: one object per namespace.
   */
  readonly namespaces: number | 'per-object';
  /** Namespaces each TeamPolicy selects (by a label); undefined: one policy selects them all. */
  readonly namespacesPerPolicy?: number;
  /**
   * Team accounts, each with one role shared by its policies (consecutive policies share an
   * account) and one hosted zone for the records of its namespaces. `own`: no team account and no
   * TeamPolicy; the operator serves every namespace with its own identity, the zone in its own
   * account as for `dns` (the spread without tenancy, to compare with).
   */
  readonly accounts: 1 | 2 | typeof ownAccount;
  /** A bulk namespace and a quiet one instead of a spread (`dns-teams-flood`, `dns-teams-bigtxt`). */
  readonly quiet?: QuietShape;
}

/**
 * One namespace creates `size` records at once; namespace `quiet`, under its own TeamPolicy with
 * the same role, creates one A record while (or right after) they are created. Its create → Ready
 * latency is the figure: one team's burst must not hold up another's record.
 */
export interface QuietShape {
  /** The bulk namespace's name (after the scenario's prefix). */
  readonly bulkNamespace: string;
  /** A records, or TXT records of {@link bigTxtValues} values of {@link bigTxtValueChars} characters. */
  readonly bulk: 'A' | 'bigTXT';
  /** The quiet record is created once this share of the bulk creates were answered (1: right after the last). */
  readonly afterShare: number;
}

/** One run: a group at one size. */
export interface Scenario {
  /** `<group>-<size>`, e.g. `dns-1000`; `-ns<N>` added when `--namespaces` set the namespace count. */
  readonly id: string;
  readonly group: ScenarioGroup;
  readonly size: number;
  /** `--namespaces`: how many namespaces a teams group with a namespace count spreads over. */
  readonly namespaces?: number;
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
  {
    name: 'dns-namespaces',
    description:
      'DNSRecords (A) in one hosted zone, spread over 50 namespaces with no TeamPolicy: the operator serves each with its own identity, the zone in its own account',
    type: dnsRecordType,
    zones: 1,
    defaultSizes: [1000],
    teams: { namespaces: 50, accounts: 'own' },
    optIn: true,
  },
  {
    name: 'dns-teams',
    description:
      'DNSRecords (A) in one hosted zone, spread over 50 namespaces that one TeamPolicy selects by a label; its role and the zone are in one team account',
    type: dnsRecordType,
    zones: 1,
    defaultSizes: [1000],
    teams: { namespaces: 50, accounts: 1 },
  },
  {
    name: 'dns-teams-2accounts',
    description:
      'DNSRecords over 50 namespaces under 10 TeamPolicies of 5 namespaces each, 5 policies per team account sharing that account’s one role; one zone per account (half of the records each)',
    type: dnsRecordType,
    zones: 2,
    defaultSizes: [1000],
    teams: { namespaces: 50, namespacesPerPolicy: 5, accounts: 2 },
    optIn: true,
  },
  {
    name: 'dns-teams-flood',
    description:
      'namespace flood creates N A records at once; halfway through, namespace quiet (its own TeamPolicy, the same role) creates one; Route 53 limited to 10 requests/s per account',
    type: dnsRecordType,
    zones: 1,
    route53RatePerSecond: 10,
    defaultSizes: [5000],
    teams: {
      namespaces: 2,
      accounts: 1,
      quiet: { bulkNamespace: 'flood', bulk: 'A', afterShare: 0.5 },
    },
  },
  {
    name: 'dns-teams-bigtxt',
    description:
      'namespace bigtxt creates N TXT records of five 3,900-character values; right after, namespace quiet (its own TeamPolicy, the same role) creates one A record; Route 53 limited to 10 requests/s per account',
    type: dnsRecordType,
    zones: 1,
    route53RatePerSecond: 10,
    defaultSizes: [150],
    teams: {
      namespaces: 2,
      accounts: 1,
      quiet: { bulkNamespace: 'bigtxt', bulk: 'bigTXT', afterShare: 1 },
    },
  },
  {
    name: 'myingress-teams',
    description: 'MyIngresses over 50 namespaces under one TeamPolicy (one role in a team account)',
    type: myIngressType,
    zones: 0,
    defaultSizes: [100],
    teams: { namespaces: 50, accounts: 1 },
    optIn: true,
  },
  {
    name: 'manageddb-teams',
    description: 'ManagedDBs over 50 namespaces under one TeamPolicy (one role in a team account)',
    type: managedDbType,
    zones: 0,
    defaultSizes: [100],
    teams: { namespaces: 50, accounts: 1 },
    optIn: true,
  },
  {
    name: 'teams-memory',
    description:
      'one DNSRecord per namespace, N namespaces under TeamPolicies of 10 namespaces each (one role): memory per namespace',
    type: dnsRecordType,
    zones: 1,
    defaultSizes: [50, 500],
    teams: { namespaces: 'per-object', namespacesPerPolicy: 10, accounts: 1 },
    optIn: true,
  },
  {
    name: 'myingress-group',
    description:
      'MyIngresses in MyIngressGroups of 10 (100: 10 groups), over 5 namespaces, each one rule to its own Service and stand-in EndpointSlice; then one member’s rule changed',
    type: myIngressType,
    zones: 0,
    defaultSizes: [100],
    shared: { front: 'myingress-group', membersPerGroup: 10, membersPerNamespace: 20, maxNamespaces: 5 },
  },
  {
    name: 'gateway',
    description:
      'one Gateway (HTTP, routes from All namespaces) and HTTPRoutes, 10 per namespace (200: 20 namespaces), each to its own Service and stand-in EndpointSlice; then one route’s rule changed',
    type: httpRouteType,
    zones: 0,
    defaultSizes: [200],
    shared: { front: 'gateway', membersPerNamespace: 10, maxNamespaces: 1000 },
  },
  {
    name: 'myingress-rollout',
    description:
      'the sample app on a node cluster behind a MyIngress, 50 requests/s through the ALB data plane: rolling updates (maxSurge 1 / maxUnavailable 0, 0 / 1), scale 3→1, 1→3, a Pod deleted, each with the target-health gate and preStop pause and without; needs root and the node images',
    type: myIngressType,
    zones: 0,
    // Runs: five changes, gate on and off.
    defaultSizes: [10],
    nodeRollout: true,
  },
];

/**
 * What `--only teams` stands for: every group spread over namespaces, in catalogue order: the groups
 * with TeamPolicies and `dns-namespaces`, the same spread without them.
 */
export const teamsSet = 'teams';

/**
 * The scenarios to run. `only` names groups (each run at `sizes`, or its
 * default sizes when undefined, smallest first), single scenarios by id
 * (`dns-5000`), or the set `teams` (every group with a {@link TeamsShape}), in the order given;
 * empty means every group not {@link ScenarioGroup.optIn} in catalogue order.
 * `namespaces` (`--namespaces`) sets the namespace count of teams groups that
 * have one (and adds `-ns<N>` to their ids). A {@link ScenarioGroup.nodeRollout} group is one
 * scenario with the group's name as id, whatever `sizes` says. Throws on a name that is none of these.
 */
export function selectScenarios(
  only: readonly string[],
  sizes: readonly number[] | undefined,
  namespaces?: number,
): Scenario[] {
  const scenario = (group: ScenarioGroup, size: number): Scenario => {
    const spreads = group.teams !== undefined && typeof group.teams.namespaces === 'number';
    const ns = spreads && group.teams.quiet === undefined ? namespaces : undefined;
    return ns === undefined
      ? { id: `${group.name}-${size}`, group, size }
      : { id: `${group.name}-${size}-ns${ns}`, group, size, namespaces: ns };
  };
  const ofGroup = (group: ScenarioGroup): Scenario[] =>
    group.nodeRollout === true
      ? group.defaultSizes.map((size) => ({ id: group.name, group, size }))
      : [...(sizes ?? group.defaultSizes)].sort((a, b) => a - b).map((size) => scenario(group, size));
  if (only.length === 0) return scenarioGroups.filter((g) => g.optIn !== true).flatMap(ofGroup);
  const out: Scenario[] = [];
  for (const name of only) {
    if (name === teamsSet) {
      out.push(...scenarioGroups.filter((g) => g.teams !== undefined).flatMap(ofGroup));
      continue;
    }
    const group = scenarioGroups.find((g) => g.name === name);
    if (group !== undefined) {
      out.push(...ofGroup(group));
      continue;
    }
    const m = /^(.+)-(\d+)$/.exec(name);
    const byId = m === null ? undefined : scenarioGroups.find((g) => g.name === m[1]);
    if (m === null || byId === undefined)
      throw new Error(
        `unknown scenario ${name}: choose from ${scenarioGroups.map((g) => g.name).join(', ')}, ${teamsSet} (or <group>-<size>)`,
      );
    out.push(scenario(byId, Number(m[2])));
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

/** DNSRecord `r<i>` (or `name`): an A record in `zoneName`. */
function aRecord(i: number, namespace: string, zoneName: string, name = `r${i}`): KubeObject {
  const spec: DNSRecordSpec = {
    zoneName,
    name,
    type: 'A',
    ttl: 300,
    records: [`192.0.2.${(i % 254) + 1}`],
  };
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name, namespace },
    spec,
  } as KubeObject;
}

/** Values per TXT record in `dns-teams-bigtxt`. */
export const bigTxtValues = 5;
/** Characters per value in `dns-teams-bigtxt` (Skylift splits each into 255-character strings). */
export const bigTxtValueChars = 3900;

/** DNSRecord `t<i>`: a TXT record of {@link bigTxtValues} distinct values of {@link bigTxtValueChars} characters. */
function bigTxtRecord(i: number, namespace: string, zoneName: string): KubeObject {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const records = Array.from({ length: bigTxtValues }, (_, j) => {
    const head = `t${i}v${j}-`;
    const body = letters.repeat(Math.ceil(bigTxtValueChars / letters.length));
    return (head + body).slice(0, bigTxtValueChars);
  });
  const spec: DNSRecordSpec = { zoneName, name: `t${i}`, type: 'TXT', ttl: 300, records };
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name: `t${i}`, namespace },
    spec,
  } as KubeObject;
}

/** MyIngress `ing-<i>` forwarding to Service `svc-<i>`, with that Service and its stand-in EndpointSlice. */
function myIngressWithService(
  i: number,
  namespace: string,
): { ingress: KubeObject; supporting: KubeObject[] } {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace },
    spec: { selector: { app: `svc-${i}` }, ports: [{ port: 80, targetPort: 8080 }] },
  } as KubeObject;
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
    ingress: {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: `ing-${i}`, namespace },
      spec,
    } as KubeObject,
    // One slice per Service, each on its own: standInEndpointSlices numbers addresses by
    // position, and a list of hundreds would run past the subnet's last address.
    supporting: [service, ...standInEndpointSlices([service], namespace)],
  };
}

/** ManagedDB `db-<i>`: postgres 16, db.t3.micro, no final snapshot. */
function managedDb(i: number, namespace: string): KubeObject {
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
    metadata: { name: `db-${i}`, namespace },
    spec,
  } as KubeObject;
}

/**
 * Object `i` of `kind` in `namespace` (DNSRecords in `zoneName`): the measured object and what it
 * needs. Throws for a kind the bench has no objects for.
 */
function objectAt(
  id: string,
  kind: string,
  i: number,
  namespace: string,
  zoneName: string | undefined,
): { measured: KubeObject; supporting: KubeObject[] } {
  switch (kind) {
    case 'DNSRecord':
      if (zoneName === undefined) throw new Error(`${id}: no hosted zones`);
      return { measured: aRecord(i, namespace, zoneName), supporting: [] };
    case 'MyIngress': {
      const { ingress, supporting } = myIngressWithService(i, namespace);
      return { measured: ingress, supporting };
    }
    case 'ManagedDB':
      return { measured: managedDb(i, namespace), supporting: [] };
    default:
      throw new Error(`${id}: no objects for kind ${kind}`);
  }
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
  const kind = scenario.group.type.kind;
  if (kind === 'DNSRecord' && zoneNames.length === 0) throw new Error(`${scenario.id}: no hosted zones`);
  const objects = Array.from({ length: scenario.size }, (_, i) =>
    objectAt(scenario.id, kind, i, namespace, zoneNames[i % Math.max(1, zoneNames.length)]),
  );
  return {
    supporting: objects.flatMap((o) => o.supporting),
    measured: objects.map((o) => o.measured),
  };
}

/**
 * The account of a spread without TeamPolicies: the operator's own identity, named as the
 * operator's metrics name it (`skylift_aws_api_calls_total{account="own"}`).
 */
export const ownAccount = 'own';

/**
 * The zone names a scenario with `zones` hosted zones in the operator's own account uses (every
 * group but the teams groups, and `dns-namespaces`): `z0.bench.skylift.test`, … Pure.
 */
export function benchZoneNames(zones: number): string[] {
  return Array.from({ length: zones }, (_, i) => `z${i}.bench.skylift.test`);
}

/** The team accounts of the teams groups, in order (as `make chaos` uses them). */
export const teamAccounts = ['111111111111', '222222222222'] as const;

/** The role the operator assumes in each team account. Pure. */
export function teamRoleArn(account: string): string {
  return `arn:aws:iam::${account}:role/skylift-bench`;
}

/** The hosted zone of team account number `index` (0-based): `team0.bench.skylift.test`, … Pure. */
export function teamZoneName(index: number): string {
  return `team${index}.bench.skylift.test`;
}

/** The namespace label a teams group's TeamPolicy selects its namespaces by (value: the policy's name). */
export const benchPolicyLabel = 'skylift.bench/policy';

/** An account of a teams scenario: a team account, or {@link ownAccount}. */
export interface PlannedAccount {
  readonly id: string;
  /** The role the operator assumes there; absent: the operator's own identity (no TeamPolicy). */
  readonly roleArn?: string;
  /** Hosted zones made in this account before the operator starts (DNSRecord groups: one). */
  readonly zoneNames: readonly string[];
  /** Its TeamPolicies, namespaces and measured objects (the quiet one included). */
  readonly policies: readonly string[];
  readonly namespaces: readonly string[];
  readonly objects: number;
}

/** A TeamPolicy of a teams scenario. */
export interface PlannedPolicy {
  readonly name: string;
  readonly account: string;
  /** The namespaces it selects (by {@link benchPolicyLabel}). */
  readonly namespaces: readonly string[];
  readonly spec: TeamPolicySpec;
}

/** A namespace of a teams scenario. */
export interface PlannedNamespace {
  readonly name: string;
  /** The TeamPolicy selecting it; absent: none (the operator's own identity serves it). */
  readonly policy?: string;
  readonly account: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Everything a teams scenario makes, in the order it is made. */
export interface TeamsPlan {
  readonly accounts: readonly PlannedAccount[];
  readonly policies: readonly PlannedPolicy[];
  readonly namespaces: readonly PlannedNamespace[];
  /** Created before the operator starts; not measured. */
  readonly supporting: readonly KubeObject[];
  /** The measured objects in creation order (for a quiet group: the bulk ones; not the quiet one). */
  readonly measured: readonly KubeObject[];
  /** The quiet group's one record, created once `afterCreates` bulk creates were answered. */
  readonly quiet?: { readonly object: KubeObject; readonly afterCreates: number };
}

/** The namespaces a teams scenario spreads over. Pure. */
export function teamsNamespaceCount(scenario: Scenario): number {
  const shape = scenario.group.teams;
  if (shape === undefined) return 1;
  if (shape.quiet !== undefined) return 2;
  if (shape.namespaces === 'per-object') return scenario.size;
  return Math.max(1, Math.min(scenario.namespaces ?? shape.namespaces, scenario.size));
}

/**
 * What a teams scenario makes, its names starting with `prefix` (a unique, DNS-label-safe string):
 * namespaces `<prefix>-n<k>` (quiet groups: `<prefix>-<bulk>` and `<prefix>-quiet`), each labelled
 * {@link benchPolicyLabel} with the name of the one policy selecting it; TeamPolicies `<prefix>-p<k>`
 * (quiet groups: one per namespace, named after it), each assuming its account's role; objects
 * round robin over the namespaces (object `i` in namespace `i mod namespaces`), DNSRecords in their
 * namespace's account's zone. Namespaces are split evenly over the policies in order, policies over
 * the accounts in order. Accounts {@link ownAccount}: the namespaces unlabelled, no policy, one
 * account `own` with no role and the group's zones named as for a single namespace
 * ({@link benchZoneNames}). Throws for a group without {@link TeamsShape}. Pure.
 */
export function teamsPlan(scenario: Scenario, prefix: string): TeamsPlan {
  const shape = scenario.group.teams;
  if (shape === undefined) throw new Error(`${scenario.id}: not a teams scenario`);
  if (shape.accounts === ownAccount) return ownSpreadPlan(scenario, shape, prefix);
  const kind = scenario.group.type.kind;
  const nsNames =
    shape.quiet !== undefined
      ? [`${prefix}-${shape.quiet.bulkNamespace}`, `${prefix}-quiet`]
      : Array.from({ length: teamsNamespaceCount(scenario) }, (_, k) => `${prefix}-n${k}`);
  const policyCount =
    shape.quiet !== undefined
      ? nsNames.length
      : shape.namespacesPerPolicy === undefined
        ? 1
        : Math.min(
            nsNames.length,
            Math.max(shape.accounts, Math.ceil(nsNames.length / shape.namespacesPerPolicy)),
          );
  const accountCount = Math.min(shape.accounts, policyCount);
  const accountIds = teamAccounts.slice(0, accountCount);
  const policyNames =
    shape.quiet !== undefined ? nsNames : Array.from({ length: policyCount }, (_, p) => `${prefix}-p${p}`);
  const accountIndexOfPolicy = (p: number): number => Math.floor((p * accountCount) / policyCount);
  const policyIndexOfNamespace = (k: number): number => Math.floor((k * policyCount) / nsNames.length);
  const hasZones = kind === 'DNSRecord';

  const namespaces: PlannedNamespace[] = nsNames.map((name, k) => {
    const policy = policyNames[policyIndexOfNamespace(k)] as string;
    return {
      name,
      policy,
      account: accountIds[accountIndexOfPolicy(policyIndexOfNamespace(k))] as string,
      labels: { [benchPolicyLabel]: policy },
    };
  });
  const policies: PlannedPolicy[] = policyNames.map((name, p) => {
    const account = accountIds[accountIndexOfPolicy(p)] as string;
    return {
      name,
      account,
      namespaces: namespaces.filter((n) => n.policy === name).map((n) => n.name),
      spec: {
        namespaces: { selector: { matchLabels: { [benchPolicyLabel]: name } } },
        aws: { roleArn: teamRoleArn(account), externalId: `skylift-bench-${account}` },
      },
    };
  });
  const zoneOf = (account: string): string | undefined =>
    hasZones ? teamZoneName(accountIds.indexOf(account as (typeof accountIds)[number])) : undefined;

  const supporting: KubeObject[] = [];
  const measured: KubeObject[] = [];
  let quiet: TeamsPlan['quiet'];
  if (shape.quiet !== undefined) {
    const [bulkNs, quietNs] = namespaces as [PlannedNamespace, PlannedNamespace];
    const zone = zoneOf(bulkNs.account) as string;
    for (let i = 0; i < scenario.size; i++)
      measured.push(
        shape.quiet.bulk === 'A' ? aRecord(i, bulkNs.name, zone) : bigTxtRecord(i, bulkNs.name, zone),
      );
    quiet = {
      object: aRecord(0, quietNs.name, zone, 'quiet'),
      afterCreates: Math.min(scenario.size, Math.max(1, Math.ceil(scenario.size * shape.quiet.afterShare))),
    };
  } else {
    for (let i = 0; i < scenario.size; i++) {
      const ns = namespaces[i % namespaces.length] as PlannedNamespace;
      const o = objectAt(scenario.id, kind, i, ns.name, zoneOf(ns.account));
      measured.push(o.measured);
      supporting.push(...o.supporting);
    }
  }
  const objectsIn = new Map<string, number>();
  for (const o of [...measured, ...(quiet !== undefined ? [quiet.object] : [])]) {
    const ns = o.metadata.namespace ?? '';
    objectsIn.set(ns, (objectsIn.get(ns) ?? 0) + 1);
  }
  const accounts: PlannedAccount[] = accountIds.map((id) => {
    const own = namespaces.filter((n) => n.account === id);
    const zone = zoneOf(id);
    return {
      id,
      roleArn: teamRoleArn(id),
      zoneNames: zone === undefined ? [] : [zone],
      policies: policies.filter((p) => p.account === id).map((p) => p.name),
      namespaces: own.map((n) => n.name),
      objects: own.reduce((sum, n) => sum + (objectsIn.get(n.name) ?? 0), 0),
    };
  });
  return { accounts, policies, namespaces, supporting, measured, ...(quiet !== undefined ? { quiet } : {}) };
}

/**
 * The spread without TeamPolicies: namespaces `<prefix>-n<k>` without labels, objects round robin
 * over them, DNSRecords in the group's zones of the operator's own account. Throws for a shape with
 * policies of namespaces or a quiet namespace (both need TeamPolicies). Pure.
 */
function ownSpreadPlan(scenario: Scenario, shape: TeamsShape, prefix: string): TeamsPlan {
  if (shape.namespacesPerPolicy !== undefined || shape.quiet !== undefined)
    throw new Error(`${scenario.id}: no TeamPolicies, so no policies of namespaces and no quiet namespace`);
  const kind = scenario.group.type.kind;
  const zoneNames = kind === 'DNSRecord' ? benchZoneNames(scenario.group.zones) : [];
  const namespaces: PlannedNamespace[] = Array.from({ length: teamsNamespaceCount(scenario) }, (_, k) => ({
    name: `${prefix}-n${k}`,
    account: ownAccount,
    labels: {},
  }));
  const supporting: KubeObject[] = [];
  const measured: KubeObject[] = [];
  for (let i = 0; i < scenario.size; i++) {
    const ns = namespaces[i % namespaces.length] as PlannedNamespace;
    const o = objectAt(scenario.id, kind, i, ns.name, zoneNames[i % Math.max(1, zoneNames.length)]);
    measured.push(o.measured);
    supporting.push(...o.supporting);
  }
  const account: PlannedAccount = {
    id: ownAccount,
    zoneNames,
    policies: [],
    namespaces: namespaces.map((n) => n.name),
    objects: measured.length,
  };
  return { accounts: [account], policies: [], namespaces, supporting, measured };
}
