// Refused AWS credentials (an unknown key, a bad signature, an expired token) are fixed outside the
// spec — the operator's IAM role, IRSA, its clock — so they are retried with backoff and shown as
// Synced=False reason=AWSCredentials saying what to check, and the object becomes Ready once AWS
// accepts the credentials again, with no change to the spec. (They used to be Terminal: nothing was
// retried until the next resync.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import {
  createDnsRecord,
  createZone,
  route53At,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
let controller: RunningDnsController;

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
});
afterAll(async () => {
  await controller.stop();
  await proxy.stop();
});

describe('refused AWS credentials', () => {
  it.each([
    { code: 'InvalidClientTokenId', status: 403, operation: undefined, calls: 'every call' },
    { code: 'ExpiredToken', status: 403, operation: undefined, calls: 'every call' },
    // Issue 27, item 18: refused only for the change batch (the listings went through) was AWSError.
    {
      code: 'InvalidClientTokenId',
      status: 403,
      operation: 'ChangeResourceRecordSets',
      calls: 'the change batch only',
    },
  ])(
    '$code is Synced=False AWSCredentials, retried, and Ready once AWS accepts them again (refused: $calls)',
    async ({ code, status, operation }) => {
      const ns = await newNamespace(
        admin,
        `creds-${code.toLowerCase()}${operation !== undefined ? '-batch' : ''}`,
      );
      const zone = `${ns}.example.com`;
      await createZone(route53At(stackInfo().awsEndpoint), zone);
      controller = await startDnsController({ namespace: ns, endpoint: proxy.endpoint, resyncPeriod: '10m' });
      const refusal = proxy.inject({
        service: 'route53',
        ...(operation !== undefined ? { operation } : {}),
        fault: {
          kind: 'error',
          status,
          code,
          message: 'The security token included in the request is invalid.',
        },
      });
      await createDnsRecord(admin, ns, 'www', {
        zoneName: zone,
        name: 'www',
        type: 'A',
        records: ['192.0.2.1'],
      });
      const refused = await waitForCondition(admin, ns, 'www', {
        type: 'Synced',
        status: 'False',
        reason: 'AWSCredentials',
      });
      const synced = refused.status?.conditions?.find((c) => c.type === 'Synced');
      expect(synced?.message).toContain(code);
      expect(synced?.message).toMatch(
        /credentials .* were refused: check its IAM role, IRSA annotation and clock/,
      );
      // Retried with backoff, not left until the resync: more refusals arrive while it waits.
      const seen = refusal.hits;
      await waitForCondition(admin, ns, 'www', { type: 'Synced', status: 'False', reason: 'AWSCredentials' });
      await expect.poll(() => refusal.hits, { timeout: 30_000 }).toBeGreaterThan(seen);

      refusal.remove();
      const ready = await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' }, 60_000);
      expect(ready.metadata.generation).toBe(1);
      await controller.stop();
    },
  );
});
