// The sample application `skylift dev` applies (examples/app.yaml), applied
// the way `kubectl apply --server-side` would.
import { deploymentType, endpointSliceType, serviceType } from '../src/apis/core.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { kinds } from '../src/kinds/registry.ts';
import { KubeApiError, type KubeClient } from '../src/runtime/kube/client.ts';
import { apiVersionOf, resourcePath, type KubeObject, type ResourceType } from '../src/apis/meta.ts';
import { repoRoot } from './paths.ts';
import { parseYamlDocuments } from './yamlDocuments.ts';

/** The sample application file. */
export const sampleFile = join(repoRoot, 'examples', 'app.yaml');

/** The sample application's Pods (a Deployment of the local sample app image), for a cluster with a node. */
export const sampleWorkloadFile = join(repoRoot, 'examples', 'web.yaml');

/** The Skylift kinds whose readiness `skylift dev` follows. */
export const skyliftTypes: readonly ResourceType[] = kinds.map((k) => k.type);

const knownTypes: readonly ResourceType[] = [serviceType, endpointSliceType, deploymentType, ...skyliftTypes];

/** A Service as far as the stand-in EndpointSlice needs it. */
interface ServiceObject extends KubeObject {
  spec?: { ports?: { name?: string; port: number; targetPort?: number | string }[] };
}

/** Reads a multi-document YAML file of Kubernetes objects; throws on a document without kind or name. */
export async function loadSamples(file: string = sampleFile): Promise<KubeObject[]> {
  const docs = parseYamlDocuments(await readFile(file, 'utf8'), file);
  return docs
    .filter((d): d is KubeObject => typeof d === 'object' && d !== null)
    .map((d) => {
      if (d.kind === undefined || typeof d.metadata.name !== 'string')
        throw new Error(`${file}: a document has no kind or metadata.name`);
      return d;
    });
}

/** The resource type of an object by apiVersion and kind, among those the samples use. Pure. */
export function typeOf(obj: KubeObject): ResourceType {
  const t = knownTypes.find((k) => k.kind === obj.kind && apiVersionOf(k) === obj.apiVersion);
  if (t === undefined)
    throw new Error(`samples: unsupported kind ${String(obj.apiVersion)}/${String(obj.kind)}`);
  return t;
}

/**
 * Creates `namespace` if missing and server-side-applies each object into it
 * (field manager `skylift-dev`, forcing ownership of its fields), so applying
 * twice is harmless.
 */
export async function applySamples(
  client: KubeClient,
  namespace: string,
  objects: readonly KubeObject[],
): Promise<void> {
  try {
    await client.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
  for (const obj of objects) {
    const type = typeOf(obj);
    await client.patch(
      resourcePath(type, { namespace, name: obj.metadata.name }),
      { ...obj, metadata: { ...obj.metadata, namespace } },
      'apply',
      { fieldManager: 'skylift-dev', force: true },
    );
  }
}

/**
 * EndpointSlices standing in for running Pods behind each sample Service:
 * the local control plane has no kubelet, so no Pod ever runs and nothing
 * else would give the load balancer a target. One ready address per
 * Service (10.77.1.10 onwards, inside the dev VPC), on the Service's
 * numeric targetPort. Pure.
 */
export function standInEndpointSlices(objects: readonly KubeObject[], namespace: string): KubeObject[] {
  return objects
    .filter((o): o is ServiceObject => o.kind === 'Service' && o.apiVersion === 'v1')
    .map((svc, i) => {
      const ports = (svc.spec?.ports ?? []).map((p) => ({
        name: p.name ?? '',
        port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
        protocol: 'TCP',
      }));
      return {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${svc.metadata.name}-skylift-dev`,
          namespace,
          // Stands in for the EndpointSlice controller (no kubelet, no Pods here): labelled as its.
          labels: {
            'kubernetes.io/service-name': svc.metadata.name,
            'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
          },
        },
        addressType: 'IPv4',
        ports,
        endpoints: [{ addresses: [`10.77.1.${10 + i}`], conditions: { ready: true } }],
      } as KubeObject;
    });
}
