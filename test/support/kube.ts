// Kubernetes helpers for integration tests, over the runtime's own client.
import { randomBytes } from 'node:crypto';
import { KubeApiError, KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath, type KubeObject, type ResourceType } from '../../src/apis/meta.ts';
import { waitFor } from '../../dev/wait.ts';
import { kubeConfig } from './stack.ts';

/** A KubeClient for the stack's admin (default) or limited operator identity. */
export function kubeClient(who: 'admin' | 'operator' = 'admin'): KubeClient {
  return new KubeClient(kubeConfig(who));
}

/** Creates a namespace with a random suffix and returns its name. */
export async function newNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.create('/api/v1/namespaces', { metadata: { name } });
  return name;
}

/** Installs a CRD if missing and waits until it is Established and its objects can be listed. */
export async function ensureCrd(
  client: KubeClient,
  crd: { metadata: { name: string } },
  type: ResourceType,
): Promise<void> {
  try {
    await client.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
  await waitFor(
    async () => {
      const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      );
      if (!(got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True'))
        return undefined;
      await client.get(resourcePath(type, {}));
      return true;
    },
    { timeoutMs: 30_000, description: `CRD ${crd.metadata.name} established` },
  );
}

/** Reads an object; undefined when it does not exist. */
export async function readObject<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await client.get<T>(resourcePath(type, { namespace, name }));
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
    throw err;
  }
}

/** Events (events.k8s.io/v1) about an object, by reason. */
export async function eventsFor(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<{ reason: string; note: string; type: string; series?: { count: number } }[]> {
  const list = await client.get<{
    items: {
      reason: string;
      note: string;
      type: string;
      regarding: { name: string };
      series?: { count: number };
    }[];
  }>(`/apis/events.k8s.io/v1/namespaces/${namespace}/events`);
  return list.items.filter((e) => e.regarding.name === name);
}
