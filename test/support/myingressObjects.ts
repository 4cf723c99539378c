// MyIngress objects in integration tests: created or patched as a user would, then waited for
// until the controller has settled them (Ready and Synced at their generation).
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import type { MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import type { TenantSource } from '../../src/tenancy/directory.ts';
import { startController, type RunningController } from './controllers.ts';
import { newNamespace } from './kube.ts';
import { waitSettledAtGeneration } from './fieldProbes.ts';
import { counterValue } from './gadgetController.ts';

/** Creates MyIngress `name` in `ns` with `spec`; does not wait. */
export async function submitMyIngress(
  admin: KubeClient,
  ns: string,
  name: string,
  spec: MyIngressSpec,
): Promise<void> {
  await admin.create(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name },
    spec,
  });
}

/** Creates MyIngress `name` in `ns` and resolves with it once Ready and Synced at its generation. */
export async function createMyIngress(
  admin: KubeClient,
  ns: string,
  name: string,
  spec: MyIngressSpec,
): Promise<MyIngress> {
  await submitMyIngress(admin, ns, name, spec);
  return waitSettledAtGeneration<MyIngress>(admin, myIngressType, ns, name, 'create');
}

/** Merge-patches the spec of MyIngress `name` and resolves with it once settled at the new generation. */
export async function patchMyIngressSpec(
  admin: KubeClient,
  ns: string,
  name: string,
  patch: Record<string, unknown>,
): Promise<MyIngress> {
  await admin.patch(resourcePath(myIngressType, { namespace: ns, name }), { spec: patch }, 'merge');
  return waitSettledAtGeneration<MyIngress>(admin, myIngressType, ns, name, JSON.stringify(patch));
}

/** Resolves once the MyIngress controller `c` has made `n` more reconciles (30 s at most). */
export async function myIngressReconciles(c: RunningController, n: number): Promise<void> {
  const at = await counterValue(c.metrics.reconcileTotal, { controller: 'myingress' });
  await waitFor(
    async () =>
      (await counterValue(c.metrics.reconcileTotal, { controller: 'myingress' })) >= at + n
        ? true
        : undefined,
    { timeoutMs: 30_000, description: `${n} reconciles` },
  );
}

/** How {@link serveMyIngressNamespace} runs the controller. */
export interface MyIngressNamespaceOptions {
  /** The AWS endpoint the controller calls (a fault proxy). */
  readonly endpoint: string;
  /** Settings over the defaults; pollMs is 300 unless given. */
  readonly settings?: Partial<MyIngressSettings>;
  readonly resyncPeriod?: string;
  /** The TeamPolicies the controller honours (default: none). */
  readonly tenants?: TenantSource;
}

/**
 * A new namespace named from `prefix`, served by a MyIngress controller of its own; the caller
 * stops the controller (afterEach).
 */
export async function serveMyIngressNamespace(
  admin: KubeClient,
  prefix: string,
  o: MyIngressNamespaceOptions,
): Promise<{ ns: string; controller: RunningController }> {
  const ns = await newNamespace(admin, prefix);
  const controller = await startController((s) => myIngressController(s, { pollMs: 300, ...o.settings }), {
    namespace: ns,
    endpoint: o.endpoint,
    ...(o.resyncPeriod !== undefined ? { resyncPeriod: o.resyncPeriod } : {}),
    ...(o.tenants !== undefined ? { tenants: o.tenants } : {}),
  });
  return { ns, controller };
}
