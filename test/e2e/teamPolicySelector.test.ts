// `skylift run --team-policy-selector` (SKYLIFT_TEAM_POLICY_SELECTOR): several installations in one
// cluster, each honouring only its own TeamPolicies (docs/teams.md). Another installation's policy
// selecting the same namespace neither refuses nor serves this operator's objects; its own does.
// Once it has seen a policy it fails closed, also after a restart (docs/teams.md).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { applyTeamPolicy, deleteTeamPolicies, policySelector } from '../../dev/teamPolicies.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import {
  createDnsRecord,
  createZone,
  findRecord,
  listRecords,
  route53At,
  waitForCondition,
} from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

const group = 'e2e-policy-selector';
const otherInstall = 'e2e-policy-selector-other';
let admin: KubeClient;
const running: SkyliftProcess[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
});
afterEach(async () => {
  for (const p of running.splice(0)) await p.stop();
});
afterAll(async () => {
  await deleteTeamPolicies(admin, group);
  await deleteTeamPolicies(admin, otherInstall);
});

describe('skylift run --team-policy-selector', () => {
  it('honours only the TeamPolicies its selector matches: another installation’s policy neither refuses nor serves', async () => {
    const ns = await newNamespace(admin, 'e2e-selector');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    // Another installation's policy over this namespace would refuse the name.
    await applyTeamPolicy(admin, otherInstall, `${ns}-other`, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { names: [`allowed.${zone}`] } },
    });
    const operator = spawnSkylift(ns, stackInfo().awsEndpoint, [
      '--team-policy-selector',
      policySelector(group),
      '--log-format',
      'text',
    ]);
    running.push(operator);

    await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.10'],
    });
    await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' }, 60_000).catch(
      (err: unknown) => {
        throw new Error(`${String(err)}\noperator:\n${operator.output().slice(-3000)}`);
      },
    );
    expect(findRecord(await listRecords(r53, zoneId), `www.${zone}`, 'A')?.ResourceRecords).toEqual([
      { Value: '192.0.2.10' },
    ]);

    // Its own policy, with the same restriction, refuses a new name before any AWS change.
    await applyTeamPolicy(admin, group, `${ns}-own`, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { names: [`allowed.${zone}`] } },
    });
    await createDnsRecord(admin, ns, 'api', {
      zoneName: zone,
      name: 'api',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.11'],
    });
    const refused = await waitForCondition(
      admin,
      ns,
      'api',
      { type: 'Synced', status: 'False', reason: 'Forbidden' },
      60_000,
    );
    expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(`${ns}-own`);
    expect(findRecord(await listRecords(r53, zoneId), `api.${zone}`, 'A')).toBeUndefined();
  });
  // Issue 27, item 10 (in part): while no TeamPolicy existed — a policy deleted and applied again,
  // as GitOps or a chart reinstall does — objects were served with the operator's identity and no
  // guardrails. With --team-policy-required a namespace no policy selects is refused then too.
  it('with --team-policy-required refuses every namespace while no policy selects it, none existing', async () => {
    const required = 'e2e-policy-required';
    const ns = await newNamespace(admin, 'e2e-required');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    const operator = spawnSkylift(ns, stackInfo().awsEndpoint, [
      '--team-policy-selector',
      policySelector(required),
      '--team-policy-required=true',
    ]);
    running.push(operator);
    try {
      await createDnsRecord(admin, ns, 'gap', {
        zoneName: zone,
        name: 'gap',
        type: 'A',
        ttl: 60,
        records: ['192.0.2.20'],
      });
      const refused = await waitForCondition(
        admin,
        ns,
        'gap',
        { type: 'Synced', status: 'False', reason: 'Forbidden' },
        60_000,
      );
      expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).toBe(
        `namespace ${ns} is not selected by any TeamPolicy, and this installation serves only namespaces a TeamPolicy selects (--team-policy-required), also while none exists: ask the platform team to add ${ns} to a TeamPolicy's spec.namespaces`,
      );
      expect(findRecord(await listRecords(r53, zoneId), `gap.${zone}`, 'A')).toBeUndefined();

      // The policy applied (again): served under it.
      await applyTeamPolicy(admin, required, `${ns}-team`, { namespaces: { names: [ns] } });
      await waitForCondition(admin, ns, 'gap', { type: 'Ready', status: 'True' }, 60_000);
      expect(findRecord(await listRecords(r53, zoneId), `gap.${zone}`, 'A')?.ResourceRecords).toEqual([
        { Value: '192.0.2.20' },
      ]);
    } finally {
      await deleteTeamPolicies(admin, required);
    }
  });
  // Issue 27, item 10: failing closed by itself once a TeamPolicy has been seen, and across a
  // restart; the operator records it in ConfigMap <leader-election-id>-teams of its namespace.
  it('fails closed by itself once it has seen a TeamPolicy, also after a restart with none left', async () => {
    const seen = 'e2e-policy-seen';
    const ns = await newNamespace(admin, 'e2e-seen');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    const args = ['--team-policy-selector', policySelector(seen)];
    const first = spawnSkylift(ns, stackInfo().awsEndpoint, args);
    running.push(first);
    try {
      await applyTeamPolicy(admin, seen, `${ns}-team`, { namespaces: { names: [ns] } });
      await createDnsRecord(admin, ns, 'www', {
        zoneName: zone,
        name: 'www',
        type: 'A',
        ttl: 60,
        records: ['192.0.2.30'],
      });
      await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' }, 60_000);
      await deleteTeamPolicies(admin, seen);
      await first.stop();

      const second = spawnSkylift(ns, stackInfo().awsEndpoint, args);
      running.push(second);
      await createDnsRecord(admin, ns, 'gap', {
        zoneName: zone,
        name: 'gap',
        type: 'A',
        ttl: 60,
        records: ['192.0.2.31'],
      });
      const refused = await waitForCondition(
        admin,
        ns,
        'gap',
        { type: 'Synced', status: 'False', reason: 'Forbidden' },
        60_000,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\noperator:\n${second.output().slice(-3000)}`);
      });
      expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).toBe(
        `namespace ${ns} is not selected by any TeamPolicy, and this installation serves only namespaces a TeamPolicy selects (it has served teams since a TeamPolicy was first seen; recorded in ConfigMap ${ns}/skylift-leader-teams), also while none exists: ask the platform team to add ${ns} to a TeamPolicy's spec.namespaces`,
      );
      expect(findRecord(await listRecords(r53, zoneId), `gap.${zone}`, 'A')).toBeUndefined();
    } finally {
      await deleteTeamPolicies(admin, seen);
    }
  });
});
