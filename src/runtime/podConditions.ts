// The engine's writes to Pods' readiness-gate conditions: a Pod waiting in `spec.readinessGates`
// for a condition only Skylift sets (e.g. its target is healthy behind a load balancer) gets it by
// a strategic merge patch on its status — conditions merge by type, so the kubelet's stay as
// they are — and only the Pod the adapter saw (its uid), never one that replaced it.
import { resourcePath } from '../apis/meta.ts';
import { podType } from '../apis/core.ts';
import type { PodConditionWrite } from './adapter.ts';
import { KubeApiError, type KubeClient } from './kube/client.ts';

/**
 * The status patch for one condition at `now`: the condition (lastTransitionTime `now`: the
 * adapter asks only for a change) and the Pod's uid as a precondition. Pure.
 */
export function podConditionPatch(w: PodConditionWrite, now: Date): Record<string, unknown> {
  return {
    metadata: { uid: w.uid },
    status: {
      conditions: [
        {
          type: w.type,
          status: w.status,
          reason: w.reason,
          message: w.message,
          lastProbeTime: null,
          lastTransitionTime: now.toISOString(),
        },
      ],
    },
  };
}

/**
 * Sets one readiness-gate condition of a Pod in `namespace`. Idempotent; a Pod that is gone
 * (404) or was replaced under the same name (409, 422: the uid precondition) is skipped, and
 * the answer says so; throws other Kubernetes errors. May block on the apiserver (the client's
 * deadline).
 */
export async function writePodCondition(
  client: KubeClient,
  namespace: string,
  w: PodConditionWrite,
  now: Date,
): Promise<'written' | 'gone'> {
  try {
    await client.patch(
      resourcePath(podType, { namespace, name: w.pod, subresource: 'status' }),
      podConditionPatch(w, now),
      'strategic',
    );
    return 'written';
  } catch (err) {
    if (err instanceof KubeApiError && [404, 409, 422].includes(err.statusCode)) return 'gone';
    throw err;
  }
}
