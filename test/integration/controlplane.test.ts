// Proves the Kubernetes side of the harness is real: a CRD with CEL rules
// installed into the real kube-apiserver rejects bad objects at admission,
// RBAC is enforced for the limited identity, and kube-controller-manager
// garbage-collects and deletes namespaces.
import {
  ApiException,
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  VersionApi,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { pinnedVersions } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { clientNodeKubeConfig, stackInfo } from '../support/stack.ts';

const group = 'smoke.skylift.dev';

const widgetCrd: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size', 'zone'],
                properties: {
                  size: { type: 'integer', minimum: 1 },
                  max: { type: 'integer' },
                  zone: {
                    type: 'string',
                    x_kubernetes_validations: [{ rule: 'self == oldSelf', message: 'zone is immutable' }],
                  },
                },
                x_kubernetes_validations: [
                  { rule: '!has(self.max) || self.size <= self.max', message: 'size must not exceed max' },
                ],
              },
            },
          },
        },
      },
    ],
  },
};

function apiError(err: unknown): { code: number; body: string } {
  if (err instanceof ApiException) return { code: err.code, body: String(err.body) };
  throw err;
}

describe('local control plane', () => {
  it('serves the pinned Kubernetes version', async () => {
    const version = await clientNodeKubeConfig().makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toBe(pinnedVersions().KUBE_VERSION);
  });

  it('enforces CEL validation rules of an installed CRD at admission', async () => {
    const kc = clientNodeKubeConfig();
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({ body: widgetCrd });
    await waitFor(
      async () => {
        const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, description: 'CRD Established' },
    );
    const objects = kc.makeApiClient(CustomObjectsApi);
    const widget = (name: string, spec: Record<string, unknown>) => ({
      group,
      version: 'v1',
      namespace: 'default',
      plural: 'widgets',
      body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec },
    });
    // The discovery cache of a fresh CRD can lag Established by a moment.
    await waitFor(
      async () =>
        (await objects.createNamespacedCustomObject(
          widget('good', { size: 2, max: 3, zone: 'a' }),
        )) as object,
      {
        timeoutMs: 30_000,
        description: 'first Widget accepted',
      },
    );

    const tooBig = await objects
      .createNamespacedCustomObject(widget('bad', { size: 5, max: 3, zone: 'a' }))
      .then(() => undefined, apiError);
    expect(tooBig?.code).toBe(422);
    expect(tooBig?.body).toContain('size must not exceed max');

    const moved = await objects
      .patchNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: 'default',
        plural: 'widgets',
        name: 'good',
        body: [{ op: 'replace', path: '/spec/zone', value: 'b' }],
      })
      .then(() => undefined, apiError);
    expect(moved?.code).toBe(422);
    expect(moved?.body).toContain('zone is immutable');

    // kubectl with the written kubeconfig sees the same rule.
    const manifest = JSON.stringify(widget('bad2', { size: 9, max: 1, zone: 'a' }).body);
    const result = await kubectl(stackInfo().adminKubeconfig, ['create', '-f', '-'], manifest);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('size must not exceed max');
  });

  it('limits the operator identity to what RBAC grants it', async () => {
    const info = stackInfo();
    const limited = clientNodeKubeConfig('operator').makeApiClient(CoreV1Api);
    const denied = await limited
      .listNamespacedConfigMap({ namespace: 'default' })
      .then(() => undefined, apiError);
    expect(denied?.code).toBe(403);
    expect(denied?.body).toContain(info.operatorUser);

    const rbac = clientNodeKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: {
        metadata: { name: 'smoke-read-configmaps' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'smoke-read-configmaps' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'smoke-read-configmaps' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: info.operatorGroup }],
      },
    });
    const list = await waitFor(
      () => limited.listNamespacedConfigMap({ namespace: 'default' }).catch(() => undefined),
      {
        timeoutMs: 15_000,
        description: 'RoleBinding to take effect',
      },
    );
    expect(Array.isArray(list.items)).toBe(true);
    const stillDenied = await limited
      .listNamespacedSecret({ namespace: 'default' })
      .then(() => undefined, apiError);
    expect(stillDenied?.code).toBe(403);
  });

  it('runs kube-controller-manager: owner-reference garbage collection and namespace deletion', async () => {
    const core = clientNodeKubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'smoke-gc' } } });
    const owner = await core.createNamespacedConfigMap({
      namespace: 'smoke-gc',
      body: { metadata: { name: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace: 'smoke-gc',
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace: 'smoke-gc', name: 'owner' });
    await waitFor(
      () =>
        core.readNamespacedConfigMap({ namespace: 'smoke-gc', name: 'dependent' }).then(
          () => undefined,
          (e: unknown) => (apiError(e).code === 404 ? true : undefined),
        ),
      { timeoutMs: 60_000, description: 'garbage collector to delete the dependent ConfigMap' },
    );

    await core.deleteNamespace({ name: 'smoke-gc' });
    await waitFor(
      () =>
        core.readNamespace({ name: 'smoke-gc' }).then(
          () => undefined,
          (e: unknown) => (apiError(e).code === 404 ? true : undefined),
        ),
      { timeoutMs: 60_000, description: 'namespace controller to finish deleting smoke-gc' },
    );
  });
});
