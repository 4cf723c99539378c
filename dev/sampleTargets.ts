// What `skylift dev --node` prints once the samples are Ready: the sample
// MyIngress's target group as AWS has it, next to the Pods it should hold,
// and a curl line reaching those Pods through the local ALB data plane.
import { DescribeTargetHealthCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { resourcePath } from '../src/apis/meta.ts';
import { myIngressType } from '../src/kinds/myingress/api.ts';
import type { KubeClient } from '../src/runtime/kube/client.ts';
import type { AlbDataPlane, Endpoint } from './albDataPlane/dataPlane.ts';
import { waitFor } from './wait.ts';

/** A Pod as far as the comparison needs it. */
interface PodView {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** The target group of one MyIngress backend, and the Ready Pods of the Service behind it. */
export interface SampleTargets {
  /** `ip:port` registered in AWS, sorted. */
  readonly registered: readonly string[];
  /** Ready Pods behind the Service, by name, with their IPs. */
  readonly pods: readonly { readonly name: string; readonly ip: string }[];
}

/**
 * Waits (up to `timeoutMs`) until the first target group of MyIngress
 * `namespace/name` holds exactly the IPs of the Ready Pods matching
 * `podSelector`, and returns both. Read-only; throws when they do not agree
 * by the deadline, naming both sides.
 */
export async function waitForSampleTargets(
  client: KubeClient,
  elbv2: ElasticLoadBalancingV2Client,
  opts: { namespace: string; name: string; podSelector: string; timeoutMs: number },
): Promise<SampleTargets> {
  let last: SampleTargets = { registered: [], pods: [] };
  try {
    return await waitFor(
      async () => {
        const ingress = await client.get<{ status?: { targetGroups?: { arn?: string }[] } }>(
          resourcePath(myIngressType, { namespace: opts.namespace, name: opts.name }),
        );
        const arn = ingress.status?.targetGroups?.[0]?.arn;
        const pods = await client.get<{ items: PodView[] }>(`/api/v1/namespaces/${opts.namespace}/pods`, {
          labelSelector: opts.podSelector,
        });
        const ready = pods.items
          .filter(
            (p) =>
              p.metadata.deletionTimestamp === undefined &&
              p.status?.podIP !== undefined &&
              p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
          )
          .map((p) => ({ name: p.metadata.name, ip: p.status?.podIP ?? '' }))
          .sort((a, b) => a.ip.localeCompare(b.ip));
        if (arn === undefined) return undefined;
        const health = await elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }));
        const registered = (health.TargetHealthDescriptions ?? [])
          .map((t) => `${t.Target?.Id ?? ''}:${t.Target?.Port ?? 0}`)
          .sort();
        last = { registered, pods: ready };
        const ips = registered.map((r) => r.slice(0, r.lastIndexOf(':')));
        return ready.length > 0 && JSON.stringify(ips) === JSON.stringify(ready.map((p) => p.ip))
          ? last
          : undefined;
      },
      {
        timeoutMs: opts.timeoutMs,
        description: `MyIngress ${opts.name}'s targets to be its Pods`,
        intervalMs: 500,
      },
    );
  } catch (err) {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}: registered [${last.registered.join(', ')}], Ready Pods [${last.pods.map((p) => `${p.name} ${p.ip}`).join(', ')}]`,
      { cause: err },
    );
  }
}

/** The lines `skylift dev --node` prints for {@link SampleTargets}. Pure. */
export function formatSampleTargets(name: string, t: SampleTargets): string {
  const byIp = new Map(t.pods.map((p) => [p.ip, p.name]));
  return [
    `MyIngress ${name} sends traffic to the Pods (target group, as AWS has it):`,
    ...t.registered.map((r) => `  ${r.padEnd(20)} Pod ${byIp.get(r.slice(0, r.lastIndexOf(':'))) ?? '?'}`),
  ].join('\n');
}

/** Where the sample load balancer's listener is served locally, and the Pods behind it. */
export interface SampleEndpoint {
  readonly endpoint: Endpoint;
  /** Names of the Pods the data plane forwards to (healthy targets), sorted. */
  readonly pods: readonly string[];
}

/**
 * Waits (up to `timeoutMs`) until the ALB data plane serves listener `listenerPort` of MyIngress
 * `namespace/name`'s load balancer and has found every target in `targets.registered` healthy, so
 * that a request sent now reaches a Pod. Read-only; throws at the deadline saying what is missing.
 */
export async function waitForSampleEndpoint(
  client: KubeClient,
  dataPlane: Pick<AlbDataPlane, 'endpointOf' | 'targetHealth'>,
  targets: SampleTargets,
  opts: { namespace: string; name: string; listenerPort: number; timeoutMs: number },
): Promise<SampleEndpoint> {
  const byIp = new Map(targets.pods.map((p) => [p.ip, p.name]));
  let missing = 'the MyIngress status';
  try {
    return await waitFor(
      async () => {
        const ingress = await client.get<{
          status?: { arn?: string; targetGroups?: { arn?: string }[] };
        }>(resourcePath(myIngressType, { namespace: opts.namespace, name: opts.name }));
        const lbArn = ingress.status?.arn;
        const tgArn = ingress.status?.targetGroups?.[0]?.arn;
        if (lbArn === undefined || tgArn === undefined) return undefined;
        const endpoint = dataPlane.endpointOf(lbArn, opts.listenerPort);
        if (endpoint === undefined) {
          missing = `listener ${opts.listenerPort} of ${lbArn}`;
          return undefined;
        }
        const healthy = new Set(
          (dataPlane.targetHealth(tgArn) ?? [])
            .filter((t) => t.state === 'healthy')
            .map((t) => `${t.id}:${t.port}`),
        );
        const unhealthy = targets.registered.filter((r) => !healthy.has(r));
        if (unhealthy.length > 0) {
          missing = `health checks of ${unhealthy.join(', ')}`;
          return undefined;
        }
        const pods = targets.registered
          .map((r) => byIp.get(r.slice(0, r.lastIndexOf(':'))) ?? r)
          .sort((a, b) => a.localeCompare(b));
        return { endpoint, pods };
      },
      {
        timeoutMs: opts.timeoutMs,
        description: `the ALB data plane to serve MyIngress ${opts.name}`,
        intervalMs: 250,
      },
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}: waiting for ${missing}`, {
      cause: err,
    });
  }
}

/** The line `skylift dev --node` prints to send the sample app a request through its load balancer. Pure. */
export function formatSampleCurl(name: string, e: SampleEndpoint): string {
  return [
    `MyIngress ${name} answers through its load balancer (the local ALB data plane):`,
    `  curl -s http://${e.endpoint.host}:${e.endpoint.port}/   # MyIngress ${name} → Pods ${e.pods.join(', ')}`,
  ].join('\n');
}
