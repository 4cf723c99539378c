// What Argo CD's install manifests put into a cluster, as far as its application
// controller and repo server need it: the CRDs, the namespace, the settings
// ConfigMap and Secret, and the default AppProject (which upstream's API server
// would create; it is not run here).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '../src/apis/meta.ts';
import { KubeApiError, type KubeClient } from '../src/runtime/kube/client.ts';
import { waitFor } from './wait.ts';
import { parseYamlDocuments } from './yamlDocuments.ts';

/** The namespace Argo CD runs in and keeps its settings and Applications in. */
export const argoCdNamespace = 'argocd';

/** The CRD files hack/install-argocd.sh copies from the argo-cd module into `<argocdDir>/crds/`. */
export const argoCdCrdFiles = ['application-crd.yaml', 'appproject-crd.yaml'] as const;

/** Argo CD finds its ConfigMaps and Secrets by this label. */
const partOfArgoCd = { 'app.kubernetes.io/part-of': 'argocd' };

const fieldManager = 'skylift-dev';

/** Options for {@link installArgoCd}. */
export interface ArgoCdInstallOptions {
  /** Directory holding {@link argoCdCrdFiles}. */
  readonly crdDir: string;
  readonly namespace?: string;
  /** The cluster Applications deploy to; see {@link ArgoCdCluster}. */
  readonly cluster: ArgoCdCluster;
  readonly timeoutMs?: number;
}

/**
 * A cluster Argo CD deploys to, registered as `argocd cluster add` does: a Secret labelled
 * `argocd.argoproj.io/secret-type: cluster`. Argo CD's built-in destination
 * `https://kubernetes.default.svc` reads the in-cluster service account, which a controller
 * running as a host process does not have, so Applications name this one instead.
 */
export interface ArgoCdCluster {
  /** What an Application's `spec.destination.name` says. */
  readonly name: string;
  /** The apiserver URL, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  readonly bearerToken: string;
  /** The CA the apiserver's certificate is checked against, PEM. */
  readonly caPem: string;
}

/** A CRD as far as installing it needs. */
interface CrdObject extends KubeObject {
  spec: { group: string; names: { plural: string }; versions: { name: string }[] };
}

/**
 * Installs by server-side apply (field manager `skylift-dev`, forced): Argo CD's
 * Application and AppProject CRDs from `crdDir` (waiting until each is
 * Established and its objects can be listed), the namespace, `argocd-cm` with
 * no keys (Argo CD's defaults; keys merged in later, such as Skylift's health
 * checks, stay: they are not this field manager's), an empty `argocd-secret`,
 * the cluster Secret of `cluster`, and the AppProject `default` that allows any
 * repository, destination and kind. Idempotent. Throws on the first write the
 * apiserver refuses, or when a CRD is not served in time.
 */
export async function installArgoCd(client: KubeClient, opts: ArgoCdInstallOptions): Promise<void> {
  const namespace = opts.namespace ?? argoCdNamespace;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  for (const file of argoCdCrdFiles) {
    const path = join(opts.crdDir, file);
    const [crd] = parseYamlDocuments(await readFile(path, 'utf8'), path) as CrdObject[];
    if (crd?.kind !== 'CustomResourceDefinition') throw new Error(`${path}: not a CustomResourceDefinition`);
    await apply(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, crd);
    const version = crd.spec.versions[0]?.name ?? 'v1alpha1';
    await waitFor(
      async () => {
        const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        );
        if (!(got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True'))
          return undefined;
        await client.get(`/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`, { limit: 1 });
        return true;
      },
      { timeoutMs, description: `CRD ${crd.metadata.name} established` },
    );
  }
  try {
    await client.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
  await apply(client, `/api/v1/namespaces/${namespace}/configmaps/argocd-cm`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'argocd-cm',
      namespace,
      labels: { ...partOfArgoCd, 'app.kubernetes.io/name': 'argocd-cm' },
    },
    data: {},
  });
  await apply(client, `/api/v1/namespaces/${namespace}/secrets/argocd-secret`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'argocd-secret',
      namespace,
      labels: { ...partOfArgoCd, 'app.kubernetes.io/name': 'argocd-secret' },
    },
    type: 'Opaque',
  });
  const { cluster } = opts;
  const clusterSecret = `cluster-${cluster.name}`;
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  await apply(client, `/api/v1/namespaces/${namespace}/secrets/${clusterSecret}`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: clusterSecret,
      namespace,
      labels: { ...partOfArgoCd, 'argocd.argoproj.io/secret-type': 'cluster' },
    },
    type: 'Opaque',
    data: {
      name: b64(cluster.name),
      server: b64(cluster.server),
      config: b64(
        JSON.stringify({
          bearerToken: cluster.bearerToken,
          tlsClientConfig: { insecure: false, caData: b64(cluster.caPem) },
        }),
      ),
    },
  });
  await apply(client, `/apis/argoproj.io/v1alpha1/namespaces/${namespace}/appprojects/default`, {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AppProject',
    metadata: { name: 'default', namespace },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: '*', namespace: '*' }],
      clusterResourceWhitelist: [{ group: '*', kind: '*' }],
    },
  });
}

async function apply(client: KubeClient, path: string, obj: object): Promise<void> {
  await client.patch(path, obj, 'apply', { fieldManager, force: true });
}
