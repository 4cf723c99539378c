// `skylift run` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP
// receiver and a batch delay longer than the test: the spans of the reconcile
// that created a DNSRecord reach the receiver only through the flush on
// SIGTERM, so receiving them proves the operator exports and flushes on stop,
// and the exported spans keep the reconcile → AWS call parent links.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { createDnsRecord, createZone, route53At, waitForCondition } from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

/** OTLP/HTTP export requests received: path, content type and body (OTLP JSON). */
const received: { path: string; type: string; body: Buffer }[] = [];
let receiver: Server;
let operator: SkyliftProcess | undefined;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        type: req.headers['content-type'] ?? '',
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  await installCrds(kubeClient());
});
afterAll(async () => {
  await operator?.stop();
  receiver.close();
});

/** Runs `fn` with extra environment variables, which spawnSkylift hands to the child. */
function withEnv<R>(vars: Record<string, string>, fn: () => R): R {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Reflect.deleteProperty(process.env, k);
      else process.env[k] = v;
    }
  }
}

describe('skylift run with tracing on', () => {
  it('exports the reconcile and AWS-call spans over OTLP, flushed on SIGTERM', async () => {
    const admin = kubeClient();
    const ns = await newNamespace(admin, 'e2e-tracing');
    const zone = `${ns}.example.com`;
    await createZone(route53At(stackInfo().awsEndpoint), zone);
    const { port } = receiver.address() as AddressInfo;
    const running = withEnv(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        // Ten minutes: nothing is exported on the timer during this test, only by the flush on stop.
        OTEL_BSP_SCHEDULE_DELAY: '600000',
      },
      () => spawnSkylift(ns, stackInfo().awsEndpoint, ['--route53-batch-window', '200ms']),
    );
    operator = running;
    await waitFor(() => (running.output().includes('controllers started') ? true : undefined), {
      timeoutMs: 30_000,
      description: 'skylift run to start its controllers',
    });
    expect(running.output()).toContain('tracing enabled');
    await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.10'],
    });
    await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' }, 60_000);
    expect(received).toEqual([]);

    await running.stop();
    expect(running.child.exitCode).toBe(0);
    const traces = received.filter((r) => r.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces.map((r) => r.type)).toEqual(traces.map(() => 'application/json'));
    const spans = traces.flatMap((r) => otlpSpans(r.body));
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['skylift']));
    const reconciles = spans.filter(
      (s) => s.name === 'reconcile DNSRecord' && s.attributes['k8s.namespace.name'] === ns,
    );
    expect(reconciles.length).toBeGreaterThan(0);
    expect(reconciles[0]?.attributes).toMatchObject({ 'skylift.kind': 'DNSRecord', 'skylift.name': 'www' });
    const write = spans.find((s) => s.name === 'route53/ChangeResourceRecordSets');
    const parent = reconciles.find((r) => r.spanId === write?.parentSpanId);
    expect(parent?.traceId).toBe(write?.traceId);
    expect(write?.attributes).toMatchObject({ 'rpc.system': 'aws-api', 'skylift.aws.outcome': 'success' });
  });
});

/** A span as read from an OTLP JSON export request. */
interface ExportedSpan {
  readonly service: string | undefined;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Record<string, string | number | boolean | undefined>;
}

interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean };
}

/** Flattens an ExportTraceServiceRequest (OTLP JSON encoding: hex ids, typed attribute values). */
function otlpSpans(body: Buffer): ExportedSpan[] {
  const attrs = (kvs: OtlpKeyValue[] | undefined): ExportedSpan['attributes'] =>
    Object.fromEntries(
      (kvs ?? []).map((kv) => [
        kv.key,
        kv.value.stringValue ??
          (kv.value.intValue !== undefined ? Number(kv.value.intValue) : kv.value.boolValue),
      ]),
    );
  const req = JSON.parse(body.toString('utf8')) as {
    resourceSpans: {
      resource?: { attributes?: OtlpKeyValue[] };
      scopeSpans: {
        spans: {
          name: string;
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          attributes?: OtlpKeyValue[];
        }[];
      }[];
    }[];
  };
  return req.resourceSpans.flatMap((rs) => {
    const service = attrs(rs.resource?.attributes)['service.name'];
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        service: typeof service === 'string' ? service : undefined,
        name: s.name,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId === '' ? undefined : s.parentSpanId,
        attributes: attrs(s.attributes),
      })),
    );
  });
}
