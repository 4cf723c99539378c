// The bench's teams groups (issue 28): which namespaces, TeamPolicies, accounts and objects each
// scenario makes, and what its report says about them. Everything pure; the scenarios themselves
// run with `make bench BENCH_FLAGS='--only teams'`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartMemoryOf, objectsWithin, quantityBytes } from '../../bench/lib/chartMemory.ts';
import { accountCallsDelta, awsCallsByAccount } from '../../bench/lib/promText.ts';
import { quietResult } from '../../bench/lib/quiet.ts';
import { SessionAccounts, assumedSession } from '../../bench/lib/sessionAccounts.ts';
import { trackerId } from '../../bench/lib/readiness.ts';
import { policiesNotServing, teamsOperatorFlags } from '../../bench/lib/teamsSetup.ts';
import { renderTable, type BenchReport, type PhaseResult, type ScenarioResult } from '../../bench/report.ts';
import {
  benchPolicyLabel,
  benchZoneNames,
  bigTxtValueChars,
  bigTxtValues,
  scenarioGroups,
  selectScenarios,
  teamsPlan,
  type Scenario,
  type TeamsPlan,
} from '../../bench/scenarios.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import type { TeamPolicy } from '../../src/apis/teampolicy.ts';
import { policySelections } from '../../src/tenancy/selection.ts';
import { repoRoot } from '../../dev/paths.ts';

const MiB = 1024 * 1024;

function one(only: string, size: number, namespaces?: number): Scenario {
  const [s] = selectScenarios([only], [size], namespaces);
  if (s === undefined) throw new Error(`no scenario ${only}`);
  return s;
}

interface DnsSpec {
  zoneName: string;
  name: string;
  type: string;
  records: string[];
}
const dnsSpec = (o: KubeObject): DnsSpec => (o as unknown as { spec: DnsSpec }).spec;

/** The plan's policies as the operator would see them. */
function policyObjects(plan: TeamsPlan): TeamPolicy[] {
  return plan.policies.map((p) => ({
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'TeamPolicy',
    metadata: { name: p.name },
    spec: p.spec,
  }));
}

/** Which namespaces each policy selects, judged by the operator's own selection code. */
function selected(plan: TeamsPlan): Map<string, { namespaces: string[]; overlaps: Map<string, string[]> }> {
  return policySelections(
    policyObjects(plan),
    plan.namespaces.map((n) => ({ name: n.name, labels: n.labels })),
  );
}

/** Objects per namespace. */
function perNamespace(objects: readonly KubeObject[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of objects)
    out.set(o.metadata.namespace ?? '', (out.get(o.metadata.namespace ?? '') ?? 0) + 1);
  return out;
}

describe('teams scenario selection', () => {
  const teamsGroups = [
    'dns-namespaces',
    'dns-teams',
    'dns-teams-2accounts',
    'dns-teams-flood',
    'dns-teams-bigtxt',
    'myingress-teams',
    'manageddb-teams',
    'teams-memory',
  ];

  it('runs dns-teams, its flood and big-TXT cases in a full run, the other teams groups when named, all with "teams"', () => {
    const inFull = ['dns-teams', 'dns-teams-flood', 'dns-teams-bigtxt'];
    const full = selectScenarios([], undefined).map((s) => s.group.name);
    expect(full.filter((g) => teamsGroups.includes(g))).toEqual(inFull);
    expect(scenarioGroups.filter((g) => g.optIn === true).map((g) => g.name)).toEqual(
      teamsGroups.filter((g) => !inFull.includes(g)),
    );
    expect(selectScenarios(['teams'], undefined).map((s) => s.id)).toEqual([
      'dns-namespaces-1000',
      'dns-teams-1000',
      'dns-teams-2accounts-1000',
      'dns-teams-flood-5000',
      'dns-teams-bigtxt-150',
      'myingress-teams-100',
      'manageddb-teams-100',
      'teams-memory-50',
      'teams-memory-500',
    ]);
    expect(selectScenarios(['dns-teams'], [1000]).map((s) => s.id)).toEqual(['dns-teams-1000']);
    expect(selectScenarios(['dns-teams-2accounts-40'], undefined).map((s) => s.id)).toEqual([
      'dns-teams-2accounts-40',
    ]);
  });

  it('--namespaces sets the namespace count of the spread groups and names it in the id; the others ignore it', () => {
    expect(
      selectScenarios(['dns-namespaces', 'dns-teams', 'dns-teams-flood', 'teams-memory', 'dns'], [40], 4).map(
        (s) => [s.id, s.namespaces],
      ),
    ).toEqual([
      ['dns-namespaces-40-ns4', 4],
      ['dns-teams-40-ns4', 4],
      ['dns-teams-flood-40', undefined],
      ['teams-memory-40', undefined],
      ['dns-40', undefined],
    ]);
  });
});

describe('teamsPlan', () => {
  it('dns-teams at 1000: 50 namespaces × 20 A records in one zone of one team account, one policy selecting all 50 by a label', () => {
    const plan = teamsPlan(one('dns-teams', 1000), 'b-x');
    expect(plan.namespaces).toHaveLength(50);
    expect(plan.measured).toHaveLength(1000);
    expect(plan.quiet).toBeUndefined();
    expect([...perNamespace(plan.measured).values()].every((n) => n === 20)).toBe(true);
    expect(new Set(plan.measured.map((o) => dnsSpec(o).name)).size).toBe(1000);
    expect(plan.accounts).toEqual([
      {
        id: '111111111111',
        roleArn: 'arn:aws:iam::111111111111:role/skylift-bench',
        zoneNames: ['team0.bench.skylift.test'],
        policies: ['b-x-p0'],
        namespaces: plan.namespaces.map((n) => n.name),
        objects: 1000,
      },
    ]);
    expect(plan.measured.every((o) => dnsSpec(o).zoneName === 'team0.bench.skylift.test')).toBe(true);
    expect(plan.policies).toHaveLength(1);
    expect(plan.policies[0]?.spec).toEqual({
      namespaces: { selector: { matchLabels: { [benchPolicyLabel]: 'b-x-p0' } } },
      aws: {
        roleArn: 'arn:aws:iam::111111111111:role/skylift-bench',
        externalId: 'skylift-bench-111111111111',
      },
    });
    const sel = selected(plan).get('b-x-p0');
    expect(sel?.namespaces).toEqual(plan.namespaces.map((n) => n.name).sort());
    expect(sel?.overlaps.size).toBe(0);
  });

  it('dns-teams-2accounts at 1000: 10 policies of 5 namespaces, 5 per account sharing its role, 500 records in each account’s zone', () => {
    const plan = teamsPlan(one('dns-teams-2accounts', 1000), 'b-y');
    expect(plan.namespaces).toHaveLength(50);
    expect(plan.policies).toHaveLength(10);
    expect(
      plan.accounts.map((a) => [a.id, a.policies.length, a.namespaces.length, a.objects, a.zoneNames]),
    ).toEqual([
      ['111111111111', 5, 25, 500, ['team0.bench.skylift.test']],
      ['222222222222', 5, 25, 500, ['team1.bench.skylift.test']],
    ]);
    const sel = selected(plan);
    for (const p of plan.policies) {
      expect(sel.get(p.name)?.namespaces, p.name).toEqual([...p.namespaces].sort());
      expect(p.namespaces).toHaveLength(5);
      expect(sel.get(p.name)?.overlaps.size).toBe(0);
      expect(p.spec.aws?.roleArn).toBe(`arn:aws:iam::${p.account}:role/skylift-bench`);
    }
    // Every record is in the zone of its namespace's account.
    const accountOf = new Map(plan.namespaces.map((n) => [n.name, n.account]));
    for (const o of plan.measured) {
      const account = accountOf.get(o.metadata.namespace ?? '');
      expect(dnsSpec(o).zoneName).toBe(
        account === '111111111111' ? 'team0.bench.skylift.test' : 'team1.bench.skylift.test',
      );
    }
  });

  it.each([
    {
      reason: 'a smoke size spreads over at most as many namespaces as objects',
      only: 'dns-teams',
      size: 40,
      ns: undefined,
      namespaces: 40,
      policies: 1,
      accounts: 1,
    },
    {
      reason: '--namespaces 4 gives 10 records each',
      only: 'dns-teams',
      size: 40,
      ns: 4,
      namespaces: 4,
      policies: 1,
      accounts: 1,
    },
    {
      reason: 'two accounts keep two policies however few namespaces',
      only: 'dns-teams-2accounts',
      size: 40,
      ns: 2,
      namespaces: 2,
      policies: 2,
      accounts: 2,
    },
    {
      reason: 'two accounts at 10 namespaces: 2 policies of 5',
      only: 'dns-teams-2accounts',
      size: 40,
      ns: 10,
      namespaces: 10,
      policies: 2,
      accounts: 2,
    },
    {
      reason: 'two accounts at 20 namespaces: 4 policies of 5',
      only: 'dns-teams-2accounts',
      size: 40,
      ns: 20,
      namespaces: 20,
      policies: 4,
      accounts: 2,
    },
  ])('$reason', ({ only, size, ns, namespaces, policies, accounts }) => {
    const plan = teamsPlan(one(only, size, ns), 'b-z');
    expect(plan.namespaces).toHaveLength(namespaces);
    expect(plan.policies).toHaveLength(policies);
    expect(plan.accounts).toHaveLength(accounts);
    expect(plan.measured).toHaveLength(size);
    expect(plan.accounts.reduce((sum, a) => sum + a.objects, 0)).toBe(size);
    const sel = selected(plan);
    expect(plan.policies.flatMap((p) => sel.get(p.name)?.namespaces ?? []).sort()).toEqual(
      plan.namespaces.map((n) => n.name).sort(),
    );
  });

  it('dns-teams-flood at 5000: namespace flood with 5000 A records, quiet with one, created halfway; two policies, one role', () => {
    const plan = teamsPlan(one('dns-teams-flood', 5000), 'b-f');
    expect(plan.namespaces.map((n) => n.name)).toEqual(['b-f-flood', 'b-f-quiet']);
    expect(plan.policies.map((p) => [p.name, p.namespaces, p.spec.aws?.roleArn])).toEqual([
      ['b-f-flood', ['b-f-flood'], 'arn:aws:iam::111111111111:role/skylift-bench'],
      ['b-f-quiet', ['b-f-quiet'], 'arn:aws:iam::111111111111:role/skylift-bench'],
    ]);
    expect(plan.measured).toHaveLength(5000);
    expect(plan.measured.every((o) => o.metadata.namespace === 'b-f-flood' && dnsSpec(o).type === 'A')).toBe(
      true,
    );
    expect(plan.quiet?.afterCreates).toBe(2500);
    expect(plan.quiet?.object.metadata).toEqual({ name: 'quiet', namespace: 'b-f-quiet' });
    expect(dnsSpec(plan.quiet?.object as KubeObject)).toMatchObject({
      name: 'quiet',
      type: 'A',
      zoneName: 'team0.bench.skylift.test',
    });
    expect(plan.accounts[0]?.objects).toBe(5001);
    expect(selected(plan).get('b-f-quiet')?.namespaces).toEqual(['b-f-quiet']);
  });

  it('dns-teams-bigtxt at 150: TXT records of five distinct 3,900-character values, the quiet record right after the last', () => {
    const plan = teamsPlan(one('dns-teams-bigtxt', 150), 'b-t');
    expect(plan.namespaces.map((n) => n.name)).toEqual(['b-t-bigtxt', 'b-t-quiet']);
    expect(plan.measured).toHaveLength(150);
    for (const o of plan.measured) {
      const spec = dnsSpec(o);
      expect(spec.type).toBe('TXT');
      expect(spec.records).toHaveLength(bigTxtValues);
      expect(spec.records.every((v) => v.length === bigTxtValueChars && /^[a-z0-9-]+$/.test(v))).toBe(true);
      expect(new Set(spec.records).size).toBe(bigTxtValues);
    }
    expect(bigTxtValues * bigTxtValueChars).toBe(19_500);
    expect(plan.quiet?.afterCreates).toBe(150);
  });

  it('teams-memory at 500: one DNSRecord in each of 500 namespaces, 50 policies of 10', () => {
    const plan = teamsPlan(one('teams-memory', 500), 'b-m');
    expect(plan.namespaces).toHaveLength(500);
    expect(plan.measured).toHaveLength(500);
    expect([...perNamespace(plan.measured).values()].every((n) => n === 1)).toBe(true);
    expect(plan.policies).toHaveLength(50);
    expect(plan.policies.every((p) => p.namespaces.length === 10)).toBe(true);
    expect(plan.accounts).toHaveLength(1);
  });

  it('myingress-teams and manageddb-teams: objects over 50 namespaces under one policy, each MyIngress with its Service in its namespace', () => {
    const ing = teamsPlan(one('myingress-teams', 100), 'b-i');
    expect(ing.namespaces).toHaveLength(50);
    expect(ing.policies).toHaveLength(1);
    expect(ing.accounts[0]?.zoneNames).toEqual([]);
    expect([...perNamespace(ing.measured).values()].every((n) => n === 2)).toBe(true);
    for (const o of ing.measured) {
      const svc = (
        o as unknown as {
          spec: { listeners: { defaultAction: { forward: { service: { name: string } } } }[] };
        }
      ).spec.listeners[0]?.defaultAction.forward.service.name;
      expect(
        ing.supporting.some(
          (s) =>
            s.kind === 'Service' && s.metadata.name === svc && s.metadata.namespace === o.metadata.namespace,
        ),
      ).toBe(true);
    }
    const db = teamsPlan(one('manageddb-teams', 100), 'b-d');
    expect(db.measured.every((o) => o.kind === 'ManagedDB')).toBe(true);
    expect(perNamespace(db.measured).size).toBe(50);
  });

  it('dns-namespaces at 1000: 50 namespaces × 20 A records in one zone of the operator’s own account, no policy, no label', () => {
    const plan = teamsPlan(one('dns-namespaces', 1000), 'b-o');
    expect(plan.namespaces).toHaveLength(50);
    expect(plan.namespaces.map((n) => n.name)).toEqual(Array.from({ length: 50 }, (_, k) => `b-o-n${k}`));
    expect(plan.namespaces.every((n) => n.policy === undefined && n.account === 'own')).toBe(true);
    expect(plan.namespaces.every((n) => Object.keys(n.labels).length === 0)).toBe(true);
    expect(plan.policies).toEqual([]);
    expect(plan.quiet).toBeUndefined();
    expect(plan.measured).toHaveLength(1000);
    expect([...perNamespace(plan.measured).values()].every((n) => n === 20)).toBe(true);
    expect(new Set(plan.measured.map((o) => dnsSpec(o).name)).size).toBe(1000);
    // The zone the dns group makes, with the emulator's own credentials: no role to assume.
    expect(benchZoneNames(1)).toEqual(['z0.bench.skylift.test']);
    expect(plan.measured.every((o) => dnsSpec(o).zoneName === 'z0.bench.skylift.test')).toBe(true);
    expect(plan.accounts).toEqual([
      {
        id: 'own',
        zoneNames: ['z0.bench.skylift.test'],
        policies: [],
        namespaces: plan.namespaces.map((n) => n.name),
        objects: 1000,
      },
    ]);
    expect(plan.supporting).toEqual([]);
  });

  it('dns-namespaces with --namespaces 4 at 40: 10 records each', () => {
    const plan = teamsPlan(one('dns-namespaces', 40, 4), 'b-s');
    expect([...perNamespace(plan.measured).entries()]).toEqual([
      ['b-s-n0', 10],
      ['b-s-n1', 10],
      ['b-s-n2', 10],
      ['b-s-n3', 10],
    ]);
    expect(plan.policies).toHaveLength(0);
  });

  it.each([
    { reason: 'policies of namespaces need policies', extra: { namespacesPerPolicy: 5 } },
    {
      reason: 'a quiet namespace needs its own policy',
      extra: { quiet: { bulkNamespace: 'flood', bulk: 'A' as const, afterShare: 0.5 } },
    },
  ])('refuses a spread without policies whose shape needs them: $reason', ({ extra }) => {
    const s = one('dns-namespaces', 40);
    const group = { ...s.group, teams: { namespaces: 10, accounts: 'own' as const, ...extra } };
    expect(() => teamsPlan({ ...s, group }, 'b')).toThrow(/no TeamPolicies/);
  });

  it('refuses a group that is not spread over namespaces', () => {
    expect(() => teamsPlan(one('dns', 10), 'b')).toThrow(/not a teams scenario/);
  });
});

describe('teams setup', () => {
  it('runs the operator with its own policy group and its teams record in the scenario’s namespace', () => {
    expect(teamsOperatorFlags('b-x', 'b-x-sys')).toEqual([
      '--team-policy-selector',
      'skylift.test/policies=b-x',
      '--leader-election-namespace',
      'b-x-sys',
      '--leader-election-id',
      'skylift-bench',
    ]);
  });

  it('waits for every policy to be Ready with exactly its namespaces', () => {
    const plan = teamsPlan(one('dns-teams-2accounts', 40, 4), 'b-w');
    const serving = (name: string, namespaces: readonly string[], status = 'True'): TeamPolicy =>
      ({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'TeamPolicy',
        metadata: { name },
        spec: { namespaces: {} },
        status: {
          selectedNamespaces: [...namespaces].sort(),
          conditions: [
            { type: 'Ready', status, reason: status === 'True' ? 'Serving' : 'Overlap', message: 'm' },
          ],
        },
      }) as TeamPolicy;
    const [p0, p1] = plan.policies;
    if (p0 === undefined || p1 === undefined) throw new Error('two policies expected');
    expect(policiesNotServing(plan, [serving(p0.name, p0.namespaces)])).toMatch(/b-w-p1 does not exist/);
    expect(
      policiesNotServing(plan, [serving(p0.name, p0.namespaces), serving(p1.name, p1.namespaces, 'False')]),
    ).toMatch(/b-w-p1 is not Ready \(Overlap: m\)/);
    expect(
      policiesNotServing(plan, [serving(p0.name, p0.namespaces), serving(p1.name, p1.namespaces.slice(1))]),
    ).toMatch(/serves 1 namespaces, not the 2 planned/);
    expect(
      policiesNotServing(plan, [serving(p0.name, p0.namespaces), serving(p1.name, p1.namespaces)]),
    ).toBeUndefined();
  });

  it('names objects by namespace/name when watching every namespace', () => {
    const obj = { apiVersion: 'v1', kind: 'X', metadata: { name: 'r1', namespace: 'ns' } } as KubeObject;
    expect(trackerId(obj, undefined)).toBe('ns/r1');
    expect(trackerId(obj, 'ns')).toBe('r1');
  });
});

describe('sessions of assumed roles', () => {
  const answer = (key: string, account: string): string =>
    `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
    `<SessionToken>tok</SessionToken><SecretAccessKey>s</SecretAccessKey><Expiration>2026-01-01T00:00:00Z</Expiration>` +
    `<AccessKeyId>${key}</AccessKeyId></Credentials><AssumedRoleUser>` +
    `<Arn>arn:aws:sts::${account}:assumed-role/skylift-bench/s1</Arn><AssumedRoleId>AROA:s1</AssumedRoleId>` +
    `</AssumedRoleUser></AssumeRoleResult></AssumeRoleResponse>`;

  it('reads the session key and its account from an AssumeRole answer, nothing from another answer', () => {
    expect(assumedSession(answer('ASIA1', '111111111111'))).toEqual({
      accessKeyId: 'ASIA1',
      account: '111111111111',
    });
    expect(
      assumedSession('<GetCallerIdentityResponse><Account>1</Account></GetCallerIdentityResponse>'),
    ).toBeUndefined();
  });

  it('puts every session of one account in one rate-limit bucket, passing the answer on unchanged', () => {
    const sessions = new SessionAccounts();
    const rule = sessions.rule();
    if (rule.fault.kind !== 'rewrite') throw new Error('a rewrite rule expected');
    const call = { service: 'sts', operation: 'AssumeRole', method: 'POST', path: '/', body: '' };
    for (const [key, account] of [
      ['ASIA1', '111111111111'],
      ['ASIA2', '111111111111'],
      ['ASIA3', '222222222222'],
    ] as const)
      expect(rule.fault.rewrite(answer(key, account), call)).toBe(answer(key, account));
    const bucket = (accessKeyId: string): string => sessions.bucketOf({ ...call, accessKeyId });
    expect([bucket('ASIA1'), bucket('ASIA2'), bucket('ASIA3'), bucket('AKIDOWN')]).toEqual([
      '111111111111',
      '111111111111',
      '222222222222',
      'AKIDOWN',
    ]);
  });
});

describe('teams measurements', () => {
  const metrics = (createCalls: number, throttled: number): string =>
    [
      '# HELP skylift_aws_api_calls_total AWS API calls',
      '# TYPE skylift_aws_api_calls_total counter',
      `skylift_aws_api_calls_total{service="route53",operation="ChangeResourceRecordSets",outcome="success",account="111111111111"} ${createCalls}`,
      `skylift_aws_api_calls_total{service="route53",operation="ChangeResourceRecordSets",outcome="throttled",account="111111111111"} ${throttled}`,
      'skylift_aws_api_calls_total{service="route53",operation="ListHostedZonesByName",outcome="success",account="222222222222"} 1',
      'skylift_aws_api_calls_total{service="sts",operation="AssumeRole",outcome="success",account="own"} 2',
      'skylift_aws_api_calls_total_created 1',
    ].join('\n');

  it('reads AWS calls per account, outcomes summed, throttles apart, and their growth between two readings', () => {
    const before = awsCallsByAccount(metrics(3, 0));
    expect(before).toEqual({
      '111111111111': { byOperation: { 'route53:ChangeResourceRecordSets': 3 }, throttled: 0 },
      '222222222222': { byOperation: { 'route53:ListHostedZonesByName': 1 }, throttled: 0 },
      own: { byOperation: { 'sts:AssumeRole': 2 }, throttled: 0 },
    });
    const after = awsCallsByAccount(metrics(10, 4));
    expect(accountCallsDelta(before, after)).toEqual({
      '111111111111': { byOperation: { 'route53:ChangeResourceRecordSets': 11 }, throttled: 4 },
    });
    expect(accountCallsDelta({}, before)).toEqual(before);
  });

  it.each([
    {
      reason: 'Ready within the goal, with the bulk records Ready before it counted',
      readyAt: 1400,
      want: { readyMs: 400, withinGoal: true, bulkReadyBefore: 1, createdAfterFirstBulkMs: 1000 },
    },
    {
      reason: 'Ready after the goal',
      readyAt: 7000.06,
      want: { readyMs: 6000.1, withinGoal: false, bulkReadyBefore: 2 },
    },
    {
      reason: 'never Ready',
      readyAt: undefined,
      want: { readyMs: null, withinGoal: false, bulkReadyBefore: 2 },
    },
  ])('the quiet record: $reason', ({ readyAt, want }) => {
    const q = quietResult({
      object: 'ns-quiet/quiet',
      firstBulkAt: 0,
      createdAfterBulkCreates: 2,
      createdAt: 1000,
      readyAt,
      bulkReadyAt: [1200, 5000, undefined],
    });
    expect(q).toMatchObject({
      object: 'ns-quiet/quiet',
      bulk: 3,
      createdAfterBulkCreates: 2,
      goalMs: 5000,
      ...want,
    });
  });

  it.each([
    { q: '320Mi', bytes: 320 * MiB },
    { q: '1Gi', bytes: 1024 * MiB },
    { q: '500M', bytes: 500_000_000 },
    { q: '1.5Gi', bytes: 1536 * MiB },
    { q: 268435456, bytes: 268435456 },
    { q: 'lots', bytes: null },
    { q: undefined, bytes: null },
  ])('reads the memory quantity $q', ({ q, bytes }) => {
    expect(quantityBytes(q)).toBe(bytes);
  });

  it("reads the chart's memory request, limit and heap limit from its values file", () => {
    const text = readFileSync(join(repoRoot, 'deploy/helm/skylift/values.yaml'), 'utf8');
    const chart = chartMemoryOf(text);
    expect(chart.limitBytes).toBeGreaterThan(chart.requestBytes ?? Infinity);
    expect(chart.heapLimitMiB).toBe(192);
    expect(chartMemoryOf('resources:\n  limits:\n    memory: 320Mi\n')).toEqual({
      requestBytes: null,
      limitBytes: 320 * MiB,
      heapLimitMiB: null,
    });
  });

  it('extrapolates how many objects a slope puts under a limit', () => {
    const slope = { bytesPerObject: 100 * 1024, interceptBytes: 100 * MiB, r2: 1, reason: null };
    expect(objectsWithin(320 * MiB, slope)).toBe(2252);
    expect(objectsWithin(null, slope)).toBeNull();
    expect(objectsWithin(320 * MiB, { ...slope, bytesPerObject: -5 })).toBeNull();
    expect(
      objectsWithin(320 * MiB, { bytesPerObject: null, interceptBytes: null, r2: null, reason: 'one size' }),
    ).toBeNull();
  });
});

describe('teams lines in the table', () => {
  const phase = (perResourceByOperation: Record<string, number>, perResource: number): PhaseResult => ({
    durationMs: 30_000,
    aws: { total: 1, perResource, perResourceByOperation, throttled: 0 },
    kube: { writes: 0, writesPerResource: 0, byVerb: {} },
    reconcilesPerResource: 0.5,
    cpuSeconds: 1,
  });
  const base = (
    id: string,
    group: string,
    kind: string,
    size: number,
    peakRssBytes: number,
  ): ScenarioResult => ({
    id,
    group,
    kind,
    size,
    zones: 1,
    route53RatePerSecond: null,
    status: 'ok',
    readyCount: size,
    resync: phase({ 'elasticloadbalancing:DescribeLoadBalancers': 0.5 }, 0.5),
    operator: { peakRssBytes, cpuSeconds: 1 },
  });
  const report = (scenarios: ScenarioResult[], memory: BenchReport['memory'] = []): BenchReport =>
    ({
      schemaVersion: 2,
      complete: true,
      startedAt: '',
      finishedAt: '',
      scenarios,
      curves: [],
      memory,
      baseline: null,
      chart: { requestBytes: 192 * MiB, limitBytes: 320 * MiB, heapLimitMiB: 192 },
    }) as unknown as BenchReport;

  it('prints the teams shape and calls per account, the quiet record, calls per resync and the chart limit', () => {
    const teams: ScenarioResult = {
      ...base('dns-teams-flood-40', 'dns-teams-flood', 'DNSRecord', 40, 160 * MiB),
      teams: {
        namespaces: 2,
        policies: 2,
        accounts: [
          {
            account: '111111111111',
            roleArn: 'r',
            policies: 2,
            namespaces: 2,
            objects: 41,
            zones: ['team0.bench.skylift.test'],
          },
        ],
        operatorFlags: [],
        policiesServingMs: 1234,
        callsBeforeCreate: {},
        stsCalls: { 'sts:AssumeRole': 1 },
        callsByAccount: {
          create: {
            '111111111111': {
              byOperation: { 'route53:ChangeResourceRecordSets': 3, 'route53:ListHostedZonesByName': 1 },
              throttled: 2,
            },
          },
        },
      },
      quiet: {
        object: 'ns-quiet/quiet',
        bulk: 40,
        createdAfterBulkCreates: 20,
        createdAfterFirstBulkMs: 300,
        readyMs: 2500,
        bulkReadyBefore: 12,
        goalMs: 5000,
        withinGoal: true,
      },
    };
    const ing = base('myingress-teams-100', 'myingress-teams', 'MyIngress', 100, 200 * MiB);
    const text = renderTable(report([teams, ing]));
    expect(text).toContain(
      'dns-teams-flood-40: 2 namespaces, 2 TeamPolicies, accounts 111111111111 (2 policies, 2 namespaces, 41 objects); policies serving 1.2s after the operator started; ' +
        'create calls by account 111111111111: route53:ChangeResourceRecordSets 3, route53:ListHostedZonesByName 1 (2 throttled); STS at the proxy sts:AssumeRole 1',
    );
    expect(text).toContain(
      'dns-teams-flood-40: quiet record ns-quiet/quiet Ready 2.5s after its create (goal 5.0s: met); created after 20 of 40 bulk creates (0.3s after the first); 12 bulk records Ready before it',
    );
    expect(text).toContain(
      'resync myingress-teams-100: 0.50 AWS calls per object, 0.50 reconciles per object, 1.00 calls per resync: elasticloadbalancing:DescribeLoadBalancers 0.50 per object',
    );
    expect(text).not.toContain('resync dns-teams-flood-40');
    expect(text).toContain(
      'chart memory: request 192 MiB, limit 320 MiB; highest peak RSS 200 MiB (myingress-teams-100), 63 % of the limit',
    );
  });

  it('prints the spread without policies: the own account, nothing waited for, no STS', () => {
    const spread: ScenarioResult = {
      ...base('dns-namespaces-40-ns4', 'dns-namespaces', 'DNSRecord', 40, 100 * MiB),
      teams: {
        namespaces: 4,
        policies: 0,
        accounts: [
          { account: 'own', policies: 0, namespaces: 4, objects: 40, zones: ['z0.bench.skylift.test'] },
        ],
        operatorFlags: [],
        policiesServingMs: null,
        callsBeforeCreate: {},
        stsCalls: {},
        callsByAccount: {
          create: { own: { byOperation: { 'route53:ChangeResourceRecordSets': 2 }, throttled: 0 } },
        },
      },
    };
    expect(renderTable(report([spread]))).toContain(
      'dns-namespaces-40-ns4: 4 namespaces, 0 TeamPolicies, accounts own (0 policies, 4 namespaces, 40 objects); no policy to wait for; ' +
        'create calls by account own: route53:ChangeResourceRecordSets 2; STS at the proxy none',
    );
  });

  it('prints memory per namespace for teams-memory and how many namespaces fit under the limit', () => {
    const slope = { bytesPerObject: 100 * 1024, interceptBytes: 100 * MiB, r2: 1, reason: null };
    const text = renderTable(
      report(
        [base('teams-memory-500', 'teams-memory', 'DNSRecord', 500, 150 * MiB)],
        [{ group: 'teams-memory', points: [], afterCreate: slope, afterResync: slope, peak: slope }],
      ),
    );
    expect(text).toContain(
      "memory per namespace (teams-memory, one DNSRecord each): peak +100.0 KiB/namespace + 100 MiB (r² 1); about 2252 namespaces under the chart's 320 MiB limit (extrapolated)",
    );
  });
});
