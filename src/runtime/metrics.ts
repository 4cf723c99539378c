import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueMetricsSink } from './workqueue.ts';

/** Outcome label of controller_runtime_reconcile_total, as controller-runtime uses it. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * Every metric the operator exports, on a registry of its own (so several
 * managers can live in one test process). Names follow controller-runtime and
 * client-go where they fit; Skylift's own start with `skylift_`.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueLatency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'] as const,
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60, 300],
    registers: [this.registry],
  });
  readonly queueWork = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name'] as const,
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60],
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help: 'Whether this instance is the leader (1) or not (0)',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly awsCalls = new Counter({
    name: 'skylift_aws_api_calls_total',
    help: "AWS API calls by service, operation, outcome (success, throttled, retryable, terminal, error) and account (an assumed role's 12-digit account, or own)",
    labelNames: ['service', 'operation', 'outcome', 'account'] as const,
    registers: [this.registry],
  });
  readonly awsThrottles = new Counter({
    name: 'skylift_aws_throttles_total',
    help: "AWS throttling responses by service and account (an assumed role's, or own)",
    labelNames: ['service', 'account'] as const,
    registers: [this.registry],
  });
  readonly awsRateLimit = new Gauge({
    name: 'skylift_aws_client_rate_limit',
    help: 'Current client-side request rate limit per AWS service and account (requests/s)',
    labelNames: ['service', 'account'] as const,
    registers: [this.registry],
  });
  readonly driftCorrections = new Counter({
    name: 'skylift_drift_corrections_total',
    help: 'AWS resources changed or deleted outside Skylift and put back',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  /** Sources for skylift_managed_resources, read at scrape time (controllers register their caches). */
  readonly managedSources: (() => { kind: string; ready: string; count: number }[])[] = [];
  readonly managedResources: Gauge<'kind' | 'ready'> = new Gauge({
    name: 'skylift_managed_resources',
    help: 'Managed resources by kind and Ready condition status (True, False, Unknown)',
    labelNames: ['kind', 'ready'] as const,
    registers: [this.registry],
    collect: () => {
      this.managedResources.reset();
      // Two controllers may serve one kind (MyIngressGroups: the kind's and Gateways'): summed.
      const sums = new Map<string, { kind: string; ready: string; count: number }>();
      for (const source of this.managedSources)
        for (const { kind, ready, count } of source()) {
          const at = sums.get(`${kind}\u0000${ready}`);
          if (at !== undefined) at.count += count;
          else sums.set(`${kind}\u0000${ready}`, { kind, ready, count });
        }
      for (const { kind, ready, count } of sums.values()) this.managedResources.set({ kind, ready }, count);
    },
  });
  /** Sources for skylift_oldest_not_ready_seconds, read at scrape time (one per controller). */
  readonly notReadySources: (() => { kind: string; seconds: number })[] = [];
  readonly oldestNotReady: Gauge<'kind'> = new Gauge({
    name: 'skylift_oldest_not_ready_seconds',
    help: 'How long the managed resource of this kind that has waited longest has not been Ready (0 when all are Ready)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => {
      this.oldestNotReady.reset();
      // The oldest across the controllers of one kind.
      const oldest = new Map<string, number>();
      for (const source of this.notReadySources) {
        const { kind, seconds } = source();
        oldest.set(kind, Math.max(oldest.get(kind) ?? 0, seconds));
      }
      for (const [kind, seconds] of oldest) this.oldestNotReady.set({ kind }, seconds);
    },
  });
  readonly events = new Counter({
    name: 'skylift_events_total',
    help: 'Kubernetes Events by reason and outcome (created, series, suppressed, dropped, failed)',
    labelNames: ['reason', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'skylift_watch_restarts_total',
    help: 'Watch restarts by resource and reason (error, gone, stalled)',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });
  readonly route53Batches = new Counter({
    name: 'skylift_route53_change_batches_total',
    help: 'ChangeResourceRecordSets calls by outcome (applied, throttled, error, split)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly route53BatchSize = new Histogram({
    name: 'skylift_route53_change_batch_size',
    help: 'Changes per applied ChangeResourceRecordSets call',
    buckets: [1, 2, 5, 10, 50, 100, 250, 500, 1000],
    registers: [this.registry],
  });
  readonly kubeRequests = new Counter({
    name: 'skylift_kube_api_requests_total',
    help: 'Kubernetes API requests by verb and status code',
    labelNames: ['verb', 'code'] as const,
    registers: [this.registry],
  });

  /** A work-queue sink reporting under `name`. */
  queueSink(name: string): QueueMetricsSink {
    return {
      depth: (n) => this.queueDepth.set({ name }, n),
      added: () => this.queueAdds.inc({ name }),
      queueLatency: (s) => this.queueLatency.observe({ name }, s),
      workDuration: (s) => this.queueWork.observe({ name }, s),
      retried: () => this.queueRetries.inc({ name }),
    };
  }
}
