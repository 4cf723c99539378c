// Tracing against the real apiserver and moto: the DNSRecord controller runs
// in this process with tracing on (spans kept in memory); creating a record
// must yield reconcile spans about it whose AWS calls hang beneath them.
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { startTracing, type Tracing } from '../../src/runtime/tracing.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import {
  createDnsRecord,
  createZone,
  route53At,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo } from '../support/stack.ts';

let admin: KubeClient;
let tracing: Tracing;
let controller: RunningDnsController | undefined;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  tracing = await startTracing({ exporter });
});
afterAll(async () => {
  await controller?.stop();
  await tracing.shutdown();
});

const isAwsCall = (s: ReadableSpan): boolean => s.attributes['rpc.system'] === 'aws-api';

describe('tracing', () => {
  it('a reconcile span per DNSRecord reconcile, with the AWS calls it made as child spans', async () => {
    const ns = await newNamespace(admin, 'tracing');
    const zone = `${ns}.example.com`;
    await createZone(route53At(stackInfo().awsEndpoint), zone);
    controller = await startDnsController({
      namespace: ns,
      endpoint: stackInfo().awsEndpoint,
      settings: { batchWindowMs: 100 },
    });
    await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.10'],
    });
    await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' });
    // The reconcile that wrote Ready may still be running (its span unfinished while its AWS
    // calls are done): stopping the controller waits for it, so every span below is finished.
    await controller.stop();
    controller = undefined;

    const spans = exporter.getFinishedSpans();
    const reconciles = spans.filter(
      (s) => s.name === 'reconcile DNSRecord' && s.attributes['k8s.namespace.name'] === ns,
    );
    expect(reconciles.length).toBeGreaterThan(0);
    for (const r of reconciles) {
      expect(r.attributes).toMatchObject({
        'skylift.kind': 'DNSRecord',
        'k8s.namespace.name': ns,
        'skylift.name': 'www',
      });
      expect(r.attributes['skylift.reconcile_id']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      expect(['success', 'requeue_after', 'requeue']).toContain(r.attributes['skylift.result']);
    }
    expect(new Set(reconciles.map((r) => r.attributes['skylift.reconcile_id'])).size).toBe(reconciles.length);

    // Children: same trace, parent = the reconcile span.
    const childrenOf = (r: ReadableSpan): ReadableSpan[] =>
      spans.filter(
        (s) =>
          isAwsCall(s) &&
          s.parentSpanContext?.spanId === r.spanContext().spanId &&
          s.spanContext().traceId === r.spanContext().traceId,
      );
    const calls = reconciles.flatMap(childrenOf);
    const methods = new Set(calls.map((c) => c.attributes['rpc.method']));
    // The first reconcile finds the zone and writes the record (and its ownership TXT) in one batch.
    expect(methods).toContain('ChangeResourceRecordSets');
    expect(calls.length).toBeGreaterThan(1);
    for (const c of calls) {
      expect(c.name).toBe(`route53/${String(c.attributes['rpc.method'])}`);
      expect(c.attributes).toMatchObject({
        'rpc.system': 'aws-api',
        'rpc.service': 'route53',
        'aws.region': 'us-east-1',
        'skylift.aws.outcome': 'success',
        'http.response.status_code': 200,
      });
      // A child lies within its parent's lifetime.
      const parent = reconciles.find((r) => r.spanContext().spanId === c.parentSpanContext?.spanId);
      expect(hrMs(c.startTime)).toBeGreaterThanOrEqual(hrMs(parent?.startTime ?? [0, 0]));
    }
    // Every AWS call this object caused is attributed to one of its reconciles, none to nobody.
    const reconcileIds = new Set(reconciles.map((r) => r.spanContext().spanId));
    const orphans = spans.filter(
      (s) =>
        isAwsCall(s) && (s.parentSpanContext === undefined || !reconcileIds.has(s.parentSpanContext.spanId)),
    );
    expect(orphans.map((s) => s.name)).toEqual([]);
  });
});

function hrMs([s, ns]: readonly [number, number]): number {
  return s * 1000 + ns / 1e6;
}
