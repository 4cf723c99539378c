import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeApiError, type KubeClient } from '../src/runtime/kube/client.ts';
import type { KubeObject } from '../src/apis/meta.ts';
import type { CrdManifest } from '../src/apis/crd.ts';
import { allCrds } from '../src/kinds/registry.ts';
import { targetHealthGatePolicy } from '../src/kinds/myingress/readinessGate.ts';
import { pinnedVersions, toolPaths } from './paths.ts';
import { waitFor } from './wait.ts';
import { parseYamlDocuments } from './yamlDocuments.ts';

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
  await applyCrds(client, crds, timeoutMs);
}

/** A CustomResourceDefinition as far as installing one needs: its name. */
type AnyCrd = KubeObject & { readonly kind: string };

/** Server-side applies `crds` (field manager `skylift`, forced), then waits until each is Established. */
async function applyCrds(client: KubeClient, crds: readonly AnyCrd[], timeoutMs: number): Promise<void> {
  const started = Date.now();
  // All at once: the apiserver compiles each schema (and its CEL rules) in its own request.
  await Promise.all(
    crds.map((crd) =>
      client.patch(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        crd,
        'apply',
        {
          fieldManager: 'skylift',
          force: true,
        },
      ),
    ),
  );
  for (const crd of crds) {
    await waitFor(
      async () => {
        const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        );
        return (got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')
          ? true
          : undefined;
      },
      {
        timeoutMs: Math.max(0, started + timeoutMs - Date.now()),
        description: `CRD ${crd.metadata.name} Established`,
      },
    );
  }
}

/** Where hack/install-gateway-api.sh puts the Gateway API's standard channel (`make gateway-api-crds`). */
export function gatewayApiCrdDir(): string {
  return join(toolPaths().gatewayApiDir, 'crds');
}

/**
 * The Gateway API's standard-channel CRDs in `dir` (default {@link gatewayApiCrdDir}), as
 * hack/install-gateway-api.sh copied them from the module sigs.k8s.io/gateway-api, sorted by
 * file name. Only the CustomResourceDefinitions: upstream's safe-upgrades
 * ValidatingAdmissionPolicy in the same directory is left out (a cluster-wide rule on every CRD
 * write of the group, the cluster owner's choice). Throws, saying what to run, when the directory
 * is missing, and when a CRD is not of the pinned release (its `bundle-version` annotation).
 */
export async function gatewayApiCrds(dir: string = gatewayApiCrdDir()): Promise<AnyCrd[]> {
  if (!existsSync(dir))
    throw new Error(
      `no Gateway API CRDs in ${dir}: run make gateway-api-crds (hack/install-gateway-api.sh crds)`,
    );
  const version = pinnedVersions().GATEWAY_API_VERSION;
  const crds: AnyCrd[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    const path = join(dir, file);
    for (const doc of parseYamlDocuments(await readFile(path, 'utf8'), path) as AnyCrd[]) {
      if (doc.kind !== 'CustomResourceDefinition') continue;
      const bundle = doc.metadata.annotations?.[gatewayApiBundleVersionAnnotation];
      if (bundle !== version)
        throw new Error(
          `${path}: bundle-version ${String(bundle)}, not ${version} (run make gateway-api-crds)`,
        );
      crds.push(doc);
    }
  }
  if (crds.length === 0) throw new Error(`no CustomResourceDefinition in ${dir}`);
  return crds;
}

/** The annotation by which a Gateway API CRD names its release (the conformance suite reads it too). */
export const gatewayApiBundleVersionAnnotation = 'gateway.networking.k8s.io/bundle-version';

/**
 * The release of the Gateway API CRDs a cluster has: the bundle-version annotation of its
 * GatewayClass CRD, `''` when that CRD carries none, `undefined` when there is no such CRD. One
 * read, with the client's deadline.
 */
export async function installedGatewayApiVersion(client: KubeClient): Promise<string | undefined> {
  try {
    const crd = await client.get<KubeObject>(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gatewayclasses.gateway.networking.k8s.io',
    );
    return crd.metadata.annotations?.[gatewayApiBundleVersionAnnotation] ?? '';
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
    throw err;
  }
}

/**
 * Installs or updates the Gateway API's standard-channel CRDs ({@link gatewayApiCrds} of `dir`) by
 * server-side apply, field manager `skylift`, and waits until each is Established, all within
 * `timeoutMs`. Idempotent. Returns their names. Used by `skylift dev` and the tests; in a cluster
 * the chart installs them when `gatewayAPI.installCRDs` is set.
 */
export async function installGatewayApiCrds(
  client: KubeClient,
  dir: string = gatewayApiCrdDir(),
  timeoutMs = 60_000,
): Promise<string[]> {
  const crds = await gatewayApiCrds(dir);
  await applyCrds(client, crds, timeoutMs);
  return crds.map((c) => c.metadata.name);
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
