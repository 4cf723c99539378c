// What integration tests use to reach the local stack.
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { simpleRequest } from '../../dev/http.ts';
import type { Kubeconfig } from '../../src/runtime/kube/kubeconfig.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { NodeInfo, StackInfo } from './stackInfo.ts';

export type { StackInfo } from './stackInfo.ts';

/** The stack started by globalSetup. Throws outside the integration project. */
export function stackInfo(): StackInfo {
  const info = inject('stack');
  // inject() returns undefined when no globalSetup provided the value.
  if ((info as StackInfo | undefined) === undefined) {
    throw new Error(
      'no local stack: run this file in the integration project (vitest --project integration)',
    );
  }
  return info;
}

/** The kubeconfig of the admin or the limited operator identity, as Skylift's KubeClient takes it. */
export function kubeConfig(who: 'admin' | 'operator' = 'admin'): Kubeconfig {
  const info = stackInfo();
  return loadKubeconfig(who === 'admin' ? info.adminKubeconfig : info.operatorKubeconfig);
}

/**
 * A client-node KubeConfig for the admin or the limited operator identity: tests of the harness
 * itself use the official client, independent of Skylift's own.
 */
export function clientNodeKubeConfig(who: 'admin' | 'operator' = 'admin'): KubeConfig {
  const kc = new KubeConfig();
  const info = stackInfo();
  kc.loadFromFile(who === 'admin' ? info.adminKubeconfig : info.operatorKubeconfig);
  return kc;
}

/** Forgets every AWS resource in the emulator. */
export async function resetEmulator(): Promise<void> {
  const res = await simpleRequest(`${stackInfo().awsEndpoint}/moto-api/reset`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`moto reset failed: HTTP ${res.status}`);
}

/** Starts a fault proxy in front of the stack's emulator; stop it in afterEach/afterAll. */
export async function startFaultProxy(random?: () => number): Promise<AwsFaultProxy> {
  return AwsFaultProxy.start({
    target: stackInfo().awsEndpoint,
    ...(random !== undefined ? { random } : {}),
  });
}

/** The node started by the node project's globalSetup. Throws outside the node project. */
export function nodeInfo(): NodeInfo {
  const info = inject('node');
  if ((info as NodeInfo | undefined) === undefined) {
    throw new Error('no node cluster: run this file in the node project (vitest --project node)');
  }
  return info;
}
