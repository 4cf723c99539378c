// The Gateway controller: for each Gateway of a Skylift GatewayClass, applies the MyIngressGroup
// that is its load balancer (status.ts's gatewayGroup; the group machinery makes the ALB) when its
// namespace's TeamPolicy allows that load balancer (group/tenancy.ts's judgeGatewayTenancy), deletes
// a Gateway's group once the Gateway is gone or no longer Skylift's, and writes the status the
// Gateway API specifies on the Gateway and on every HTTPRoute and GRPCRoute naming it. Informers on
// the Gateway API's objects and the groups, a deduplicating queue of `gateway/…`, `route/…` (an
// HTTPRoute) and `grpcroute/…` keys, one
// worker; every write is made only when what is there says something else. A Gateway annotated
// `skylift.dev/dns-zone` also gets a DNSRecord per hostname of its routes in that zone (dns.ts).
import type { Logger } from 'pino';
import { namespaceType, secretType, serviceType } from '../../../apis/core.ts';
import {
  gatewayClassType,
  gatewayType,
  grpcRouteType,
  httpRouteType,
  referenceGrantType,
  skyliftGatewayControllerName,
  type Gateway,
  type GatewayClass,
  type GRPCRoute,
  type HTTPRoute,
  type ReferenceGrant,
  type SecretObjectReference,
} from '../../../apis/gatewayApi.ts';
import { objectKey, resourcePath, type KubeObject, type ResourceType } from '../../../apis/meta.ts';
import type { Clock, TimerHandle } from '../../../runtime/clock.ts';
import type { RunnableController } from '../../../runtime/controller.ts';
import { isKubeConflict, isKubeNotFound } from '../../../runtime/errors.ts';
import type { KubeClient } from '../../../runtime/kube/client.ts';
import { Informer } from '../../../runtime/kube/informer.ts';
import type { Metrics } from '../../../runtime/metrics.ts';
import { WorkQueue } from '../../../runtime/workqueue.ts';
import { myIngressGroupType, type GroupMemberStatus, type MyIngressGroup } from '../group/api.ts';
import type { GatewayTenancyJudge } from '../group/tenancy.ts';
import {
  dnsConditionType,
  dnsRecordResource,
  dnsVerdict,
  gatewayDnsRecord,
  gatewayDnsZone,
  gatewayLabelValue,
  gatewayRecordLabel,
  madeByGateway,
  planGatewayDns,
  recordGateway,
  recordHostname,
  recordState,
  type AliasOf,
  type GatewayDnsRecord,
  type RecordState,
  type ServedHostname,
} from './dns.ts';
import { routeHostnamesOn } from './hostnames.ts';
import type { Verdict } from './listeners.ts';
import {
  certificateRefAllowed,
  listenerVerdicts,
  type CertificateRefState,
  type ListenerVerdict,
} from './listeners.ts';
import { tlsSecretOf, validateTlsSecret, type SecretObject } from '../../../providers/acm/tlsSecret.ts';
import { gatewayCleanupStep, hasGatewayFinalizer, withGatewayFinalizer } from './finalizer.ts';
import { gatewayAnnotation, gatewayGroupName, gatewayUidLabel, parentGateway } from './names.ts';
import {
  anyRouteOnGateway,
  notAllowedByTeamPolicy,
  tenancyVerdict,
  type GatewayRoute,
  type RouteService,
  type RouteWorld,
} from './routes.ts';
import {
  defaultGatewayDefaults,
  gatewayGroup,
  gatewayRefused,
  gatewayStatus,
  gatewayStatusHolds,
  loadBalancerRefusedReason,
  loadBalancerState,
  routeCarriage,
  routeParents,
  routeParentsHold,
  sameParent,
  type GatewayDefaults,
  type GatewayStatusApply,
  type ParentEntry,
  type RouteCarriage,
} from './status.ts';

/** The field manager of Skylift's writes to Gateways, routes and Gateways' groups. */
export const gatewayFieldManager = 'skylift';

/** Options of {@link GatewayController}. */
export interface GatewayControllerOptions {
  /** Every request has the client's deadline (`--kube-timeout`). */
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Watch only these namespaces' Gateways and routes (empty: all). */
  readonly namespaces: readonly string[];
  /** Where a Gateway's load balancer goes (default: internal, role-tagged subnets). */
  readonly defaults?: GatewayDefaults;
  /**
   * How a Gateway's own namespace's TeamPolicy stands with the load balancer it would get
   * (group/controller.ts's gatewayTenancyOf); absent (no tenant source): every Gateway programmed.
   */
  readonly tenancy?: GatewayTenancyJudge;
  /** Told of every TeamPolicy or namespace change (the tenant source): every Gateway is judged again. */
  readonly tenancyChanges?: { onChange(cb: () => void): void };
}

/** How one key's reconcile ended (metrics and tests). */
export type GatewayOutcome = 'written' | 'unchanged' | 'ignored';

/**
 * Serves Gateways of Skylift's classes (spec.controllerName `aws.skylift.dev/gateway-controller`):
 * makes and removes their MyIngressGroups and writes Gateway and route statuses. A Gateway's
 * status is server-side applied (field manager `skylift`, forced) with only Skylift's fields; a
 * route's `status.parents` (an atomic list other controllers share) is merge-patched on the
 * resourceVersion read, Skylift's entries replaced and others' kept (a 409 looks again). Writes
 * nothing for Gateways of other classes. Run by the manager, so only the leader writes.
 */
export class GatewayController implements RunnableController {
  readonly type = gatewayType;
  private readonly o: GatewayControllerOptions;
  private readonly defaults: GatewayDefaults;
  private readonly queue: WorkQueue;
  private readonly classes: Informer<GatewayClass>[];
  private readonly gateways: Informer<Gateway>[];
  private readonly groups: Informer<MyIngressGroup>[];
  private readonly routes: Informer<HTTPRoute>[];
  private readonly grpcRoutes: Informer<GRPCRoute>[];
  private readonly namespaces: Informer<KubeObject>[];
  private readonly services: Informer<RouteService>[];
  private readonly grants: Informer<ReferenceGrant>[];
  private readonly records: Informer<GatewayDnsRecord>[];
  private worker: Promise<void> | undefined;
  /** The last look at each Gateway's certificateRefs, by Gateway key (route reconciles read it). */
  private readonly certificates = new Map<string, Map<string, CertificateRefState>>();

  constructor(o: GatewayControllerOptions) {
    this.o = o;
    this.defaults = o.defaults ?? defaultGatewayDefaults;
    this.queue = new WorkQueue({ clock: o.clock, metrics: o.metrics.queueSink('gateway') });
    this.classes = this.watch<GatewayClass>(gatewayClassType);
    this.gateways = this.watch<Gateway>(gatewayType);
    this.groups = this.watch<MyIngressGroup>(myIngressGroupType, gatewayUidLabel);
    this.routes = this.watch<HTTPRoute>(httpRouteType);
    this.grpcRoutes = this.watch<GRPCRoute>(grpcRouteType);
    this.namespaces = this.watch<KubeObject>(namespaceType);
    this.services = this.watch<RouteService>(serviceType);
    this.grants = this.watch<ReferenceGrant>(referenceGrantType);
    this.records = this.watch<GatewayDnsRecord>(dnsRecordResource);
    for (const i of this.classes)
      i.on((_t, gc) => {
        for (const gw of this.all(this.gateways))
          if (gw.spec.gatewayClassName === gc.metadata.name) this.queue.add(gatewayKey(gw));
      });
    for (const i of this.gateways)
      i.on((_t, gw) => {
        this.queue.add(gatewayKey(gw));
        for (const r of this.routesOf(objectKey(gw.metadata))) this.queue.add(routeKey(r));
      });
    for (const i of this.groups)
      i.on((_t, g) => {
        const at = g.metadata.annotations?.[gatewayAnnotation];
        if (at === undefined) return;
        this.queue.add(`gateway/${at}`);
        // Its members' statuses follow what it carries (reconcileRoute's routeCarriage).
        for (const r of this.routesOf(at)) this.queue.add(routeKey(r));
      });
    const onRoute = (r: GatewayRoute, old: GatewayRoute['route'] | undefined): void => {
      this.queue.add(routeKey(r));
      for (const obj of old !== undefined ? [r.route, old] : [r.route])
        for (const p of obj.spec.parentRefs ?? []) {
          const gw = parentGateway(p, obj.metadata.namespace ?? '');
          if (gw === undefined) continue;
          this.queue.add(`gateway/${gw}`);
          // Routes of the other kind sharing a listener and hostname: one of the two is accepted.
          for (const other of this.routesOf(gw)) if (other.kind !== r.kind) this.queue.add(routeKey(other));
        }
    };
    for (const i of this.routes)
      i.on((_t, route, old) => {
        onRoute({ kind: 'HTTPRoute', route }, old);
      });
    for (const i of this.grpcRoutes)
      i.on((_t, route, old) => {
        onRoute({ kind: 'GRPCRoute', route }, old);
      });
    for (const i of this.namespaces) i.on(() => this.everything());
    // A policy made, changed or deleted may allow or refuse any Gateway's load balancer.
    o.tenancyChanges?.onChange(() => this.everything());
    // A grant changes what routes' backends and Gateways' certificates may name.
    for (const i of this.grants) i.on(() => this.everything());
    // A Gateway's records (their status, or their deletion), and anyone's records in the namespace
    // of a Gateway publishing hostnames (a conflict made or gone).
    for (const i of this.records)
      i.on((_t, r) => {
        const made = recordGateway(r);
        if (made !== undefined) this.queue.add(`gateway/${made.namespace}/${made.name}`);
        for (const gw of this.all(this.gateways))
          if (gw.metadata.namespace === r.metadata.namespace && gatewayDnsZone(gw) !== undefined)
            this.queue.add(gatewayKey(gw));
      });
    for (const i of this.services)
      i.on((_t, s) => {
        for (const r of this.allRoutes())
          if (r.route.metadata.namespace === s.metadata.namespace || namesService(r.route, s))
            this.queue.add(routeKey(r));
      });
  }

  /** Every informer has listed once. */
  get synced(): boolean {
    return this.informers().every((i) => i.hasSynced);
  }

  /** Starts the informers, waits for their first lists, looks at every Gateway and group, starts the worker. */
  async start(): Promise<void> {
    for (const i of this.informers()) i.start();
    await Promise.all(this.informers().map((i) => i.waitForSync()));
    this.everything();
    // Groups whose Gateway is gone (deleted while the operator was down) are looked at too.
    for (const g of this.all(this.groups)) {
      const at = g.metadata.annotations?.[gatewayAnnotation];
      if (at !== undefined) this.queue.add(`gateway/${at}`);
    }
    // And records whose Gateway is gone.
    for (const r of this.all(this.records)) {
      const made = recordGateway(r);
      if (made !== undefined) this.queue.add(`gateway/${made.namespace}/${made.name}`);
    }
    this.worker ??= this.work();
  }

  /** Stops taking keys; a write under way is given `deadlineMs` to end. Idempotent. */
  async stop(deadlineMs: number): Promise<void> {
    this.queue.shutDown();
    let timer: TimerHandle | undefined;
    await Promise.race([
      Promise.all([this.worker, this.queue.drained()]),
      new Promise<void>((r) => {
        timer = this.o.clock.setTimer(deadlineMs, r);
      }),
    ]);
    timer?.cancel();
    await Promise.all(this.informers().map((i) => i.stop()));
  }

  /** Every informer, as what start and stop need of one. */
  private informers(): {
    start(): void;
    stop(): Promise<void>;
    waitForSync(): Promise<void>;
    readonly hasSynced: boolean;
  }[] {
    return [
      ...this.classes,
      ...this.gateways,
      ...this.groups,
      ...this.routes,
      ...this.grpcRoutes,
      ...this.namespaces,
      ...this.services,
      ...this.grants,
      ...this.records,
    ];
  }

  /** One informer per watched namespace for a namespaced type (one for all when none is named). */
  private watch<T extends KubeObject>(type: ResourceType, labelSelector?: string): Informer<T>[] {
    const scopes = type.namespaced && this.o.namespaces.length > 0 ? this.o.namespaces : [undefined];
    return scopes.map(
      (namespace) =>
        new Informer<T>({
          client: this.o.client,
          type,
          clock: this.o.clock,
          logger: this.o.logger,
          namespace,
          labelSelector,
          onRestart: (reason) => this.o.metrics.watchRestarts.inc({ resource: type.plural, reason }),
        }),
    );
  }

  private all<T extends KubeObject>(informers: readonly Informer<T>[]): T[] {
    return informers.flatMap((i) => i.list());
  }

  private get<T extends KubeObject>(informers: readonly Informer<T>[], key: string): T | undefined {
    for (const i of informers) {
      const obj = i.get(key);
      if (obj !== undefined) return obj;
    }
    return undefined;
  }

  private everything(): void {
    for (const gw of this.all(this.gateways)) this.queue.add(gatewayKey(gw));
    this.everyRoute();
  }

  private everyRoute(): void {
    for (const r of this.allRoutes()) this.queue.add(routeKey(r));
  }

  /** Every HTTPRoute and GRPCRoute, with its kind. */
  private allRoutes(): GatewayRoute[] {
    return [
      ...this.all(this.routes).map((route) => ({ kind: 'HTTPRoute' as const, route })),
      ...this.all(this.grpcRoutes).map((route) => ({ kind: 'GRPCRoute' as const, route })),
    ];
  }

  /** The route of `kind` and key `namespace/name` in the cache. */
  private routeOf(kind: GatewayRoute['kind'], key: string): GatewayRoute | undefined {
    if (kind === 'HTTPRoute') {
      const route = this.get(this.routes, key);
      return route !== undefined ? { kind, route } : undefined;
    }
    const route = this.get(this.grpcRoutes, key);
    return route !== undefined ? { kind, route } : undefined;
  }

  /** The routes naming Gateway `key` (`namespace/name`) in a parentRef. */
  private routesOf(key: string): GatewayRoute[] {
    return this.allRoutes().filter((r) =>
      (r.route.spec.parentRefs ?? []).some((p) => parentGateway(p, r.route.metadata.namespace ?? '') === key),
    );
  }

  /** True when the Gateway's class is Skylift's (and not being deleted). */
  private ours(gw: Gateway): boolean {
    const gc = this.get(this.classes, gw.spec.gatewayClassName);
    return gc !== undefined && gc.spec.controllerName === skyliftGatewayControllerName;
  }

  /** What the route translation reads, for one Gateway. */
  private world(gw: Gateway, listeners: readonly ListenerVerdict[], groupName: string): RouteWorld {
    return {
      gateway: gw,
      listeners,
      groupName,
      namespaceLabels: (ns) => this.get(this.namespaces, ns)?.metadata.labels,
      service: (ns, name) => this.get(this.services, `${ns}/${name}`),
      grants: (ns) => this.all(this.grants).filter((g) => g.metadata.namespace === ns),
      routes: this.routesOf(objectKey(gw.metadata)),
    };
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = this.o.clock.now();
      try {
        if (key.startsWith('gateway/')) await this.reconcileGateway(key.slice('gateway/'.length));
        else if (key.startsWith('route/')) await this.reconcileRoute('HTTPRoute', key.slice('route/'.length));
        else if (key.startsWith('grpcroute/'))
          await this.reconcileRoute('GRPCRoute', key.slice('grpcroute/'.length));
        this.queue.forget(key);
        this.o.metrics.reconcileTotal.inc({ controller: 'gateway', result: 'success' });
      } catch (err) {
        const delayMs = this.queue.addRateLimited(key);
        if (isKubeConflict(err)) {
          this.o.metrics.reconcileTotal.inc({ controller: 'gateway', result: 'requeue' });
        } else {
          this.o.metrics.reconcileTotal.inc({ controller: 'gateway', result: 'error' });
          this.o.metrics.reconcileErrors.inc({ controller: 'gateway' });
          this.o.logger.warn(
            { key, err: err instanceof Error ? err.message : String(err), retryInMs: delayMs },
            'reconciling a Gateway or route failed; retrying',
          );
        }
      } finally {
        this.o.metrics.reconcileTime.observe(
          { controller: 'gateway' },
          (this.o.clock.now() - started) / 1000,
        );
        this.queue.done(key);
      }
    }
  }

  /**
   * Brings a Gateway's finalizer, group, records and status to what Skylift says of it: a Gateway
   * of a Skylift class gets the finalizer before its group is applied; its group is applied only
   * when its own namespace's TeamPolicy allows it (options.tenancy) — refused, no group is made,
   * one already there is neither changed nor deleted, its DNSRecords are left as they are, and the
   * Gateway is Accepted=False and Programmed=False, reason NotAllowedByTeamPolicy; one deleted or no
   * longer Skylift's has its group and records deleted whatever its policy says and loses the
   * finalizer once the apiserver has neither (cleanUp). Idempotent; never blocks (a wait is a later
   * look at the key).
   */
  async reconcileGateway(key: string): Promise<GatewayOutcome> {
    let gw = this.get(this.gateways, key);
    const mine = this.all(this.groups).filter((g) => g.metadata.annotations?.[gatewayAnnotation] === key);
    if (gw === undefined || !this.ours(gw) || gw.metadata.deletionTimestamp !== undefined)
      return this.cleanUp(key, gw, mine);
    let outcome: GatewayOutcome = 'unchanged';
    const step = gatewayCleanupStep({
      served: true,
      finalizer: hasGatewayFinalizer(gw.metadata.finalizers),
      leftovers: mine.length > 0,
    });
    if (step === 'addFinalizer') {
      // Before anything is made for it: a Gateway deleted from now on waits for its load balancer.
      const updated = await this.setFinalizer(gw, true);
      if (updated === undefined) return 'ignored';
      gw = updated;
      outcome = 'written';
    }
    const certificates = await this.certificateStates(gw);
    this.certificates.set(key, certificates);
    if ([...certificates.values()].some((c) => !c.ok))
      this.queue.addAfter(`gateway/${key}`, certificateRecheckMs);
    const listeners = listenerVerdicts(gw, (ref) => certificates.get(secretKey(gw, ref)) ?? { ok: true });
    const want = gatewayGroup(gw, listeners, this.defaults);
    for (const g of mine)
      if (want === undefined || g.metadata.name !== want.metadata.name) {
        await this.deleteGroup(g, 'no listener of the Gateway can be served');
        outcome = 'written';
      }
    const group = want !== undefined ? this.get(this.groups, want.metadata.name) : undefined;
    // Its own namespace's TeamPolicy judges the load balancer it would get: one refused is neither
    // made nor changed, and one already there is kept as it is (a policy missing for a moment, as
    // in a GitOps re-sync, must not take a serving load balancer away). Deletion is never judged.
    const judged =
      want !== undefined && this.o.tenancy !== undefined
        ? await this.o.tenancy(gw.metadata.namespace ?? '', want)
        : undefined;
    const refusal = judged?.kind === 'refused' ? judged.message : undefined;
    // Debug: every look at a refused Gateway comes here; its status says it once.
    if (refusal !== undefined && (group === undefined || !contains(group, want)))
      this.o.logger.debug(
        { gateway: key, group: want?.metadata.name, why: refusal },
        'Gateway load balancer (MyIngressGroup) not applied: its namespace’s TeamPolicy refuses it',
      );
    if (want !== undefined && refusal === undefined && (group === undefined || !contains(group, want))) {
      await this.o.client.patch(
        resourcePath(myIngressGroupType, { name: want.metadata.name }),
        want,
        'apply',
        { fieldManager: gatewayFieldManager, force: true },
      );
      this.o.logger.info(
        { gateway: key, group: want.metadata.name },
        'Gateway load balancer (MyIngressGroup) applied',
      );
      outcome = 'written';
    }
    const attached = new Map<string, number>();
    const served: ServedHostname[] = [];
    const world = this.world(gw, listeners, want?.metadata.name ?? '');
    for (const r of this.routesOf(key)) {
      // A route its namespace's TeamPolicy refuses is not attached, and its hostnames not published.
      if (tenancyVerdict(this.memberEntry(want?.metadata.name ?? '', r.route)) !== undefined) continue;
      for (const p of anyRouteOnGateway(r, world).parents)
        for (const l of p.listeners) {
          attached.set(l, (attached.get(l) ?? 0) + 1);
          const on = routeHostnamesOn(
            listeners.find((v) => v.listener.name === l)?.listener.hostname,
            r.route.spec.hostnames,
          );
          if (!on.anyHost)
            for (const hostname of on.hosts)
              served.push({
                route: `${r.kind} ${r.route.metadata.namespace ?? ''}/${r.route.metadata.name}`,
                hostname,
              });
        }
    }
    // A refused Gateway's records are left as they are, like its load balancer.
    const dns =
      refusal === undefined
        ? await this.syncRecords(gw, served, want !== undefined ? group : undefined)
        : {
            wrote: false,
            verdict:
              gatewayDnsZone(gw) !== undefined
                ? {
                    status: 'False' as const,
                    reason: notAllowedByTeamPolicy,
                    message:
                      'its DNSRecords are left as they are: its namespace’s TeamPolicy refuses its load balancer (see Accepted)',
                  }
                : undefined,
          };
    if (dns.wrote) outcome = 'written';
    const lb = loadBalancerState(group);
    const status = gatewayStatus(
      gw,
      listeners,
      refusal !== undefined ? gatewayRefused(lb, group?.metadata.name, refusal) : lb,
      attached,
      new Date(this.o.clock.now()),
      dns.verdict !== undefined ? { type: dnsConditionType, verdict: dns.verdict } : undefined,
    );
    if (!gatewayStatusHolds(gw, status)) {
      await this.applyGatewayStatus(gw, status);
      outcome = 'written';
    }
    return outcome;
  }

  /**
   * A Gateway that is gone, being deleted or no longer Skylift's (`gw`, undefined when gone;
   * `mine`, its groups in the cache): its groups and DNSRecords deleted; with Skylift's finalizer,
   * that finalizer removed once the apiserver (not the cache, which may not have seen a group just
   * applied) holds neither its group nor its records — looked at again until then. Only Skylift's
   * finalizer is removed. Idempotent.
   */
  private async cleanUp(
    key: string,
    gw: Gateway | undefined,
    mine: readonly MyIngressGroup[],
  ): Promise<GatewayOutcome> {
    const why =
      gw === undefined
        ? 'the Gateway is gone'
        : gw.metadata.deletionTimestamp !== undefined
          ? 'the Gateway is being deleted'
          : 'the Gateway is not Skylift’s';
    this.certificates.delete(key);
    for (const g of mine) await this.deleteGroup(g, why);
    // Kubernetes's garbage collector deletes a Gateway's records with it too; these are also
    // the records of a Gateway no longer Skylift's, and of one gone while the collector lags.
    const slash = key.indexOf('/');
    const records = this.all(this.records).filter((r) =>
      madeByGateway(r, key.slice(0, slash), key.slice(slash + 1), gw?.metadata.uid),
    );
    for (const r of records) await this.deleteRecord(r, why);
    const wrote = mine.length > 0 || records.length > 0;
    if (gw === undefined || !hasGatewayFinalizer(gw.metadata.finalizers))
      return wrote ? 'written' : 'ignored';
    const left = await this.leftovers(key, gw);
    const step = gatewayCleanupStep({
      served: false,
      finalizer: true,
      leftovers: left.group !== undefined || left.records.length > 0,
    });
    if (step === 'cleanUp') {
      if (left.group !== undefined) await this.deleteGroup(left.group, why);
      for (const r of left.records) await this.deleteRecord(r, why);
      // Their deletions are watched; this look is the safety net should an event be missed.
      this.queue.addAfter(`gateway/${key}`, cleanupRecheckMs);
      return wrote ? 'written' : 'unchanged';
    }
    if ((await this.setFinalizer(gw, false)) !== undefined)
      this.o.logger.info({ gateway: key, why }, 'Gateway load balancer and records gone; finalizer removed');
    return 'written';
  }

  /**
   * What is left of Gateway `gw` (`key`) as the apiserver has it now: its MyIngressGroup (named
   * gatewayGroupName and annotated with `key`) and the DNSRecords it made (label and controller
   * ownerReference with its uid). Read-only.
   */
  private async leftovers(
    key: string,
    gw: Gateway,
  ): Promise<{ group: MyIngressGroup | undefined; records: GatewayDnsRecord[] }> {
    const ns = gw.metadata.namespace ?? '';
    const name = gw.metadata.name;
    let group: MyIngressGroup | undefined;
    try {
      group = await this.o.client.get<MyIngressGroup>(
        resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, name) }),
      );
    } catch (err) {
      if (!isKubeNotFound(err)) throw err;
    }
    if (group?.metadata.annotations?.[gatewayAnnotation] !== key) group = undefined;
    let records: GatewayDnsRecord[] = [];
    try {
      const list = await this.o.client.get<{ items?: GatewayDnsRecord[] }>(
        resourcePath(dnsRecordResource, { namespace: ns }),
        { labelSelector: `${gatewayRecordLabel}=${gatewayLabelValue(name)}` },
      );
      records = (list.items ?? []).filter((r) => madeByGateway(r, ns, name, gw.metadata.uid));
    } catch (err) {
      if (!isKubeNotFound(err)) throw err;
    }
    return { group, records };
  }

  /**
   * Adds (`present`) or removes Skylift's finalizer on `gw`, everyone else's kept: a merge patch on
   * the resourceVersion read, so a concurrent change gives 409 (looked at again) rather than
   * another's finalizer lost. Returns the Gateway as written; undefined when it is gone.
   */
  private async setFinalizer(gw: Gateway, present: boolean): Promise<Gateway | undefined> {
    const finalizers = withGatewayFinalizer(gw.metadata.finalizers, present);
    try {
      const updated = await this.o.client.patch<Gateway>(
        resourcePath(gatewayType, { namespace: gw.metadata.namespace, name: gw.metadata.name }),
        { metadata: { finalizers, resourceVersion: gw.metadata.resourceVersion } },
        'merge',
      );
      return {
        ...gw,
        metadata: {
          ...gw.metadata,
          finalizers,
          ...(updated.metadata.resourceVersion !== undefined
            ? { resourceVersion: updated.metadata.resourceVersion }
            : {}),
        },
      };
    } catch (err) {
      if (isKubeNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Brings a route's parents entries for Skylift's Gateways to what Skylift says of them. */
  async reconcileRoute(kind: GatewayRoute['kind'], key: string): Promise<GatewayOutcome> {
    const found = this.routeOf(kind, key);
    if (found === undefined) return 'ignored';
    const route = found.route;
    const ns = route.metadata.namespace ?? '';
    const entries: ParentEntry[] = [];
    for (const p of route.spec.parentRefs ?? []) {
      const gwKey = parentGateway(p, ns);
      const gw = gwKey !== undefined ? this.get(this.gateways, gwKey) : undefined;
      if (gw === undefined || !this.ours(gw)) continue;
      const certificates = this.certificates.get(gwKey ?? '');
      const listeners = listenerVerdicts(gw, (ref) => certificates?.get(secretKey(gw, ref)) ?? { ok: true });
      const name = gatewayGroup(gw, listeners, this.defaults)?.metadata.name ?? '';
      const on = anyRouteOnGateway(found, this.world(gw, listeners, name));
      const verdict = on.parents.find((v) => sameParent(v.parentRef, p, ns));
      if (verdict === undefined) continue;
      // A route bringing rules is said Accepted once the load balancer carries this generation of
      // them (its group lists it Attached at this generation after a pass that succeeded), so
      // traffic follows the status; not Accepted when the group cannot carry them (AWS refused
      // them: its message); till either, the entry stays as it was (or absent) — a passing AWS
      // failure is retried by the group, and says nothing of the route.
      const carriage: RouteCarriage =
        on.member === undefined || verdict.accepted.status !== 'True'
          ? { kind: 'carried' }
          : routeCarriage(this.get(this.groups, name), route);
      // A route its namespace's TeamPolicy refuses is not Accepted, whatever its listeners say.
      const refused =
        verdict.accepted.status === 'True' ? tenancyVerdict(this.memberEntry(name, route)) : undefined;
      entries.push({
        parentRef: p,
        accepted:
          refused ??
          (carriage.kind === 'refused'
            ? { status: 'False', reason: loadBalancerRefusedReason, message: carriage.message }
            : verdict.accepted),
        resolvedRefs: verdict.resolvedRefs,
        ...(carriage.kind === 'pending' && refused === undefined ? { hold: true } : {}),
      });
    }
    const parents = routeParents(route, entries, new Date(this.o.clock.now()));
    if (routeParentsHold(route, parents)) return 'unchanged';
    try {
      await this.o.client.patch(
        resourcePath(kind === 'HTTPRoute' ? httpRouteType : grpcRouteType, {
          namespace: ns,
          name: route.metadata.name,
          subresource: 'status',
        }),
        { metadata: { resourceVersion: route.metadata.resourceVersion }, status: { parents } },
        'merge',
      );
    } catch (err) {
      if (isKubeNotFound(err)) return 'ignored';
      throw err;
    }
    return 'written';
  }

  /** The route's entry in group `name`'s status.members, if listed. */
  private memberEntry(name: string, route: GatewayRoute['route']): GroupMemberStatus | undefined {
    return this.get(this.groups, name)?.status?.members?.find((x) => x.uid === route.metadata.uid);
  }

  /**
   * How each certificateRef of the Gateway's HTTPS listeners resolves: allowed by the Gateway API's
   * rules (certificateRefAllowed), then the Secret read (a GET with the client's deadline) and
   * checked as ACM will take it (validateTlsSecret). Keyed by secretKey.
   */
  private async certificateStates(gw: Gateway): Promise<Map<string, CertificateRefState>> {
    const out = new Map<string, CertificateRefState>();
    const ns = gw.metadata.namespace ?? '';
    for (const l of gw.spec.listeners) {
      if (l.protocol !== 'HTTPS') continue;
      for (const ref of l.tls?.certificateRefs ?? []) {
        const key = secretKey(gw, ref);
        if (out.has(key)) continue;
        const allowed = certificateRefAllowed(ref, ns, (n) =>
          this.all(this.grants).filter((g) => g.metadata.namespace === n),
        );
        if (!allowed.ok) {
          out.set(key, allowed);
          continue;
        }
        const secretNs = ref.namespace ?? ns;
        let secret: SecretObject | undefined;
        try {
          secret = await this.o.client.get<SecretObject>(
            resourcePath(secretType, { namespace: secretNs, name: ref.name }),
          );
        } catch (err) {
          if (!isKubeNotFound(err)) throw err;
        }
        if (secret === undefined) {
          out.set(key, {
            ok: false,
            reason: 'InvalidCertificateRef',
            message: `Secret ${secretNs}/${ref.name} does not exist`,
          });
          continue;
        }
        try {
          validateTlsSecret(tlsSecretOf(secret), this.o.clock.now());
          out.set(key, { ok: true });
        } catch (err) {
          out.set(key, {
            ok: false,
            reason: 'InvalidCertificateRef',
            message: err instanceof Error ? err.message : String(err),
          });
        }
      }
    }
    return out;
  }

  private async applyGatewayStatus(gw: Gateway, status: GatewayStatusApply): Promise<void> {
    try {
      await this.o.client.patch(
        resourcePath(gatewayType, {
          namespace: gw.metadata.namespace,
          name: gw.metadata.name,
          subresource: 'status',
        }),
        {
          apiVersion: `${gatewayType.group}/${gatewayType.version}`,
          kind: gatewayType.kind,
          metadata: {
            namespace: gw.metadata.namespace,
            name: gw.metadata.name,
            resourceVersion: gw.metadata.resourceVersion,
          },
          status,
        },
        'apply',
        { fieldManager: gatewayFieldManager, force: true },
      );
    } catch (err) {
      if (!isKubeNotFound(err)) throw err;
    }
  }

  /**
   * Brings the DNSRecords of Gateway `gw` to its plan (dns.ts): with a `skylift.dev/dns-zone`
   * annotation, one per hostname of `served` inside the zone, aliasing the load balancer of `group`
   * (none before it has a DNS name), server-side applied (field manager `skylift`) when what is
   * there differs; its records no longer wanted deleted (one whose zone or name changed too: those
   * are fixed, so it is made again once gone). Never writes a DNSRecord the Gateway did not make
   * (label and controller ownerReference uid): a name taken by one, or a hostname another
   * DNSRecord of the namespace already asks for, is reported, not written. Returns the DNS
   * condition's verdict (undefined without the annotation) and whether anything was written.
   */
  private async syncRecords(
    gw: Gateway,
    served: readonly ServedHostname[],
    group: MyIngressGroup | undefined,
  ): Promise<{ verdict: Verdict | undefined; wrote: boolean }> {
    const ns = gw.metadata.namespace ?? '';
    const name = gw.metadata.name;
    const uid = gw.metadata.uid;
    const zone = gatewayDnsZone(gw);
    const inNamespace = this.all(this.records).filter((r) => r.metadata.namespace === ns);
    const isMine = (r: GatewayDnsRecord): boolean => madeByGateway(r, ns, name, uid);
    const plan = zone !== undefined ? planGatewayDns(name, zone, served) : undefined;
    const keep = new Set(plan?.records.map((r) => r.objectName) ?? []);
    let wrote = false;
    for (const r of inNamespace)
      if (isMine(r) && !keep.has(r.metadata.name)) {
        await this.deleteRecord(
          r,
          zone === undefined ? 'the Gateway publishes no hostnames' : 'no attached route serves its hostname',
        );
        wrote = true;
      }
    if (plan === undefined) return { verdict: undefined, wrote };
    const dnsName = group?.status?.dnsName;
    const hostedZoneId = group?.status?.canonicalHostedZoneId;
    const alias: AliasOf | undefined =
      typeof dnsName === 'string' && dnsName !== '' && typeof hostedZoneId === 'string' && hostedZoneId !== ''
        ? { dnsName, hostedZoneId }
        : undefined;
    const states = new Map<string, RecordState>();
    for (const want of plan.records) {
      const existing = inNamespace.find((r) => r.metadata.name === want.objectName);
      if (existing !== undefined && !isMine(existing)) {
        states.set(want.hostname, {
          state: 'failed',
          message: `DNSRecord ${ns}/${want.objectName} exists and was not made by this Gateway; left alone`,
        });
        continue;
      }
      const other = inNamespace.find(
        (r) =>
          !isMine(r) &&
          r.spec.type === 'A' &&
          r.metadata.deletionTimestamp === undefined &&
          recordHostname(r) === want.hostname,
      );
      if (existing === undefined && other !== undefined) {
        states.set(want.hostname, {
          state: 'failed',
          message: `DNSRecord ${ns}/${other.metadata.name}, not made by this Gateway, already asks for an A record of this name; left alone`,
        });
        continue;
      }
      if (existing?.metadata.deletionTimestamp !== undefined) {
        states.set(want.hostname, { state: 'pending', message: 'its previous DNSRecord is being deleted' });
        continue;
      }
      if (alias === undefined) {
        states.set(want.hostname, { state: 'pending', message: 'the load balancer has no DNS name yet' });
        continue;
      }
      const body = gatewayDnsRecord(gw, plan.zone, want, alias);
      if (existing !== undefined && contains(existing, body)) {
        states.set(want.hostname, recordState(existing));
        continue;
      }
      if (
        existing !== undefined &&
        (existing.spec.zoneName !== body.spec.zoneName ||
          existing.spec.zoneId !== undefined ||
          existing.spec.name !== body.spec.name ||
          existing.spec.type !== body.spec.type)
      ) {
        // Fixed fields: the record goes (its finalizer removes it from Route 53), then is made again.
        await this.deleteRecord(existing, 'its zone or name changed');
        states.set(want.hostname, { state: 'pending', message: 'its previous DNSRecord is being deleted' });
        wrote = true;
        continue;
      }
      try {
        await this.o.client.patch(
          resourcePath(dnsRecordResource, { namespace: ns, name: want.objectName }),
          body,
          'apply',
          { fieldManager: gatewayFieldManager, force: true },
        );
        wrote = true;
        states.set(want.hostname, { state: 'pending', message: 'applied' });
        this.o.logger.info(
          { gateway: `${ns}/${name}`, record: want.objectName, hostname: want.hostname },
          'Gateway DNSRecord applied',
        );
      } catch (err) {
        if (!isRefusal(err)) throw err;
        // Admission (a TeamPolicy's zone guardrail, the schema) refused it: said on the Gateway.
        states.set(want.hostname, {
          state: 'failed',
          message: `DNSRecord ${ns}/${want.objectName} refused: ${err instanceof Error ? err.message : String(err)}`,
        });
      }
    }
    return { verdict: dnsVerdict(plan, states), wrote };
  }

  private async deleteRecord(r: GatewayDnsRecord, why: string): Promise<void> {
    if (r.metadata.deletionTimestamp !== undefined) return;
    try {
      await this.o.client.delete(
        resourcePath(dnsRecordResource, { namespace: r.metadata.namespace, name: r.metadata.name }),
        { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: r.metadata.uid } },
      );
      this.o.logger.info(
        { record: `${r.metadata.namespace ?? ''}/${r.metadata.name}`, why },
        'Gateway DNSRecord deleted',
      );
    } catch (err) {
      if (!isKubeNotFound(err) && !isKubeConflict(err)) throw err;
    }
  }

  private async deleteGroup(g: MyIngressGroup, why: string): Promise<void> {
    if (g.metadata.deletionTimestamp !== undefined) return;
    try {
      await this.o.client.delete(resourcePath(myIngressGroupType, { name: g.metadata.name }), {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { uid: g.metadata.uid },
      });
      this.o.logger.info({ group: g.metadata.name, why }, 'Gateway load balancer (MyIngressGroup) deleted');
    } catch (err) {
      if (!isKubeNotFound(err) && !isKubeConflict(err)) throw err;
    }
  }
}

/** How soon a Gateway being cleaned up is looked at again should no event of its group or records come. */
const cleanupRecheckMs = 5_000;

/** How soon a Gateway whose certificateRefs do not all resolve is looked at again (a Secret made later). */
const certificateRecheckMs = 15_000;

/** A certificateRef's Secret as `namespace/name` (the Gateway's namespace by default). Pure. */
function secretKey(gw: Gateway, ref: SecretObjectReference): string {
  return `${ref.namespace ?? gw.metadata.namespace ?? ''}/${ref.name}`;
}

/** True for an apiserver answer refusing a write for what it holds (400, 403, 422), not a passing failure. */
function isRefusal(err: unknown): boolean {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return code === 400 || code === 403 || code === 422;
}

function gatewayKey(gw: Gateway): string {
  return `gateway/${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
}

/** A route's queue key: `route/…` for an HTTPRoute, `grpcroute/…` for a GRPCRoute. */
function routeKey(r: GatewayRoute): string {
  const prefix = r.kind === 'HTTPRoute' ? 'route' : 'grpcroute';
  return `${prefix}/${r.route.metadata.namespace ?? ''}/${r.route.metadata.name}`;
}

/** True when a route's backendRefs name Service `s`. */
function namesService(r: GatewayRoute['route'], s: KubeObject): boolean {
  return (r.spec.rules ?? []).some((rule) =>
    (rule.backendRefs ?? []).some(
      (b) => b.name === s.metadata.name && (b.namespace ?? r.metadata.namespace) === s.metadata.namespace,
    ),
  );
}

/** True when every field `want` sets is in `have` with the same value (lists compared whole). Pure. */
export function contains(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return false;
    return want.every((w, i) => contains(have[i], w));
  }
  if (typeof want === 'object' && want !== null) {
    if (typeof have !== 'object' || have === null || Array.isArray(have)) return false;
    const h = have as Record<string, unknown>;
    return Object.entries(want).every(([k, v]) => contains(h[k], v));
  }
  return have === want;
}
