// Helpers for tests that need a MyIngress object without its controller
// running (e.g. DNSRecord aliases): the test writes the status itself.
import { installCrds } from '../../dev/installCrds.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';

/** Installs Skylift's CRDs (MyIngress among them). */
export async function ensureMyIngressCrd(client: KubeClient): Promise<void> {
  await installCrds(client);
}

/** Creates a minimal valid MyIngress and, if given, writes its load balancer into status. */
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
      spec: {
        subnets: ['subnet-0a0a0a0a', 'subnet-0b0b0b0b'],
        managementPolicy: 'ObserveOnly',
        listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } }],
      },
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
