// Smoke test of `make bench`: the CLI at its smallest size, on its own local
// stack, must produce a report whose numbers hang together. No timing is
// asserted; timings are what the report is for.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchReport } from '../../bench/report.ts';
import { repoRoot } from '../../dev/paths.ts';
import { scratchDir } from '../support/scratch.ts';

async function runBench(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(repoRoot, 'bench/run.ts'), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('make bench (smoke)', () => {
  it('measures 20 DNSRecords end to end and writes a consistent report', async () => {
    const out = await scratchDir('bench');
    const size = 20;
    // Against a baseline made up to hold this scenario, so the comparison is exercised end to end.
    const baselineFile = join(out, 'baseline.json');
    await writeFile(
      baselineFile,
      JSON.stringify({
        schemaVersion: 1,
        scenarios: [{ id: `dns-${size}`, status: 'ok', size, create: { durationMs: 1000 } }],
      }),
    );
    const run = await runBench([
      '--only',
      'dns',
      '--sizes',
      String(size),
      '--resync-period',
      '8s',
      '--out',
      out,
      '--baseline',
      baselineFile,
    ]);
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);

    const files = (await readdir(out)).filter((f) => f.endsWith('.json') && f !== 'baseline.json');
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/);
    const report = JSON.parse(await readFile(join(out, files[0] ?? ''), 'utf8')) as BenchReport;

    expect(report.complete).toBe(true);
    expect(report.machine.cores).toBeGreaterThan(0);
    expect(report.machine.totalMemoryBytes).toBeGreaterThan(0);
    expect(report.machine.node).toBe(process.version);
    expect(report.machine.gitCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(report.machine.note).toContain('share');
    expect(report.settings).toMatchObject({ only: ['dns'], sizes: [size], resyncPeriodMs: 8000 });
    expect(report.settings.operatorFlags).toContain('8s');

    expect(report.scenarios).toHaveLength(1);
    const s = report.scenarios[0];
    if (s === undefined) throw new Error('no scenario in the report');
    expect(s, s.error).toMatchObject({
      id: `dns-${size}`,
      kind: 'DNSRecord',
      status: 'ok',
      readyCount: size,
    });
    const { create, resync, delete: del } = s;
    if (create === undefined || resync === undefined || del === undefined)
      throw new Error('a phase is missing');

    // Every object got a create→Ready and a delete→gone latency, and percentiles are ordered.
    for (const d of [create.perResourceMs, del.perResourceMs]) {
      expect(d?.count).toBe(size);
      expect(d?.p50).toBeGreaterThan(0);
      expect(d?.p50).toBeLessThanOrEqual(d?.p95 ?? -1);
      expect(d?.p95).toBeLessThanOrEqual(d?.max ?? -1);
    }
    // The phase is reported in whole ms, latencies to 0.1 ms: equal within that rounding (4222 vs 4222.1 seen).
    expect(create.durationMs + 1).toBeGreaterThanOrEqual(create.perResourceMs?.max ?? Infinity);
    // The phase splits at the bench's last answered create: its own requests, then the wait for Ready.
    for (const p of [create, del]) {
      expect(p.requestsMs).toBeGreaterThan(0);
      expect(p.afterLastRequestMs).toBeGreaterThanOrEqual(0);
      const sum = (p.requestsMs ?? NaN) + (p.afterLastRequestMs ?? NaN);
      if (p.afterLastRequestMs !== 0) expect(Math.abs(sum - p.durationMs)).toBeLessThanOrEqual(1);
    }
    expect(create.cpuMsPerResource).toBeCloseTo((create.cpuSeconds * 1000) / size, 0);

    // Creating reached Route 53 and wrote to Kubernetes; AWS calls are counted per operation.
    expect(create.aws.total).toBeGreaterThan(0);
    expect(create.aws.perResourceByOperation['route53:ChangeResourceRecordSets']).toBeGreaterThan(0);
    expect(create.kube.writes).toBeGreaterThan(0);
    expect(create.kube.byVerb.PATCH).toBeGreaterThan(0);
    expect(create.aws.throttled).toBe(0);
    // Deleting removed the records through Route 53 and dropped the finalizers.
    expect(del.aws.perResourceByOperation['route53:ChangeResourceRecordSets']).toBeGreaterThan(0);
    expect(del.kube.writes).toBeGreaterThanOrEqual(size);

    // The resync window saw resyncs, and a no-op resync writes nothing to Kubernetes or AWS.
    expect(resync.durationMs).toBeGreaterThanOrEqual(8000);
    expect(resync.reconcilesPerResource).toBeGreaterThan(0);
    expect(resync.kube.writes).toBe(0);
    expect(
      Object.keys(resync.aws.perResourceByOperation).filter((op) => op.endsWith('ChangeResourceRecordSets')),
    ).toEqual([]);
    expect(s.steadyState?.cpuSecondsPerMinute).toBeGreaterThanOrEqual(0);

    expect(s.operator?.peakRssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(s.operator?.cpuSeconds).toBeGreaterThan(0);
    expect(s.operator?.cpuMsPerResource).toBeGreaterThan(0);
    for (const rss of [s.operator?.rssAfterCreateBytes, s.operator?.rssAfterResyncBytes]) {
      expect(rss).toBeGreaterThan(10 * 1024 * 1024);
      expect(rss).toBeLessThanOrEqual(s.operator?.peakRssBytes ?? 0);
    }
    // One size: no RSS slope, and the report says why.
    expect(report.schemaVersion).toBe(2);
    expect(report.memory).toHaveLength(1);
    expect(report.memory[0]).toMatchObject({
      group: 'dns',
      afterCreate: { bytesPerObject: null, reason: expect.stringContaining('one size only') as unknown },
    });
    expect(s.leftovers).toEqual({ route53Records: 0, loadBalancers: 0, targetGroups: 0, dbInstances: 0 });

    // The comparison has a ratio where the baseline has the field, and none where it lacks it.
    // Named relative to the repository, as the scratch directory is inside it.
    expect(report.baseline?.file).toBe(relative(repoRoot, baselineFile));
    expect(report.baseline?.scenarios[0]?.metrics.allReadyMs.ratio).toBeGreaterThan(0);
    expect(report.baseline?.scenarios[0]?.metrics.afterLastCreateMs).toMatchObject({
      baseline: null,
      ratio: null,
    });
    expect(run.stdout).toContain(
      `\nagainst baseline ${relative(repoRoot, baselineFile)}: current / baseline\n`,
    );

    // The table names the scenario and where the report went.
    expect(run.stdout).toMatch(new RegExp(`^dns-${size}\\s+${size}\\s+\\d+\\.\\ds`, 'm'));
    expect(run.stdout).toContain(join(out, files[0] ?? ''));
  });

  // Issue 28: many namespaces under one TeamPolicy cost what one namespace costs. The short, seeded
  // version of `--only dns-teams` (the full one, 1,000 records over 50 namespaces, is make bench's).
  it('measures DNSRecords over namespaces under one TeamPolicy: one session, one zone lookup and one listing for all', async () => {
    const out = await scratchDir('bench-teams');
    const run = await runBench([
      '--only',
      'dns-teams',
      '--sizes',
      '40',
      '--namespaces',
      '8',
      '--resync-period',
      '8s',
      '--out',
      out,
    ]);
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
    const files = (await readdir(out)).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    const report = JSON.parse(await readFile(join(out, files[0] ?? ''), 'utf8')) as BenchReport;
    const s = report.scenarios[0];
    if (s === undefined) throw new Error('no scenario in the report');
    expect(s, s.error).toMatchObject({ id: 'dns-teams-40-ns8', status: 'ok', readyCount: 40 });
    expect(s.teams).toMatchObject({ namespaces: 8, policies: 1 });
    const account = s.teams?.accounts[0]?.account ?? '';
    expect(s.teams?.accounts.map((a) => a.objects)).toEqual([40]);
    // One AssumeRole for the 8 namespaces (was one per namespace before issue 28).
    expect(s.teams?.stsCalls).toEqual({ 'sts:AssumeRole': 1 });
    // One zone lookup and one listing of the zone for the whole create burst, in the role's account.
    const create = s.teams?.callsByAccount.create?.[account]?.byOperation ?? {};
    expect(create['route53:ListHostedZonesByName']).toBe(1);
    expect(create['route53:ListResourceRecordSets']).toBe(1);
    expect(create['route53:ChangeResourceRecordSets']).toBeGreaterThan(0);
    expect(create['route53:ChangeResourceRecordSets']).toBeLessThan(8);
    expect(s.leftovers).toEqual({ route53Records: 0, loadBalancers: 0, targetGroups: 0, dbInstances: 0 });
  });

  // Issue 30: routes from several namespaces share one Gateway's load balancer. The tiny version of
  // `--only gateway` (make bench's is 200 routes in 20 namespaces). Its myingress-group sibling is
  // left out here: another local stack and operator would add about 20 s to this file.
  it('measures HTTPRoutes on one Gateway: one load balancer, the calls of a route change by operation, nothing left', async () => {
    const out = await scratchDir('bench-gateway');
    const size = 3;
    const run = await runBench([
      '--only',
      'gateway',
      '--sizes',
      String(size),
      '--resync-period',
      '8s',
      '--idle-window',
      '1s',
      // From the sources: compiling the operator would cost this test about 10 s.
      '--operator-build',
      'source',
      '--out',
      out,
    ]);
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
    const files = (await readdir(out)).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    const report = JSON.parse(await readFile(join(out, files[0] ?? ''), 'utf8')) as BenchReport;
    const s = report.scenarios[0];
    if (s === undefined) throw new Error('no scenario in the report');
    expect(s, s.error).toMatchObject({
      id: `gateway-${size}`,
      kind: 'HTTPRoute',
      status: 'ok',
      readyCount: size,
    });
    const shared = s.shared;
    if (shared === undefined) throw new Error('no shared section');
    // One load balancer for the Gateway, one rule and target group per route, made once.
    expect(shared).toMatchObject({
      front: 'gateway',
      groups: 1,
      members: size,
      createLoadBalancerCalls: 1,
      afterCreate: { loadBalancers: 1, listeners: 1, rules: size, targetGroups: size, securityGroups: 1 },
      violations: [],
    });
    expect(shared.gatewayProgrammed?.aws.byOperation?.['elasticloadbalancing:CreateLoadBalancer']).toBe(1);
    // Every phase's ELBv2 calls are counted by operation and add up; a route's create makes its rule.
    for (const c of [shared.createElbv2, shared.change.elbv2, shared.deletion.elbv2]) {
      expect(Number.isInteger(c.total)).toBe(true);
      expect(Object.values(c.byOperation).reduce((a, b) => a + b, 0)).toBe(c.total);
    }
    expect(shared.createElbv2.byOperation.CreateRule).toBeGreaterThanOrEqual(size);
    expect(shared.createElbv2.byOperation.CreateTargetGroup).toBe(size);
    // The changed path is in ELBv2 (the old one gone), through a rule write.
    expect(shared.change.appliedInAws).toBe(true);
    expect(shared.change.elbv2.byOperation.ModifyRule ?? 0).toBeGreaterThanOrEqual(1);
    // Routes, then the Gateway, deleted: nothing Skylift tagged is left, no listener or rule answers.
    expect(shared.leftovers).toEqual({
      loadBalancers: 0,
      listeners: 0,
      rules: 0,
      targetGroups: 0,
      securityGroups: 0,
      lingeringChildren: 0,
    });
    expect(s.leftovers).toEqual({ route53Records: 0, loadBalancers: 0, targetGroups: 0, dbInstances: 0 });
    expect(run.stdout).toContain(`gateway-${size}: one route's path changed`);
  });
});
