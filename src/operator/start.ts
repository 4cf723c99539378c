import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { RunOptions } from './options.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import { EventRecorder } from '../runtime/events.ts';
import { KubeClient } from '../runtime/kube/client.ts';
import { loadKubeconfig } from '../runtime/kube/kubeconfigLoad.ts';
import { createLogger } from '../runtime/logger.ts';
import { Manager, type ManagerExit } from '../runtime/manager.ts';
import { Metrics } from '../runtime/metrics.ts';
import type { LeaseTiming } from '../runtime/leaderElection.ts';
import type { KindPlumbing } from '../kinds/module.ts';
import { createAwsClients } from '../providers/aws/clients.ts';
import { GatewayApiFrontEnd } from '../gatewayapi/frontEnd.ts';
import { controllerSettingsOf } from '../runtime/settings.ts';
import { startTracing } from '../runtime/tracing.ts';
import { AwsAccounts, roleSessionName } from '../tenancy/accounts.ts';
import { teamsMarkerOf, TenantDirectory } from '../tenancy/directory.ts';

/** A running operator process's handle. */
export interface RunningOperator {
  readonly manager: Manager;
  readonly logger: Logger;
  /** Resolves when the manager stops (graceful stop or lost leadership). */
  readonly done: Promise<ManagerExit>;
}

/**
 * Wires the operator: logger, Kubernetes client, metrics, events, the
 * controllers of the configured kinds, the Gateway API front end (when the cluster serves the
 * Gateway API and `--gateway-api` is not off), leader election and the probe server; stops
 * gracefully on SIGTERM/SIGINT (stop intake, finish in-flight reconciles
 * within the deadline, release the Lease). The caller decides the exit code.
 */
export function startOperator(
  options: RunOptions,
  extra: { readonly leaseTiming?: LeaseTiming; readonly clock?: Clock } = {},
): RunningOperator {
  const logger = createLogger({ level: options.logLevel, format: options.logFormat });
  const clock = extra.clock ?? realClock;
  const client = new KubeClient(loadKubeconfig(options.kubeconfig), { timeoutMs: options.kubeTimeoutMs });
  const metrics = new Metrics();
  client.observe((method, _path, code) => metrics.kubeRequests.inc({ verb: method, code: String(code) }));
  const identity = `${process.env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
  const events = new EventRecorder({
    client,
    clock,
    logger,
    controller: 'skylift.dev/operator',
    instance: identity,
    onRecorded: (spec, outcome) => metrics.events.inc({ reason: spec.reason, outcome }),
  });
  const awsOptions = { clock, metrics, requestTimeoutMs: options.awsTimeoutMs };
  const aws = createAwsClients({ ...awsOptions, region: options.region });
  // Which TeamPolicy serves each namespace, and the AWS clients of each policy's identity.
  const tenants = new TenantDirectory({
    client,
    clock,
    logger: logger.child({ component: 'tenancy' }),
    events,
    // Several installations in one cluster: each honours only the TeamPolicies this selects.
    policySelector: options.teamPolicySelector,
    policyRequired: options.teamPolicyRequired,
    // Once a policy has been seen, recorded beside the leader-election Lease: fails closed for good.
    teamsMarker: teamsMarkerOf(options),
  });
  // Every AssumeRole outcome shows on its policy's status (and a failure as an Event).
  // One role session per role and external ID (named after the cluster ID, for CloudTrail), one set of
  // clients per role and region, one scope (budgets, caches, batchers) per account and region.
  const accounts = new AwsAccounts({
    own: aws,
    clientOptions: awsOptions,
    reports: tenants,
    sessionName: roleSessionName(options.clusterId),
    defaultBudget: options.awsRequestsPerSecond,
  });
  // A policy deleted, or moved to another role or region: its sessions, clients and caches go.
  tenants.onChange(() => accounts.follow(tenants.listPolicies()));
  const plumbing: KindPlumbing = {
    client,
    clock,
    logger,
    metrics,
    events,
    aws,
    tenants,
    accounts,
    settings: controllerSettingsOf(options),
  };
  const manager = new Manager({
    client,
    clock,
    logger,
    metrics,
    identity,
    probeAddress: options.probeAddress,
    shutdownDeadlineMs: options.shutdownDeadlineMs,
    leaderElection: options.leaderElection
      ? {
          namespace: options.leaderElectionNamespace,
          name: options.leaderElectionId,
          ...(extra.leaseTiming !== undefined ? { timing: extra.leaseTiming } : {}),
        }
      : undefined,
  });
  manager.add(tenants);
  for (const kind of options.kinds) manager.add(kind.controller(plumbing));
  // The Gateway API front end: decides at start whether the cluster serves the Gateway API, and
  // then starts the kinds' controllers of its objects.
  const gatewayControllers =
    options.gatewayApi === 'off' ? [] : options.kinds.flatMap((kind) => kind.gatewayApi?.(plumbing) ?? []);
  manager.add(
    new GatewayApiFrontEnd({
      client,
      clock,
      logger,
      metrics,
      mode: options.gatewayApi,
      controllers: gatewayControllers,
    }),
  );
  let stopRequested = false;
  const onSignal = (sig: NodeJS.Signals): void => {
    logger.info({ signal: sig }, 'shutting down');
    stopRequested = true;
    manager.stop();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  logger.info(
    {
      identity,
      region: options.region,
      namespaces: options.namespaces,
      leaderElection: options.leaderElection,
    },
    'starting skylift',
  );
  // Tracing (off unless OTEL_EXPORTER_OTLP_ENDPOINT is set) is up before the
  // first reconcile, and flushed after the last one.
  const tracing = startTracing({ instanceId: identity }).catch((err: unknown) => {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'tracing not started');
    return undefined;
  });
  const done = tracing.then(async (t) => {
    if (t?.enabled === true) logger.info('tracing enabled: exporting spans over OTLP');
    try {
      return stopRequested ? 'stopped' : await manager.run();
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      aws.destroy();
      accounts.destroy();
      await t?.shutdown();
    }
  });
  return { manager, logger, done };
}
