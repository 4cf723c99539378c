// The Gateway API front end as the operator runs it: on when the cluster serves the Gateway API
// (`--gateway-api=auto`, the default, asks discovery once at start) and not turned off
// (`--gateway-api=off`). Today it is the GatewayClass controller; Gateway and HTTPRoute join it.
import type { Logger } from 'pino';
import { gatewayApiGroup, gatewayClassType, grpcRouteType } from '../apis/gatewayApi.ts';
import { resourcePath } from '../apis/meta.ts';
import { sleep, type Clock } from '../runtime/clock.ts';
import type { RunnableController } from '../runtime/controller.ts';
import { isKubeNotFound } from '../runtime/errors.ts';
import { KubeApiError, type KubeClient } from '../runtime/kube/client.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { GatewayClassController, type GatewayClassOutcome } from './gatewayClassController.ts';

/** `--gateway-api`: `auto` serves the Gateway API when the cluster has its CRDs; `off` never. */
export const gatewayApiModes = ['auto', 'off'] as const;
/** One of {@link gatewayApiModes}. */
export type GatewayApiMode = (typeof gatewayApiModes)[number];

/** True when `text` is one of {@link gatewayApiModes}. Pure. */
export function isGatewayApiMode(text: string): text is GatewayApiMode {
  return (gatewayApiModes as readonly string[]).includes(text);
}

/** What discovery says of the Gateway API. */
export type GatewayApiDiscovery =
  { readonly served: true } | { readonly served: false; readonly why: string };

/** The resources of one group version, as discovery lists them. */
interface ApiResourceList {
  resources?: { name: string }[];
}

/**
 * Whether the apiserver serves GatewayClasses of `gateway.networking.k8s.io/v1` with their status
 * subresource (discovery: `GET /apis/gateway.networking.k8s.io/v1`) and this identity may list
 * them (one `GET …/gatewayclasses?limit=1`), each within the client's deadline. Not served and
 * forbidden are answers, saying why; any other failure (unreachable, 5xx) throws.
 */
export async function discoverGatewayApi(client: KubeClient): Promise<GatewayApiDiscovery> {
  const gv = `${gatewayApiGroup}/${gatewayClassType.version}`;
  let list: ApiResourceList;
  try {
    list = await client.get<ApiResourceList>(`/apis/${gv}`);
  } catch (err) {
    if (isKubeNotFound(err))
      return {
        served: false,
        why: `the cluster does not serve ${gv} (the Gateway API CRDs are not installed)`,
      };
    throw err;
  }
  const names = new Set((list.resources ?? []).map((r) => r.name));
  for (const want of [gatewayClassType.plural, `${gatewayClassType.plural}/status`])
    if (!names.has(want)) return { served: false, why: `${gv} has no ${want}` };
  // The Gateway controller watches GRPCRoutes (standard channel since v1.1): without them its
  // informer would never sync, and no Gateway would be served.
  if (!names.has(grpcRouteType.plural))
    return {
      served: false,
      why: `${gv} has no ${grpcRouteType.plural} (Gateway API CRDs older than v1.1: install v1.1 or later)`,
    };
  // Served, but this identity may not read them (the chart grants it; another install may not):
  // off, rather than an informer refused forever holding the operator's start.
  try {
    await client.get(resourcePath(gatewayClassType), { limit: 1 });
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 403)
      return {
        served: false,
        why: `the operator may not list ${gatewayClassType.plural}.${gatewayApiGroup} (RBAC: grant get, list, watch on them and patch on their status, as the chart's ClusterRole <release>-gateway-api does)`,
      };
    throw err;
  }
  return { served: true };
}

/** Options of {@link GatewayApiFrontEnd}. */
export interface GatewayApiFrontEndOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly mode: GatewayApiMode;
  /** Longest pause between two discovery attempts that failed (default 30 s). */
  readonly maxRetryMs?: number;
  /**
   * The kinds' controllers of Gateway API objects (Gateways, routes), started after the
   * GatewayClass controller when the Gateway API is served; never started otherwise.
   */
  readonly controllers?: readonly RunnableController[];
  /** Told how each GatewayClass reconcile ended (tests count writes with it). */
  readonly onReconciled?: (key: string, outcome: GatewayClassOutcome) => void;
}

/** Whether the front end runs, once its start has decided. */
export type GatewayApiState = 'deciding' | 'on' | 'off';

/**
 * The front end's controllers, started by the manager (so only on the leader) when the Gateway
 * API is served: with `mode` `off` it starts nothing; with `auto` it asks discovery (retrying with
 * backoff while the apiserver fails to answer, until stopped) and starts the GatewayClass
 * controller if GatewayClasses are served, else logs that the Gateway API is off and why. The
 * answer holds for the process's life: CRDs installed later are served after a restart. Never
 * fails the operator for want of the Gateway API.
 */
export class GatewayApiFrontEnd implements RunnableController {
  readonly type = gatewayClassType;
  private readonly o: GatewayApiFrontEndOptions;
  private readonly stopping = new AbortController();
  private controller: GatewayClassController | undefined;
  private decided: GatewayApiState = 'deciding';
  private readonly started: RunnableController[] = [];

  constructor(o: GatewayApiFrontEndOptions) {
    this.o = o;
  }

  /** Whether it runs: `deciding` until discovery answered. */
  get state(): GatewayApiState {
    return this.decided;
  }

  /** The GatewayClass controller, when on. */
  get gatewayClasses(): GatewayClassController | undefined {
    return this.controller;
  }

  /** Off, or on with its informers listed. */
  get synced(): boolean {
    return (
      this.decided === 'off' ||
      (this.decided === 'on' &&
        this.controller?.synced === true &&
        (this.o.controllers ?? []).every((c) => c.synced))
    );
  }

  /** Decides, then starts the controllers if on (waiting for their first lists). */
  async start(): Promise<void> {
    const log = this.o.logger.child({ component: 'gateway-api' });
    if (this.o.mode === 'off') {
      this.decided = 'off';
      log.info('Gateway API front end off (--gateway-api=off)');
      return;
    }
    const found = await this.discover(log);
    if (found === undefined) return; // stopped meanwhile
    if (!found.served) {
      this.decided = 'off';
      log.info(
        { why: found.why },
        `Gateway API front end off: ${found.why}; the operator decides at start (restart it to serve GatewayClasses)`,
      );
      return;
    }
    this.controller = new GatewayClassController({
      client: this.o.client,
      clock: this.o.clock,
      logger: log,
      metrics: this.o.metrics,
      ...(this.o.onReconciled !== undefined ? { onReconciled: this.o.onReconciled } : {}),
    });
    this.decided = 'on';
    await this.controller.start();
    const more = this.o.controllers ?? [];
    for (const c of more) {
      await c.start();
      this.started.push(c);
    }
    log.info(
      { controllers: more.map((c) => c.type.kind) },
      'Gateway API front end on: serving GatewayClasses, Gateways and HTTPRoutes',
    );
  }

  async stop(deadlineMs: number): Promise<void> {
    this.stopping.abort();
    await Promise.all([this.controller?.stop(deadlineMs), ...this.started.map((c) => c.stop(deadlineMs))]);
  }

  /** Discovery's answer, retried with backoff while it fails; undefined once stopped. */
  private async discover(log: Logger): Promise<GatewayApiDiscovery | undefined> {
    const max = this.o.maxRetryMs ?? 30_000;
    for (let attempt = 1; !this.stopping.signal.aborted; attempt++) {
      try {
        return await discoverGatewayApi(this.o.client);
      } catch (err) {
        const retryInMs = Math.min(max, 200 * 2 ** attempt);
        log.warn(
          { err: err instanceof Error ? err.message : String(err), retryInMs },
          'cannot tell whether the cluster serves the Gateway API; asking again',
        );
        await sleep(this.o.clock, retryInMs, this.stopping.signal);
      }
    }
    return undefined;
  }
}
