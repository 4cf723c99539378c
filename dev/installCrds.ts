import type { KubeClient } from '../src/runtime/kube/client.ts';
import type { CrdManifest } from '../src/apis/crd.ts';
import { allCrds } from '../src/kinds/registry.ts';
import { targetHealthGatePolicy } from '../src/kinds/myingress/readinessGate.ts';

/**
 * Installs or updates Skylift's CRDs by server-side apply and waits until
 * each is Established. Idempotent. Used by `skylift dev` and the tests; in a
 * cluster the Helm chart or kustomize installs crds/ instead.
 */
export async function installCrds(
  client: KubeClient,
  crds: readonly CrdManifest[] = allCrds(),
  timeoutMs = 30_000,
): Promise<void> {
  for (const crd of crds) {
    await client.patch(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      crd,
      'apply',
      {
        fieldManager: 'skylift',
        force: true,
      },
    );
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      );
      if ((got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new Error(`CRD ${crd.metadata.name} not Established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Installs or updates the target-health readiness gate's MutatingAdmissionPolicy and bindings
 * (src/kinds/myingress/readinessGate.ts) by server-side apply, as the chart does. Idempotent. The
 * apiserver loads a new policy asynchronously: a Pod created right after may not be gated yet.
 */
export async function installTargetHealthGate(
  client: KubeClient,
  name = 'skylift-target-health-gate',
): Promise<void> {
  for (const m of targetHealthGatePolicy(name)) {
    const plural =
      m.kind === 'MutatingAdmissionPolicy' ? 'mutatingadmissionpolicies' : 'mutatingadmissionpolicybindings';
    await client.patch(`/apis/admissionregistration.k8s.io/v1/${plural}/${m.metadata.name}`, m, 'apply', {
      fieldManager: 'skylift',
      force: true,
    });
  }
}
