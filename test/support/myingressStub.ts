// Until the MyIngress controller exists, DNSRecord alias tests use a stand-in
// MyIngress CRD whose status the test writes, as the issue allows.
import { myIngressType } from '../../src/apis/myingress.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/runtime/kube/resource.ts';
import { ensureCrd } from './kube.ts';

export const myIngressStubCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'myingresses.aws.skylift.dev' },
  spec: {
    group: 'aws.skylift.dev',
    scope: 'Namespaced',
    names: { plural: 'myingresses', singular: 'myingress', kind: 'MyIngress', shortNames: ['ming'] },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

/** Installs the stand-in MyIngress CRD unless a MyIngress CRD is already there. */
export async function ensureMyIngressCrd(client: KubeClient): Promise<void> {
  await ensureCrd(client, myIngressStubCrd, myIngressType);
}

/** Creates a MyIngress and, if given, writes its load balancer into status. */
export async function putMyIngress(
  client: KubeClient,
  ns: string,
  name: string,
  status?: { dnsName: string; canonicalHostedZoneId: string },
): Promise<void> {
  try {
    await client.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name },
      spec: {},
    });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 409) throw err;
  }
  if (status !== undefined) {
    await client.patch(
      resourcePath(myIngressType, { namespace: ns, name, subresource: 'status' }),
      { status },
      'merge',
    );
  }
}
