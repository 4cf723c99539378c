// The OpenTelemetry SDK half of tracing, imported by tracing.ts only when
// tracing is turned on, so a process without an OTLP endpoint never loads it.
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  detectResources,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';

/** Options for {@link createTracing}. */
export interface SdkOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Export synchronously to this exporter instead of batching to OTLP over HTTP. */
  readonly exporter?: SpanExporter;
  readonly serviceVersion?: string;
  readonly instanceId?: string;
}

/**
 * Builds (without registering) a tracer provider and an AsyncLocalStorage
 * context manager. Resource: `service.name=skylift`, version and instance id,
 * overridden by OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. The OTLP
 * exporter reads its own OTEL_EXPORTER_OTLP_* variables (endpoint, headers,
 * certificates, timeout); the batch processor takes the standard OTEL_BSP_*
 * variables.
 */
export function createTracing(opts: SdkOptions): {
  provider: TracerProvider;
  contextManager: AsyncLocalStorageContextManager;
} {
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'skylift',
    ...(opts.serviceVersion !== undefined ? { [ATTR_SERVICE_VERSION]: opts.serviceVersion } : {}),
    ...(opts.instanceId !== undefined ? { [ATTR_SERVICE_INSTANCE_ID]: opts.instanceId } : {}),
  }).merge(detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }));
  const processor =
    opts.exporter !== undefined
      ? new SimpleSpanProcessor({ exporter: opts.exporter })
      : new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptionsFromEnv(opts.env) });
  const provider = new TracerProvider({
    resource,
    sampler: samplerFromEnv(opts.env),
    spanProcessors: [processor],
  });
  return { provider, contextManager: new AsyncLocalStorageContextManager().enable() };
}

/**
 * The sampler OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG name (the
 * standard values); default parent-based always-on. Throws on an unknown
 * sampler or a ratio outside [0, 1], so a typo is not silently ignored.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  const ratio = (): number => {
    const text = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
    const r = text === '' ? 1 : Number(text);
    if (!Number.isFinite(r) || r < 0 || r > 1)
      throw new Error(`OTEL_TRACES_SAMPLER_ARG: want a ratio from 0 to 1, got ${JSON.stringify(text)}`);
    return r;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      throw new Error(
        `OTEL_TRACES_SAMPLER: unknown sampler ${JSON.stringify(name)} (want always_on, always_off, traceidratio or parentbased_*)`,
      );
  }
}

/**
 * The batch span processor settings OTEL_BSP_SCHEDULE_DELAY,
 * OTEL_BSP_EXPORT_TIMEOUT (milliseconds), OTEL_BSP_MAX_QUEUE_SIZE and
 * OTEL_BSP_MAX_EXPORT_BATCH_SIZE name; unset ones keep the SDK's defaults.
 * Throws on a value that is not a positive integer. Pure.
 */
export function batchOptionsFromEnv(env: NodeJS.ProcessEnv): {
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
} {
  const read = (name: string): number | undefined => {
    const text = env[name]?.trim();
    if (text === undefined || text === '') return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`${name}: want a positive integer, got ${JSON.stringify(text)}`);
    return n;
  };
  const entries = {
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}
