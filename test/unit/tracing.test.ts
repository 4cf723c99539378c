// Tracing is off (nothing registered, hooks inert) without an OTLP endpoint;
// on, reconcile spans carry their attributes and spans started inside them,
// across awaits, are their children; shutdown unregisters everything.
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import {
  inReconcileSpan,
  startAwsCallSpan,
  startTracing,
  tracingActive,
  tracingRequested,
  type Tracing,
} from '../../src/runtime/tracing.ts';
import { batchOptionsFromEnv, samplerFromEnv } from '../../src/runtime/tracingSdk.ts';

let started: Tracing | undefined;
afterEach(async () => {
  await started?.shutdown();
  started = undefined;
});

/** The provider behind the API's global proxy (its no-op one unless something registered a provider). */
function globalDelegate(): unknown {
  const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
  return provider.getDelegate?.() ?? provider;
}

describe('tracingRequested', () => {
  it.each([
    { reason: 'nothing set', env: {}, want: false },
    { reason: 'empty endpoint', env: { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, want: false },
    { reason: 'base endpoint', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, want: true },
    {
      reason: 'traces endpoint',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' },
      want: true,
    },
    {
      reason: 'SDK disabled wins',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' },
      want: false,
    },
    {
      reason: 'only a metrics endpoint',
      env: { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318' },
      want: false,
    },
  ])('$reason', ({ env, want }) => {
    expect(tracingRequested(env)).toBe(want);
  });
});

describe('tracing disabled', () => {
  it('registers no provider or context manager and runs reconciles without spans', async () => {
    started = await startTracing({ env: { PATH: '/bin' } });
    expect(started.enabled).toBe(false);
    expect(tracingActive()).toBe(false);
    expect(globalDelegate()).not.toBeInstanceOf(TracerProvider);
    const span = trace.getTracer('probe').startSpan('probe');
    expect(span.isRecording()).toBe(false);
    span.end();

    const seen = await inReconcileSpan(
      { kind: 'DNSRecord', namespace: 'ns', name: 'www', reconcileId: 'r1' },
      async (s) => {
        await Promise.resolve();
        return { traceId: s.traceId, aws: startAwsCallSpan('route53', 'ListHostedZones', 'us-east-1') };
      },
    );
    expect(seen).toEqual({ traceId: undefined, aws: undefined });
    // Without a context manager nothing is propagated, not even a value set explicitly.
    const key = Symbol('k');
    expect(
      context.with(context.active().setValue(key, 1), () => context.active().getValue(key)),
    ).toBeUndefined();
  });
});

describe('tracing enabled', () => {
  it('records a reconcile span with its attributes and AWS-call spans as its children', async () => {
    const exporter = new InMemorySpanExporter();
    started = await startTracing({ exporter, instanceId: 'pod-1' });
    expect(started.enabled).toBe(true);
    expect(tracingActive()).toBe(true);
    expect(globalDelegate()).toBeInstanceOf(TracerProvider);

    const traceId = await inReconcileSpan(
      { kind: 'DNSRecord', namespace: 'ns', name: 'www', reconcileId: 'r1' },
      async (s) => {
        // Across awaits and timers, the AWS-call span must still find its parent.
        await new Promise((r) => setImmediate(r)); // a macrotask boundary, not a wait
        startAwsCallSpan('route53', 'ListHostedZones', 'us-east-1')?.end({
          outcome: 'success',
          statusCode: 200,
          requestId: 'req-1',
        });
        await Promise.resolve();
        startAwsCallSpan('route53', 'ChangeResourceRecordSets', 'us-east-1')?.end({
          outcome: 'throttled',
          statusCode: 400,
          errorCode: 'Throttling',
        });
        s.record('error', 'observe: boom');
        return s.traceId;
      },
    );

    const spans = exporter.getFinishedSpans();
    const reconcile = spans.find((s) => s.name === 'reconcile DNSRecord');
    expect(reconcile?.attributes).toEqual({
      'skylift.kind': 'DNSRecord',
      'k8s.namespace.name': 'ns',
      'skylift.name': 'www',
      'skylift.reconcile_id': 'r1',
      'skylift.result': 'error',
    });
    expect(reconcile?.status).toEqual({ code: 2, message: 'observe: boom' });
    expect(reconcile?.resource.attributes['service.name']).toBe('skylift');
    expect(reconcile?.resource.attributes['service.instance.id']).toBe('pod-1');
    expect(traceId).toBe(reconcile?.spanContext().traceId);

    const calls = spans.filter((s) => s.name.startsWith('route53/'));
    expect(calls.map((s) => s.name)).toEqual(['route53/ListHostedZones', 'route53/ChangeResourceRecordSets']);
    for (const c of calls) {
      expect(c.spanContext().traceId).toBe(reconcile?.spanContext().traceId);
      expect(c.parentSpanContext?.spanId).toBe(reconcile?.spanContext().spanId);
    }
    expect(calls[0]?.attributes).toEqual({
      'rpc.system': 'aws-api',
      'rpc.service': 'route53',
      'rpc.method': 'ListHostedZones',
      'aws.region': 'us-east-1',
      'skylift.aws.outcome': 'success',
      'http.response.status_code': 200,
      'aws.request_id': 'req-1',
    });
    expect(calls[1]?.attributes).toMatchObject({
      'aws.error.code': 'Throttling',
      'skylift.aws.outcome': 'throttled',
    });
    expect(calls[1]?.status.code).toBe(2);
  });

  it('refuses a second start, and shutdown unregisters everything', async () => {
    started = await startTracing({ exporter: new InMemorySpanExporter() });
    await expect(startTracing({ exporter: new InMemorySpanExporter() })).rejects.toThrow(/already started/);
    await started.shutdown();
    expect(tracingActive()).toBe(false);
    expect(globalDelegate()).not.toBeInstanceOf(TracerProvider);
    // And it can start again afterwards (a second operator in the same test process).
    started = await startTracing({ exporter: new InMemorySpanExporter() });
    expect(tracingActive()).toBe(true);
  });

  it('with OTEL_TRACES_SAMPLER=always_off records nothing', async () => {
    const exporter = new InMemorySpanExporter();
    started = await startTracing({ exporter, env: { OTEL_TRACES_SAMPLER: 'always_off' } });
    await inReconcileSpan({ kind: 'DNSRecord', namespace: 'ns', name: 'a', reconcileId: 'r' }, async () => {
      startAwsCallSpan('route53', 'ListHostedZones', 'us-east-1')?.end({ outcome: 'success' });
      return Promise.resolve();
    });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe('samplerFromEnv', () => {
  it.each([
    { env: {}, want: /ParentBased/ },
    {
      env: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' },
      want: /TraceIdRatioBased\{0\.25\}/,
    },
    { env: { OTEL_TRACES_SAMPLER: 'always_on' }, want: /AlwaysOnSampler/ },
  ])('$env', ({ env, want }) => {
    expect(samplerFromEnv(env).toString()).toMatch(want);
  });
  it.each([
    { env: { OTEL_TRACES_SAMPLER: 'sometimes' }, want: /unknown sampler "sometimes"/ },
    { env: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, want: /ratio from 0 to 1/ },
  ])('rejects $env', ({ env, want }) => {
    expect(() => samplerFromEnv(env)).toThrow(want);
  });
});

describe('batchOptionsFromEnv', () => {
  it('reads the OTEL_BSP_* variables that are set and leaves the others to the SDK', () => {
    expect(batchOptionsFromEnv({})).toEqual({});
    expect(
      batchOptionsFromEnv({ OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_QUEUE_SIZE: ' 4096 ' }),
    ).toEqual({
      scheduledDelayMillis: 600_000,
      maxQueueSize: 4096,
    });
  });
  it.each(['0', '-1', '1.5', 'soon'])('rejects OTEL_BSP_EXPORT_TIMEOUT=%s', (v) => {
    expect(() => batchOptionsFromEnv({ OTEL_BSP_EXPORT_TIMEOUT: v })).toThrow(
      /OTEL_BSP_EXPORT_TIMEOUT: want a positive integer/,
    );
  });
});
