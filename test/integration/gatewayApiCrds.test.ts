// The Gateway API's CRDs as `make dev` and the tests install them (dev/installCrds.ts), from the
// module hack/install-gateway-api.sh fetched: the real ones, since the apiserver enforces their own
// schemas, CEL rules and defaults.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gatewayApiBundleVersionAnnotation,
  installedGatewayApiVersion,
  installGatewayApiCrds,
} from '../../dev/installCrds.ts';
import { pinnedVersions } from '../../dev/paths.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';

const group = 'gateway.networking.k8s.io';
const v1 = `/apis/${group}/v1`;
const version = pinnedVersions().GATEWAY_API_VERSION;

let client: KubeClient;
let ns: string;
let installed: string[];
const className = `skylift-test-${Date.now().toString(36)}`;

beforeAll(async () => {
  client = kubeClient();
  installed = await installGatewayApiCrds(client);
  ns = await newNamespace(client, 'gwapi');
});

afterAll(async () => {
  await client.delete(`${v1}/gatewayclasses/${className}`).catch(() => undefined);
});

/** Creates `obj` at `path`; the apiserver's message when it refuses it as invalid (422), else undefined. */
async function refusal(path: string, obj: Record<string, unknown>): Promise<string | undefined> {
  try {
    await client.create(path, obj);
    return undefined;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 422) return err.message;
    throw err;
  }
}

const gateway = (name: string, listeners: Record<string, unknown>[]): Record<string, unknown> => ({
  apiVersion: `${group}/v1`,
  kind: 'Gateway',
  metadata: { name },
  spec: { gatewayClassName: className, listeners },
});
const http = { name: 'http', port: 80, protocol: 'HTTP' };
const cert = { certificateRefs: [{ name: 'tls' }] };

describe('the Gateway API CRDs', () => {
  it(`are the standard channel of ${version}, Established, and serve the kinds Skylift will`, async () => {
    expect(installed).toEqual(
      expect.arrayContaining(
        ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes', 'referencegrants'].map(
          (p) => `${p}.${group}`,
        ),
      ),
    );
    for (const name of installed) {
      const crd = await client.get<KubeObject>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      );
      expect(crd.metadata.annotations, name).toMatchObject({
        [gatewayApiBundleVersionAnnotation]: version,
        'gateway.networking.k8s.io/channel': 'standard',
      });
    }
    const served = await client.get<{ resources: { name: string; kind: string }[] }>(v1);
    expect(served.resources.map((r) => r.kind)).toEqual(
      expect.arrayContaining(['GatewayClass', 'Gateway', 'HTTPRoute', 'GRPCRoute', 'ReferenceGrant']),
    );
    expect(await installedGatewayApiVersion(client)).toBe(version);
  });

  it('can be installed again (idempotent)', async () => {
    expect(await installGatewayApiCrds(client)).toEqual(installed);
  });

  it('accept a GatewayClass and give it the CRD’s default status; its controllerName is immutable', async () => {
    const created = await client.create<{
      status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
    }>(`${v1}/gatewayclasses`, {
      apiVersion: `${group}/v1`,
      kind: 'GatewayClass',
      metadata: { name: className },
      spec: { controllerName: 'skylift.dev/gateway-controller' },
    });
    expect(created.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Accepted',
        status: 'Unknown',
        reason: 'Pending',
        message: 'Waiting for controller',
      }),
    ]);
    await expect(
      client.patch(
        `${v1}/gatewayclasses/${className}`,
        { spec: { controllerName: 'example.com/other' } },
        'merge',
      ),
    ).rejects.toThrow(/spec\.controllerName: Invalid value: "example\.com\/other": Value is immutable/);
  });

  it('accept a Gateway with HTTP and HTTPS listeners', async () => {
    expect(
      await refusal(
        `${v1}/namespaces/${ns}/gateways`,
        gateway('web', [http, { name: 'https', port: 443, protocol: 'HTTPS', tls: cert }]),
      ),
    ).toBeUndefined();
  });

  it.each([
    {
      reason: 'two listeners of one name',
      listeners: [http, { ...http, port: 8080 }],
      message:
        /spec\.listeners\[1\]: Duplicate value: \{"name":"http"\}, spec\.listeners: Invalid value: Listener name must be unique within the Gateway/,
    },
    {
      reason: 'tls on an HTTP listener',
      listeners: [{ ...http, tls: cert }],
      message:
        /spec\.listeners: Invalid value: tls must not be specified for protocols \['HTTP', 'TCP', 'UDP'\]/,
    },
    {
      reason: 'an HTTPS listener passing TLS through',
      listeners: [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { mode: 'Passthrough' } }],
      message: /tls mode must be Terminate for protocol HTTPS/,
    },
    {
      reason: 'the same port, protocol and hostname twice',
      listeners: [http, { ...http, name: 'http-again' }],
      message: /Combination of port, protocol and hostname must be unique for each listener/,
    },
    {
      reason: 'no listener',
      listeners: [],
      message: /spec\.listeners: Invalid value: 0: spec\.listeners in body should have at least 1 items/,
    },
  ])('refuse a Gateway with $reason, in the CRD’s own words', async ({ listeners, message }) => {
    const got = await refusal(`${v1}/namespaces/${ns}/gateways`, gateway('bad', listeners));
    expect(got).toMatch(message);
  });

  it('refuse an HTTPRoute whose path prefix is not absolute', async () => {
    const route = (value: string): Record<string, unknown> => ({
      apiVersion: `${group}/v1`,
      kind: 'HTTPRoute',
      metadata: { name: value === '/' ? 'root' : 'relative' },
      spec: {
        parentRefs: [{ name: 'web' }],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value } }], backendRefs: [{ name: 'web', port: 80 }] },
        ],
      },
    });
    expect(await refusal(`${v1}/namespaces/${ns}/httproutes`, route('/'))).toBeUndefined();
    expect(await refusal(`${v1}/namespaces/${ns}/httproutes`, route('shop'))).toMatch(
      /value must be an absolute path and start with '\/' when type one of \['Exact', 'PathPrefix'\]/,
    );
  });
});
