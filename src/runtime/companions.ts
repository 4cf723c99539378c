// The engine's writes to companion objects (e.g. a ManagedDB's connection
// Secret): created and updated by server-side apply, labelled as Skylift's
// and owned by their CR; disowned when the CR goes but AWS keeps the resource.
import type { ManagedObject } from '../apis/managed.ts';
import { apiVersionOf, resourcePath, type KubeObject, type ResourceType } from '../apis/meta.ts';
import type { CompanionWrite } from './adapter.ts';
import { KubeApiError, type KubeClient } from './kube/client.ts';

/** The label every companion object carries. */
export const managedByLabel = { 'app.kubernetes.io/managed-by': 'skylift' } as const;

/**
 * Carries out one companion write for `owner` (a CR of type `ownerType`), in
 * the owner's namespace. Idempotent; throws Kubernetes errors (a disown of an
 * object that is gone, or has no owner references to drop, is done).
 */
export async function writeCompanion(
  client: KubeClient,
  ownerType: ResourceType,
  owner: ManagedObject,
  w: CompanionWrite,
): Promise<void> {
  const namespace = owner.metadata.namespace;
  if (w.op === 'apply') {
    const name = w.object.metadata.name;
    await client.patch(
      resourcePath(w.type, { namespace, name }),
      {
        ...w.object,
        metadata: {
          ...w.object.metadata,
          namespace,
          labels: managedByLabel,
          // Removed with the CR by Kubernetes' garbage collector.
          ownerReferences: [
            {
              apiVersion: apiVersionOf(ownerType),
              kind: ownerType.kind,
              name: owner.metadata.name,
              uid: owner.metadata.uid ?? '',
              controller: true,
            },
          ],
        },
      },
      'apply',
      { fieldManager: 'skylift', force: true },
    );
    return;
  }
  const path = resourcePath(w.type, { namespace, name: w.name });
  try {
    const obj = await client.get<KubeObject>(path);
    const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.metadata.uid);
    await client.patch(path, [{ op: 'replace', path: '/metadata/ownerReferences', value: refs }], 'json');
  } catch (err) {
    if (err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 422)) return;
    throw err;
  }
}
