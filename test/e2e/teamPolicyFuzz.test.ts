// Fuzzed TeamPolicies applied under a running `skylift run` that serves a namespace with one
// object of each kind: every policy the apiserver admits is taken in (its status is written for
// its generation), the operator never crashes or stops answering, and every object keeps a
// condition a user can act on; once a plain policy is back, a new record becomes Ready.
//
// Reproduce or widen a run: SKYLIFT_FUZZ_SEED=<seed> SKYLIFT_FUZZ_RUNS=<n>.
import { randomBytes } from 'node:crypto';
import { EC2Client } from '@aws-sdk/client-ec2';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourcePath } from '../../src/apis/meta.ts';
import { teamPolicyType, type TeamPolicy } from '../../src/apis/teampolicy.ts';
import { ensureElbSubnets } from '../../dev/awsAccount.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { createDnsRecord, createZone, route53At, waitForCondition } from '../support/dns.ts';
import { healthProblems, probeAddress } from '../support/fuzz/operatorHealth.ts';
import { admit, fuzzSettings } from '../support/fuzz/outcome.ts';
import { teamPolicyCases } from '../support/fuzz/teampolicy.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import {
  applyTeamPolicy,
  deleteTeamPolicies,
  policySelector,
  testPolicyLabel,
} from '../../dev/teamPolicies.ts';

const group = 'e2e-policy-fuzz';
let admin: KubeClient;
let ns: string;
let zoneName: string;
let proxy: AwsFaultProxy;
let operator: SkyliftProcess;
let probe: string;

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-policy-fuzz');
  const endpoint = stackInfo().awsEndpoint;
  zoneName = `pfuzz-${randomBytes(3).toString('hex')}.example`;
  await createZone(route53At(endpoint), zoneName);
  const ec2 = new EC2Client(awsClientConfig(endpoint));
  await ensureElbSubnets(ec2, 'us-east-1');
  ec2.destroy();
  proxy = await AwsFaultProxy.start({ target: endpoint });
  operator = spawnSkylift(ns, proxy.endpoint, [
    '--team-policy-selector',
    policySelector(group),
    '--route53-batch-window',
    '100ms',
    '--rds-poll-interval',
    '1s',
  ]);
  const op = operator;
  probe = await waitFor(() => probeAddress(op.output()), { timeoutMs: 30_000, description: 'probe address' });
  await waitFor(() => (op.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to start its controllers',
  });
});

afterAll(async () => {
  await operator.stop();
  await deleteTeamPolicies(admin, group);
  await proxy.stop();
});

interface Reported {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe('fuzzed TeamPolicies', () => {
  it('never crash the operator, are each taken in, and leave every object with an actionable condition', async () => {
    const { seed, runs } = fuzzSettings(24);
    // One object of each kind, in the namespace the policies select.
    await createDnsRecord(admin, ns, 'www', { zoneName, name: 'www', type: 'A', records: ['192.0.2.1'] });
    await admin.create(`/apis/aws.skylift.dev/v1alpha1/namespaces/${ns}/myingresses`, {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'web' },
      spec: {
        subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
        scheme: 'internal',
        listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
      },
    });
    await admin.create(`/apis/aws.skylift.dev/v1alpha1/namespaces/${ns}/manageddbs`, {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'ManagedDB',
      metadata: { name: 'db' },
      spec: {
        engine: 'postgres',
        instanceClass: 'db.t3.micro',
        allocatedStorage: 20,
        masterUsername: 'app',
        finalSnapshot: { enabled: false },
      },
    });
    const cases = fc.sample(teamPolicyCases(ns, zoneName), { seed, numRuns: runs });
    const problems: string[] = [];
    let admitted = 0;
    for (const [i, c] of cases.entries()) {
      const name = `${group}-${i % 3}`;
      // Create or replace (a PUT of the whole object, as `kubectl replace` does).
      await admin.delete(resourcePath(teamPolicyType, { name })).catch(() => undefined);
      const verdict = await admit(admin, teamPolicyType, '', name, c.spec, i % 2 === 0).catch(
        (err: unknown) => ({
          admitted: false as const,
          status: 0,
          reason: 'error',
          message: String(err),
        }),
      );
      if (!verdict.admitted) continue;
      admitted++;
      await admin.patch(
        resourcePath(teamPolicyType, { name }),
        { metadata: { labels: { [testPolicyLabel]: group } } },
        'merge',
      );
      // Taken in: the operator wrote the policy's status for this generation.
      try {
        await waitFor(
          async () => {
            const p = await admin.get<TeamPolicy>(resourcePath(teamPolicyType, { name }));
            return p.status?.observedGeneration === p.metadata.generation ? true : undefined;
          },
          { timeoutMs: 15_000, description: `status of ${name}` },
        );
      } catch {
        problems.push(`policy ${i} not taken in: ${JSON.stringify(c.spec)}`);
      }
      const health = await healthProblems(operator, probe);
      if (health.length > 0) {
        problems.push(`after policy ${i} (${JSON.stringify(c.spec)}): ${health.join('; ')}`);
        break;
      }
    }
    expect(admitted, 'some fuzzed policies must be admitted').toBeGreaterThan(0);
    // Every object ends with conditions that say something: never a crash-looped or silent object.
    for (const [plural, name] of [
      ['dnsrecords', 'www'],
      ['myingresses', 'web'],
      ['manageddbs', 'db'],
    ] as const) {
      const got = await admin.get<Reported>(
        `/apis/aws.skylift.dev/v1alpha1/namespaces/${ns}/${plural}/${name}`,
      );
      const synced = got.status?.conditions?.find((c) => c.type === 'Synced');
      if (synced === undefined) problems.push(`${plural}/${name} has no Synced condition`);
      else if (synced.status === 'False' && (synced.message ?? '').trim() === '')
        problems.push(`${plural}/${name} Synced=False without a message`);
    }
    expect(problems).toEqual([]);
    // A plain policy: the namespace is served again.
    await deleteTeamPolicies(admin, group);
    await applyTeamPolicy(admin, group, `${group}-plain`, { namespaces: { names: [ns] } });
    await createDnsRecord(admin, ns, 'after', { zoneName, name: 'after', type: 'A', records: ['192.0.2.2'] });
    await waitForCondition(admin, ns, 'after', { type: 'Ready', status: 'True' }, 30_000);
    expect(await healthProblems(operator, probe)).toEqual([]);
  });
});
