// OpenTelemetry tracing, off unless an OTLP endpoint is configured. Only the
// tiny @opentelemetry/api is loaded up front; the SDK and the exporter are
// imported when tracing is turned on, and when it is off every hook below is
// a single `undefined` check.
import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';

/** Span attribute keys Skylift writes (documented in docs/observability.md). */
export const SpanAttr = {
  kind: 'skylift.kind',
  namespace: 'k8s.namespace.name',
  name: 'skylift.name',
  reconcileId: 'skylift.reconcile_id',
  result: 'skylift.result',
  rpcSystem: 'rpc.system',
  rpcService: 'rpc.service',
  rpcMethod: 'rpc.method',
  awsRegion: 'aws.region',
  outcome: 'skylift.aws.outcome',
  httpStatus: 'http.response.status_code',
  errorCode: 'aws.error.code',
  requestId: 'aws.request_id',
} as const;

/** The instrumentation scope name of every Skylift span. */
export const tracerName = 'skylift';

/** The running tracer; undefined while tracing is off (the only state the hooks read). */
let active: Tracer | undefined;

/**
 * Whether `env` asks for tracing: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`) is
 * set and `OTEL_SDK_DISABLED` is not `true`. Pure.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const set = (v: string | undefined): boolean => v !== undefined && v.trim() !== '';
  return set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** True while a tracer provider started by {@link startTracing} is registered. */
export function tracingActive(): boolean {
  return active !== undefined;
}

/** Options for {@link startTracing}. */
export interface TracingOptions {
  /** Where OTEL_* settings are read from (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** `service.version` resource attribute. */
  readonly serviceVersion?: string;
  /** `service.instance.id` resource attribute (the replica's identity). */
  readonly instanceId?: string;
  /**
   * Export every span at once to this exporter instead of OTLP, whatever the
   * environment says (tests use the SDK's InMemorySpanExporter).
   */
  readonly exporter?: SpanExporter;
}

/** A started (or disabled) tracing setup. */
export interface Tracing {
  readonly enabled: boolean;
  /** Flushes pending spans and unregisters the provider; idempotent, never throws. */
  shutdown(): Promise<void>;
}

const disabled: Tracing = { enabled: false, shutdown: () => Promise.resolve() };

/**
 * Turns tracing on when {@link tracingRequested} (or an exporter is given):
 * registers a tracer provider (OTLP over HTTP, batched) and an
 * AsyncLocalStorage context manager globally, so spans started inside a
 * reconcile span become its children across awaits. Otherwise registers
 * nothing and returns a disabled handle. Throws if tracing is already on in
 * this process.
 */
export async function startTracing(opts: TracingOptions = {}): Promise<Tracing> {
  const env = opts.env ?? process.env;
  if (opts.exporter === undefined && !tracingRequested(env)) return disabled;
  if (active !== undefined) throw new Error('tracing is already started in this process');
  const sdk = await import('./tracingSdk.ts');
  const { provider, contextManager } = sdk.createTracing({
    env,
    ...(opts.exporter !== undefined ? { exporter: opts.exporter } : {}),
    ...(opts.serviceVersion !== undefined ? { serviceVersion: opts.serviceVersion } : {}),
    ...(opts.instanceId !== undefined ? { instanceId: opts.instanceId } : {}),
  });
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer(tracerName, opts.serviceVersion);
  active = tracer;
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown() {
      stopped ??= (async () => {
        if (active === tracer) active = undefined;
        try {
          await provider.shutdown();
        } catch {
          // An unreachable collector must not turn a clean stop into a failure.
        }
        trace.disable();
        context.disable();
      })();
      return stopped;
    },
  };
}

/** What a reconcile reports to its span before it ends. */
export interface ReconcileSpan {
  /** The span's trace id (for log lines); undefined when tracing is off. */
  readonly traceId: string | undefined;
  /** Records the controller-runtime result label; `error` marks the span as failed. */
  record(result: string, error?: string): void;
}

/** Identifies the object a reconcile span is about. */
export interface ReconcileSpanTarget {
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly reconcileId: string;
}

const noReconcileSpan: ReconcileSpan = { traceId: undefined, record: () => undefined };

/**
 * Runs `fn` inside a span `reconcile <kind>` that is the active context for
 * everything `fn` awaits, so AWS calls made meanwhile become its children.
 * The span ends when `fn` settles. With tracing off, just calls `fn`.
 */
export function inReconcileSpan<R>(
  target: ReconcileSpanTarget,
  fn: (span: ReconcileSpan) => Promise<R>,
): Promise<R> {
  const tracer = active;
  if (tracer === undefined) return fn(noReconcileSpan);
  const attributes = {
    [SpanAttr.kind]: target.kind,
    [SpanAttr.name]: target.name,
    [SpanAttr.reconcileId]: target.reconcileId,
    ...(target.namespace !== undefined ? { [SpanAttr.namespace]: target.namespace } : {}),
  };
  return tracer.startActiveSpan(
    `reconcile ${target.kind}`,
    { kind: SpanKind.INTERNAL, attributes },
    async (span) => {
      try {
        return await fn({
          traceId: span.spanContext().traceId,
          record(result, error) {
            span.setAttribute(SpanAttr.result, result);
            if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
          },
        });
      } finally {
        span.end();
      }
    },
  );
}

/** How one AWS HTTP attempt ended, for its span. */
export interface AwsCallResult {
  /** success, throttled, retryable, terminal or error (as skylift_aws_api_calls_total). */
  readonly outcome: string;
  readonly statusCode?: number | undefined;
  /** The AWS error code (e.g. Throttling, InvalidChangeBatch); absent on success. */
  readonly errorCode?: string | undefined;
  readonly requestId?: string | undefined;
}

/** An open span for one AWS HTTP attempt. */
export interface AwsCallSpan {
  end(result: AwsCallResult): void;
}

/**
 * Starts a client span `<service>/<operation>` for one AWS HTTP attempt, as a
 * child of the active span (the reconcile that made the call). Returns
 * undefined when tracing is off.
 */
export function startAwsCallSpan(
  service: string,
  operation: string,
  region: string,
): AwsCallSpan | undefined {
  const tracer = active;
  if (tracer === undefined) return undefined;
  const span = tracer.startSpan(`${service}/${operation}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [SpanAttr.rpcSystem]: 'aws-api',
      [SpanAttr.rpcService]: service,
      [SpanAttr.rpcMethod]: operation,
      [SpanAttr.awsRegion]: region,
    },
  });
  return {
    end(r) {
      span.setAttribute(SpanAttr.outcome, r.outcome);
      if (r.statusCode !== undefined) span.setAttribute(SpanAttr.httpStatus, r.statusCode);
      if (r.requestId !== undefined) span.setAttribute(SpanAttr.requestId, r.requestId);
      if (r.errorCode !== undefined) {
        span.setAttribute(SpanAttr.errorCode, r.errorCode);
        span.setStatus({ code: SpanStatusCode.ERROR, message: r.errorCode });
      }
      span.end();
    },
  };
}
