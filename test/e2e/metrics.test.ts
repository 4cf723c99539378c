// /metrics of a running `skylift run`, after it created one DNSRecord in
// Route 53: every metric the alerting rules and the Grafana dashboard query
// is served (names parsed from those files), the metrics reference in
// docs/observability.md matches what is served both ways, and the AWS-call,
// Route 53, leader and readiness series have the values this run implies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { createDnsRecord, createZone, route53At, waitForCondition } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import {
  dashboardExpressions,
  documentedMetrics,
  familyOf,
  metricNamesInExpr,
  parseExposition,
  prometheusSyntheticSeries,
  ruleExpressions,
  sampleValue,
  type Exposition,
} from '../support/monitoring.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

let operator: SkyliftProcess | undefined;
let metricsUrl: string;
let ns: string;

afterAll(async () => {
  await operator?.stop();
});

/** The address the operator logged when its probe server started listening. */
function probeAddress(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; address?: string };
    if (entry.msg?.startsWith('serving /metrics') === true) return entry.address;
  }
  return undefined;
}

async function scrape(): Promise<Exposition> {
  const res = await fetch(metricsUrl);
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-metrics');
  const zone = `${ns}.example.com`;
  await createZone(route53At(stackInfo().awsEndpoint), zone);
  // Leader election on, so leader_election_master_status is served too.
  operator = spawnSkylift(ns, stackInfo().awsEndpoint, [
    '--leader-elect=true',
    '--leader-election-namespace',
    ns,
    '--route53-batch-window',
    '200ms',
  ]);
  const running = operator;
  const address = await waitFor(() => probeAddress(running.output()), {
    timeoutMs: 30_000,
    description: 'skylift run to log its probe address',
  });
  metricsUrl = `http://${address}/metrics`;
  await waitFor(() => (running.output().includes('controllers started') ? true : undefined), {
    timeoutMs: 30_000,
    description: 'skylift run to take the lease and start its controllers',
  });
  await createDnsRecord(admin, ns, 'www', {
    zoneName: zone,
    name: 'www',
    type: 'A',
    ttl: 60,
    records: ['192.0.2.10'],
  });
  await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' }, 60_000);
});

describe('/metrics of skylift run', () => {
  it('serves every metric the alerting rules and the dashboard query', async () => {
    const exposition = await scrape();
    for (const [file, exprs] of [
      ['rules.yaml', ruleExpressions()],
      ['grafana-dashboard.json', dashboardExpressions()],
    ] as const) {
      const used = [...new Set(exprs.flatMap(metricNamesInExpr))].filter(
        (n) => !prometheusSyntheticSeries.has(n),
      );
      expect(used.length, file).toBeGreaterThan(5);
      expect(
        used.filter((n) => familyOf(n, exposition) === undefined),
        `${file} queries metrics /metrics does not serve`,
      ).toEqual([]);
    }
  });

  it('serves exactly the metrics docs/observability.md documents, with their types and labels', async () => {
    const exposition = await scrape();
    const doc = documentedMetrics();
    expect(doc.map((d) => d.name).sort()).toEqual([...exposition.types.keys()].sort());
    for (const d of doc) {
      expect(`${d.name}: ${exposition.types.get(d.name) ?? 'absent'}`).toBe(`${d.name}: ${d.type}`);
      // Labels are visible only on series that have samples; every sample must carry exactly the documented ones.
      const label = new Set(d.labels);
      for (const s of exposition.samples.filter((x) => familyOf(x.name, exposition) === d.name)) {
        const keys = Object.keys(s.labels).filter((k) => k !== 'le');
        expect(`${s.name}{${keys.sort().join(',')}}`).toBe(`${s.name}{${[...label].sort().join(',')}}`);
      }
    }
  });

  it('counts the AWS calls, the Route 53 batch, the lease and the Ready record of this run', async () => {
    const exposition = await waitFor(
      async () => {
        const e = await scrape();
        return (sampleValue(e, 'skylift_managed_resources', { kind: 'DNSRecord', ready: 'True' }) ?? 0) >= 1
          ? e
          : undefined;
      },
      { timeoutMs: 30_000, description: 'the Ready DNSRecord to be counted' },
    );
    const route53 = { service: 'route53', outcome: 'success', account: 'own' };
    expect(
      sampleValue(exposition, 'skylift_aws_api_calls_total', {
        ...route53,
        operation: 'ChangeResourceRecordSets',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(exposition, 'skylift_aws_api_calls_total', {
        ...route53,
        operation: 'ListHostedZonesByName',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(exposition, 'skylift_aws_client_rate_limit', { service: 'route53', account: 'own' }),
    ).toBeGreaterThan(0);
    expect(
      sampleValue(exposition, 'skylift_route53_change_batches_total', { outcome: 'applied' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sampleValue(exposition, 'skylift_route53_change_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(exposition, 'leader_election_master_status', { name: 'skylift-leader' })).toBe(1);
    const reconciles = exposition.samples.filter(
      (x) => x.name === 'controller_runtime_reconcile_total' && x.labels.controller === 'dnsrecord',
    );
    expect(reconciles.reduce((sum, x) => sum + x.value, 0)).toBeGreaterThanOrEqual(1);
    expect(sampleValue(exposition, 'skylift_oldest_not_ready_seconds', { kind: 'DNSRecord' })).toBe(0);
    expect(
      sampleValue(exposition, 'controller_runtime_reconcile_time_seconds_count', { controller: 'dnsrecord' }),
    ).toBeGreaterThanOrEqual(1);
  });
});
