// The real system a lifecycle model run drives: its own namespace and hosted
// zone on a running kube-apiserver + moto, `skylift run` as a process talking
// to AWS through a fault proxy, and direct clients to read what really is in
// AWS and in the apiserver. Works under vitest (the suite's shared stack) and
// from `make chaos` (a stack of its own): everything comes in as parameters.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ChangeResourceRecordSetsCommand,
  CreateHostedZoneCommand,
  DeleteHostedZoneCommand,
  GetHostedZoneCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { DescribeTargetHealthCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import { CreateDBSnapshotCommand, DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import { awsClients, ensureSubnets, type AwsClients } from '../lib/awsAccount.ts';
import { collectInventory } from '../lib/awsInventory.ts';
import type { SkyliftInventory } from '../lib/invariants.ts';
import { startOperator, type OperatorProcess } from '../lib/operatorProcess.ts';
import { resourcePath, type ResourceType } from '../../src/apis/meta.ts';
import { emulatorEnv } from '../../dev/emulator.ts';
import { installCrds, installGatewayApiCrds } from '../../dev/installCrds.ts';
import {
  gatewayClassType,
  gatewayType,
  httpRouteType,
  skyliftGatewayClassName,
  skyliftGatewayControllerName,
} from '../../src/apis/gatewayApi.ts';
import { myIngressGroupType } from '../../src/kinds/myingress/group/api.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import { managedDbType } from '../../src/kinds/manageddb/api.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { KubeApiError, KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { AwsFaultProxy, type InstalledRule } from '../../dev/awsFaultProxy.ts';
import { applyTeamPolicy, deleteTeamPolicy, policySelector } from '../../dev/teamPolicies.ts';
import { route53RefuseExistingCreate } from '../../dev/route53Fidelity.ts';
import type { LifecycleKind, ObjectKind } from './model.ts';

/** Where a lifecycle run finds its stack. */
export interface LifecycleEnv {
  /** An admin kubeconfig for the apiserver. */
  readonly kubeconfig: string;
  /** The AWS emulator's endpoint (the world puts its own fault proxy in front for the operator). */
  readonly awsEndpoint: string;
  /** Where operator logs go. */
  readonly dir: string;
}

/** A Skylift custom resource as the apiserver has it, reduced to what the checks read. */
export interface ObservedCr {
  readonly kind: LifecycleKind;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly observedGeneration: number | undefined;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly ready: ObservedCondition | undefined;
  readonly synced: ObservedCondition | undefined;
  readonly spec: Record<string, unknown>;
  readonly status: Record<string, unknown>;
}

/** One condition. */
export interface ObservedCondition {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number | undefined;
}

/** A Secret in the namespace. */
export interface ObservedSecret {
  readonly type: string;
  readonly data: Readonly<Record<string, string>>;
  readonly controllerUid: string | undefined;
  readonly ownerUids: readonly string[];
  readonly resourceVersion: string;
}

/** A DB instance in the emulator. */
export interface ObservedDb {
  readonly identifier: string;
  readonly instanceClass: string;
  readonly address: string;
}

/** A Gateway of the namespace, reduced to what the checks read. */
export interface ObservedGateway {
  readonly name: string;
  readonly uid: string;
  /** Programmed=True at its generation. */
  readonly programmed: boolean;
  /** status.addresses[0].value, or undefined. */
  readonly address: string | undefined;
}

/** An HTTPRoute of the namespace and what Skylift said of each Gateway it names. */
export interface ObservedRoute {
  readonly name: string;
  readonly uid: string;
  /** Per Gateway name: Accepted and ResolvedRefs at the route's generation, as Skylift wrote them. */
  readonly parents: ReadonlyMap<string, { readonly accepted: boolean; readonly resolvedRefs: boolean }>;
}

/** Everything a lifecycle step's checks compare, read at one moment. */
export interface Observed {
  /** The namespace's Skylift objects and this world's MyIngressGroups (its own and its Gateways'). */
  readonly crs: readonly ObservedCr[];
  readonly gateways: readonly ObservedGateway[];
  readonly routes: readonly ObservedRoute[];
  /** The current zone's record sets (straight from the emulator). */
  readonly records: readonly ResourceRecordSet[];
  /** Skylift-tagged AWS resources whose owner is in this world's namespace, and the zone's guarded records. */
  readonly inventory: SkyliftInventory;
  readonly secrets: ReadonlyMap<string, ObservedSecret>;
  readonly dbs: ReadonlyMap<string, ObservedDb>;
  /** EndpointSlice name → resourceVersion, or undefined once deleted. */
  readonly endpointSlices: ReadonlyMap<string, string>;
  /** Registered targets (`ip:port`) of each Skylift target group of this namespace, by name. */
  readonly targets: ReadonlyMap<string, readonly string[]>;
  /** The master password RDS was last given for each DB instance (CreateDBInstance, ModifyDBInstance). */
  readonly passwords: ReadonlyMap<string, string>;
}

const kindTypes: Record<ObjectKind, ResourceType> = {
  DNSRecord: dnsRecordType,
  ManagedDB: managedDbType,
  MyIngress: myIngressType,
  MyIngressGroup: myIngressGroupType,
  Gateway: gatewayType,
  HTTPRoute: httpRouteType,
};

/** The namespaced Skylift kinds, listed in the world's namespace. */
const namespacedKinds = ['DNSRecord', 'ManagedDB', 'MyIngress'] as const;

/** The operator's flags: short periods so a step settles in seconds. */
const operatorFlags = [
  '--route53-batch-window',
  '200ms',
  '--rds-poll-interval',
  '1s',
  '--resync-period',
  '4s',
  '--aws-timeout',
  '3s',
  '--route53-zone-cache-ttl',
  '2s',
  '--workers',
  '4',
  // Gateways' load balancers in the subnets ensureSubnets tags (kubernetes.io/role/elb=1), as
  // skylift dev places them; the default role tag (internal-elb) names none of the world's.
  '--gateway-scheme',
  'internet-facing',
  '--gateway-subnet-tags',
  'kubernetes.io/role/elb=1',
];

/** The real side of a lifecycle run. Call {@link close} when done. */
export class LifecycleWorld {
  /** Outage rules installed by {@link stopAws}. */
  private outage: InstalledRule[] = [];
  /** Route 53's refusal of a CREATE for a record that exists (moto accepts it); off during an outage. */
  private fidelity: InstalledRule | undefined;
  private operatorStarts = 0;

  readonly env: LifecycleEnv;
  readonly label: string;
  readonly ns: string;
  readonly zoneName: string;
  zoneId: string;
  readonly admin: KubeClient;
  readonly aws: AwsClients;
  readonly proxy: AwsFaultProxy;
  /**
   * The master password RDS accepts for each instance, as the operator last sent it through the
   * proxy (a password RDS took is the one a client must use: the Secret must hold it).
   */
  readonly passwords = new Map<string, string>();
  private readonly unwatch: () => void;
  /** Every AWS write the operator sent through the proxy (not Describe, List or Get), oldest first. */
  readonly writes: AwsWrite[] = [];
  operator: OperatorProcess;

  private constructor(parts: {
    env: LifecycleEnv;
    label: string;
    ns: string;
    zoneName: string;
    zoneId: string;
    admin: KubeClient;
    aws: AwsClients;
    proxy: AwsFaultProxy;
    operator: OperatorProcess;
  }) {
    this.env = parts.env;
    this.label = parts.label;
    this.ns = parts.ns;
    this.zoneName = parts.zoneName;
    this.zoneId = parts.zoneId;
    this.admin = parts.admin;
    this.aws = parts.aws;
    this.proxy = parts.proxy;
    this.unwatch = this.proxy.watch((call) => {
      if (!/^(Describe|List|Get)/.test(call.operation))
        this.writes.push({
          at: Date.now(),
          service: call.service,
          operation: call.operation,
          changes: call.operation === 'ChangeResourceRecordSets' ? recordChanges(call.body) : [],
        });
      if (call.operation !== 'CreateDBInstance' && call.operation !== 'ModifyDBInstance') return;
      const q = new URLSearchParams(call.body);
      const password = q.get('MasterUserPassword');
      if (password !== null) this.passwords.set(q.get('DBInstanceIdentifier') ?? '', password);
    });
    this.operator = parts.operator;
  }

  /** Creates a namespace with the Service `web`, a hosted zone, a fault proxy, and starts the operator. */
  static async open(env: LifecycleEnv, label: string): Promise<LifecycleWorld> {
    await mkdir(env.dir, { recursive: true });
    const admin = new KubeClient(loadKubeconfig(env.kubeconfig));
    await installCrds(admin);
    // Before the operator starts: it serves Gateways when the cluster serves the Gateway API then.
    await installGatewayApiCrds(admin);
    await ensureGatewayClass(admin);
    const suffix = randomBytes(3).toString('hex');
    const ns = `lc-${label}-${suffix}`;
    await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const aws = awsClients(env.awsEndpoint);
    await ensureSubnets(aws);
    const zoneName = `lc-${suffix}.example`;
    const zoneId = await createHostedZone(aws, zoneName);
    const proxy = await AwsFaultProxy.start({ target: env.awsEndpoint });
    const operator = await startOperatorFor(env, ns, proxy, 0);
    const world = new LifecycleWorld({ env, label, ns, zoneName, zoneId, admin, aws, proxy, operator });
    world.operatorStarts = 1;
    world.fidelity = proxy.inject(route53RefuseExistingCreate());
    return world;
  }

  /** The fully qualified name of a host label in the current zone, with the trailing dot. */
  fqdn(host: string): string {
    return `${host}.${this.zoneName}.`;
  }

  /** The API path of one object of a kind (or of the collection without a name). */
  path(kind: ObjectKind, name?: string): string {
    return resourcePath(kindTypes[kind], { namespace: this.ns, ...(name !== undefined ? { name } : {}) });
  }

  /** Whether a MyIngressGroup is this world's: one a step made (`<ns>-…`) or one of its Gateways'. */
  ownsGroup(name: string): boolean {
    return name.startsWith(`${this.ns}-`) || name.startsWith(gatewayGroupName(this.ns, ''));
  }

  /** Stops the operator (SIGKILL when `kill`, else SIGTERM) and starts a new one. */
  async restartOperator(kill: boolean): Promise<void> {
    if (kill) process.kill(this.operator.pid, 'SIGKILL');
    await this.operator.stop();
    this.operator = await startOperatorFor(this.env, this.ns, this.proxy, this.operatorStarts++);
  }

  /** From now on AWS does not answer the operator: every call hangs until the operator gives up on it. */
  stopAws(): void {
    this.fidelity?.remove();
    this.fidelity = undefined;
    this.outage.push(this.proxy.inject({ fault: { kind: 'hang' } }));
  }

  /** AWS answers again. */
  resumeAws(): void {
    for (const r of this.outage) r.remove();
    this.outage = [];
    this.fidelity ??= this.proxy.inject(route53RefuseExistingCreate());
  }

  /** The TeamPolicy group of this world: only its operator honours its policy. */
  get policyGroup(): string {
    return `lc-${this.ns}`;
  }

  /**
   * Creates or changes this world's TeamPolicy: `open` allows every name in the zone, `narrow` only
   * the host `a`; adoption is allowed (the model adopts), nothing else is limited.
   */
  async applyPolicy(state: 'open' | 'narrow'): Promise<void> {
    await applyTeamPolicy(this.admin, this.policyGroup, this.policyGroup, {
      namespaces: { names: [this.ns] },
      guardrails: {
        adoption: 'Allowed',
        dnsRecords: { names: [state === 'open' ? this.zoneName : `a.${this.zoneName}`] },
      },
    });
  }

  /** Deletes this world's TeamPolicy (none left for its namespace). */
  async deletePolicy(): Promise<void> {
    await deleteTeamPolicy(this.admin, this.policyGroup);
  }

  /**
   * Takes a snapshot of a DB instance straight in the emulator, as a person would on the console
   * (it carries the instance's ownership tags: Skylift's instances copy tags to snapshots).
   */
  async snapshot(instance: string, name: string): Promise<void> {
    await this.aws.rds.send(
      new CreateDBSnapshotCommand({ DBInstanceIdentifier: instance, DBSnapshotIdentifier: name }),
    );
  }

  /** Deletes a Secret of the namespace as a user would (gone already: nothing to do). */
  async deleteSecret(name: string): Promise<void> {
    try {
      await this.admin.delete(`/api/v1/namespaces/${this.ns}/secrets/${name}`);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
    }
  }

  /** Makes a record by hand, straight in the emulator (as a user or another tool would). */
  async handMakeRecord(host: string, value: string): Promise<void> {
    await this.changeRecords([
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: this.fqdn(host),
          Type: 'A',
          TTL: 300,
          ResourceRecords: [{ Value: value }],
        },
      },
    ]);
  }

  /**
   * Deletes the hosted zone as someone outside Skylift would (every record but
   * the apex SOA/NS, then the zone) and creates a zone of the same name: a new ID.
   */
  async recreateZone(): Promise<void> {
    const r53 = this.aws.route53;
    const apex = `${this.zoneName}.`;
    const others = (await this.zoneRecords()).filter(
      (r) => !(r.Name === apex && (r.Type === 'SOA' || r.Type === 'NS')),
    );
    if (others.length > 0)
      await this.changeRecords(others.map((r) => ({ Action: 'DELETE', ResourceRecordSet: r })));
    await r53.send(new DeleteHostedZoneCommand({ Id: this.zoneId }));
    this.zoneId = await createHostedZone(this.aws, this.zoneName);
  }

  /** Reads the custom resources, Secrets, EndpointSlices, the zone and the Skylift inventory. */
  async observe(): Promise<Observed> {
    const crs: ObservedCr[] = [];
    for (const kind of namespacedKinds) {
      const list = await this.admin.get<{ items: RawCr[] }>(this.path(kind));
      for (const o of list.items) crs.push(observedCr(kind, o));
    }
    const groups = await this.admin.get<{ items: RawCr[] }>(this.path('MyIngressGroup'));
    for (const o of groups.items)
      if (this.ownsGroup(o.metadata.name)) crs.push(observedCr('MyIngressGroup', o));
    const gatewayList = await this.admin.get<{ items: RawGatewayObject[] }>(this.path('Gateway'));
    const gateways = gatewayList.items.map(observedGateway);
    const routeList = await this.admin.get<{ items: RawGatewayObject[] }>(this.path('HTTPRoute'));
    const routes = routeList.items.map(observedRoute);
    const secretList = await this.admin.get<{ items: RawSecret[] }>(`/api/v1/namespaces/${this.ns}/secrets`);
    const secrets = new Map(secretList.items.map((s) => [s.metadata.name, observedSecret(s)]));
    const slices = await this.admin.get<{ items: RawMeta[] }>(
      `/apis/discovery.k8s.io/v1/namespaces/${this.ns}/endpointslices`,
    );
    const endpointSlices = new Map(
      slices.items.map((s) => [s.metadata.name, s.metadata.resourceVersion ?? '']),
    );
    const records = await this.zoneRecords();
    const all = await collectInventory(this.aws, { zones: [{ id: this.zoneId, exclusive: false }] });
    // A namespaced object's owner tag is `<ns>/<name>`, a cluster-scoped group's `/<name>`.
    const mine = (o: { owner: { owner: string } }): boolean =>
      o.owner.owner.startsWith(`${this.ns}/`) ||
      (o.owner.owner.startsWith('/') && this.ownsGroup(o.owner.owner.slice(1)));
    const inventory: SkyliftInventory = {
      loadBalancers: all.loadBalancers.filter(mine),
      targetGroups: all.targetGroups.filter(mine),
      securityGroups: (all.securityGroups ?? []).filter(mine),
      dbInstances: all.dbInstances.filter(mine),
      records: all.records,
      unownedRecords: all.unownedRecords,
    };
    const dbs = new Map<string, ObservedDb>();
    let marker: string | undefined;
    do {
      const page = await this.aws.rds.send(
        new DescribeDBInstancesCommand({ Marker: marker, MaxRecords: 100 }),
      );
      for (const d of page.DBInstances ?? [])
        dbs.set(d.DBInstanceIdentifier ?? '', {
          identifier: d.DBInstanceIdentifier ?? '',
          instanceClass: d.DBInstanceClass ?? '',
          address: d.Endpoint?.Address ?? '',
        });
      marker = page.Marker;
    } while (marker !== undefined && marker !== '');
    const targets = new Map<string, string[]>();
    for (const tg of inventory.targetGroups) {
      const health = await this.aws.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tg.arn }));
      targets.set(
        tg.name,
        (health.TargetHealthDescriptions ?? []).map((t) => `${t.Target?.Id ?? ''}:${t.Target?.Port ?? ''}`),
      );
    }
    return {
      crs,
      gateways,
      routes,
      records,
      inventory,
      secrets,
      dbs,
      endpointSlices,
      targets,
      passwords: new Map(this.passwords),
    };
  }

  /** The operator's last log lines, for failure reports. */
  operatorTail(): string {
    return this.operator.tail();
  }

  /**
   * Deletes every custom resource left (waiting for them to go, so the
   * operator cleans AWS up), then stops the operator and the proxy and
   * deletes the namespace and the zone. Best effort: reports what it could
   * not clean instead of throwing.
   */
  async close(waitForCrs: (remaining: () => Promise<number>) => Promise<void>): Promise<string[]> {
    const problems: string[] = [];
    this.resumeAws();
    try {
      for (const kind of ['HTTPRoute', 'Gateway', ...namespacedKinds] as const) {
        const list = await this.admin.get<{ items: RawCr[] }>(this.path(kind));
        for (const o of list.items) await this.deleteQuietly(this.path(kind, o.metadata.name));
      }
      const groups = await this.admin.get<{ items: RawCr[] }>(this.path('MyIngressGroup'));
      for (const o of groups.items)
        if (this.ownsGroup(o.metadata.name))
          await this.deleteQuietly(this.path('MyIngressGroup', o.metadata.name));
      await waitForCrs(async () => (await this.observe()).crs.length);
    } catch (err) {
      problems.push(`cleanup: ${err instanceof Error ? err.message : String(err)}`);
    }
    await this.operator.stop();
    this.unwatch();
    await this.proxy.stop();
    await this.deletePolicy().catch((err: unknown) => {
      problems.push(`policy cleanup: ${err instanceof Error ? err.message : String(err)}`);
    });
    await this.deleteQuietly(`/api/v1/namespaces/${this.ns}`);
    try {
      const apex = `${this.zoneName}.`;
      const others = (await this.zoneRecords()).filter(
        (r) => !(r.Name === apex && (r.Type === 'SOA' || r.Type === 'NS')),
      );
      if (others.length > 0)
        await this.changeRecords(others.map((r) => ({ Action: 'DELETE', ResourceRecordSet: r })));
      await this.aws.route53.send(new DeleteHostedZoneCommand({ Id: this.zoneId }));
    } catch (err) {
      problems.push(`zone cleanup: ${err instanceof Error ? err.message : String(err)}`);
    }
    return problems;
  }

  /** Deletes an object; a 404 is fine. */
  async deleteQuietly(path: string): Promise<void> {
    try {
      await this.admin.delete(path);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
    }
  }

  private async zoneRecords(): Promise<ResourceRecordSet[]> {
    const all: ResourceRecordSet[] = [];
    let start: { name: string; type: string } | undefined;
    for (;;) {
      const out = await this.aws.route53.send(
        new ListResourceRecordSetsCommand({
          HostedZoneId: this.zoneId,
          ...(start !== undefined ? { StartRecordName: start.name, StartRecordType: start.type as 'A' } : {}),
        }),
      );
      all.push(...(out.ResourceRecordSets ?? []));
      if (out.IsTruncated !== true || out.NextRecordName === undefined) return all;
      start = { name: out.NextRecordName, type: out.NextRecordType ?? 'A' };
    }
  }

  private async changeRecords(
    changes: { Action: 'CREATE' | 'DELETE' | 'UPSERT'; ResourceRecordSet: ResourceRecordSet }[],
  ): Promise<void> {
    await this.aws.route53.send(
      new ChangeResourceRecordSetsCommand({ HostedZoneId: this.zoneId, ChangeBatch: { Changes: changes } }),
    );
  }

  /** Whether the zone still exists under its current ID (for reports). */
  async zoneExists(): Promise<boolean> {
    try {
      await this.aws.route53.send(new GetHostedZoneCommand({ Id: this.zoneId }));
      return true;
    } catch {
      return false;
    }
  }
}

/** Creates Skylift's GatewayClass (`skylift`) unless it exists. */
export async function ensureGatewayClass(admin: KubeClient): Promise<void> {
  try {
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: `${gatewayClassType.group}/${gatewayClassType.version}`,
      kind: 'GatewayClass',
      metadata: { name: skyliftGatewayClassName },
      spec: { controllerName: skyliftGatewayControllerName },
    });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
}

async function createHostedZone(aws: AwsClients, name: string): Promise<string> {
  const out = await aws.route53.send(
    new CreateHostedZoneCommand({ Name: name, CallerReference: `${name}-${randomBytes(6).toString('hex')}` }),
  );
  return (out.HostedZone?.Id ?? '').replace('/hostedzone/', '');
}

/** One AWS write the operator made (through the proxy), with the record changes of a Route 53 batch. */
export interface AwsWrite {
  readonly at: number;
  readonly service: string;
  readonly operation: string;
  readonly changes: readonly { readonly action: string; readonly name: string; readonly type: string }[];
}

/** The changes of a ChangeResourceRecordSets request body (XML), in order. Pure. */
export function recordChanges(body: string): AwsWrite['changes'] {
  const tag = (xml: string, name: string): string =>
    new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '';
  return [...body.matchAll(/<Change>([\s\S]*?)<\/Change>/g)].map((m) => ({
    action: tag(m[1] ?? '', 'Action'),
    name: tag(m[1] ?? '', 'Name'),
    type: tag(m[1] ?? '', 'Type'),
  }));
}

function startOperatorFor(
  env: LifecycleEnv,
  ns: string,
  proxy: AwsFaultProxy,
  n: number,
): Promise<OperatorProcess> {
  return startOperator({
    // Only this world's TeamPolicy applies (none until a step applies it); it records that it serves
    // teams in a ConfigMap of its own namespace.
    args: [
      '--namespaces',
      ns,
      '--leader-elect=false',
      '--team-policy-selector',
      policySelector(`lc-${ns}`),
      '--leader-election-namespace',
      ns,
      '--leader-election-id',
      'lifecycle',
      ...operatorFlags,
    ],
    kubeconfig: env.kubeconfig,
    env: emulatorEnv(proxy.endpoint),
    logFile: join(env.dir, `operator-${ns}-${n}.log`),
  });
}

interface RawMeta {
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    ownerReferences?: { uid: string; controller?: boolean }[];
  };
}

interface RawCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

interface RawCr extends RawMeta {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { conditions?: RawCondition[]; observedGeneration?: number };
}

interface RawSecret extends RawMeta {
  type?: string;
  data?: Record<string, string>;
}

function observedCondition(
  list: readonly RawCondition[] | undefined,
  type: string,
): ObservedCondition | undefined {
  const c = list?.find((x) => x.type === type);
  return c === undefined
    ? undefined
    : {
        status: c.status,
        reason: c.reason ?? '',
        message: c.message ?? '',
        observedGeneration: c.observedGeneration,
      };
}

function observedCr(kind: LifecycleKind, o: RawCr): ObservedCr {
  return {
    kind,
    name: o.metadata.name,
    uid: o.metadata.uid ?? '',
    generation: o.metadata.generation ?? 0,
    observedGeneration: o.status?.observedGeneration,
    deleting: o.metadata.deletionTimestamp !== undefined,
    finalizers: o.metadata.finalizers ?? [],
    ready: observedCondition(o.status?.conditions, 'Ready'),
    synced: observedCondition(o.status?.conditions, 'Synced'),
    spec: o.spec ?? {},
    status: o.status ?? {},
  };
}

interface RawGatewayObject extends RawMeta {
  status?: {
    conditions?: RawCondition[];
    addresses?: { value?: string }[];
    parents?: {
      parentRef?: { name?: string };
      controllerName?: string;
      conditions?: RawCondition[];
    }[];
  };
}

function observedGateway(g: RawGatewayObject): ObservedGateway {
  const programmed = g.status?.conditions?.find((c) => c.type === 'Programmed');
  return {
    name: g.metadata.name,
    uid: g.metadata.uid ?? '',
    programmed: programmed?.status === 'True' && programmed.observedGeneration === g.metadata.generation,
    address: g.status?.addresses?.[0]?.value,
  };
}

function observedRoute(r: RawGatewayObject): ObservedRoute {
  const gen = r.metadata.generation;
  const isTrue = (list: RawCondition[] | undefined, type: string): boolean =>
    list?.some((c) => c.type === type && c.status === 'True' && c.observedGeneration === gen) ?? false;
  const parents = new Map<string, { accepted: boolean; resolvedRefs: boolean }>();
  for (const p of r.status?.parents ?? [])
    if (p.controllerName === skyliftGatewayControllerName && p.parentRef?.name !== undefined)
      parents.set(p.parentRef.name, {
        accepted: isTrue(p.conditions, 'Accepted'),
        resolvedRefs: isTrue(p.conditions, 'ResolvedRefs'),
      });
  return { name: r.metadata.name, uid: r.metadata.uid ?? '', parents };
}

function observedSecret(s: RawSecret): ObservedSecret {
  const refs = s.metadata.ownerReferences ?? [];
  return {
    type: s.type ?? 'Opaque',
    data: Object.fromEntries(
      Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    ),
    controllerUid: refs.find((r) => r.controller === true)?.uid,
    ownerUids: refs.map((r) => r.uid),
    resourceVersion: s.metadata.resourceVersion ?? '',
  };
}
