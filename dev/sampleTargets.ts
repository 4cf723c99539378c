// What `skylift dev --node` prints once the samples are Ready: the sample
// MyIngress's target group as AWS has it, next to the Pods it should hold.
import { DescribeTargetHealthCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { resourcePath } from '../src/apis/meta.ts';
import { myIngressType } from '../src/kinds/myingress/api.ts';
import type { KubeClient } from '../src/runtime/kube/client.ts';
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
