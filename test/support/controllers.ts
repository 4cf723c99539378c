// Runs any kind's controller in the test process, wired like `skylift run`
// but talking to AWS at a given endpoint (the fault proxy).
import { pino } from 'pino';
import { parseRunOptions } from '../../src/operator/options.ts';
import { createAwsClients } from '../../src/providers/aws/clients.ts';
import { realClock, type Clock } from '../../src/runtime/clock.ts';
import type { KindPlumbing } from '../../src/kinds/module.ts';
import type { RunnableController } from '../../src/runtime/controller.ts';
import { EventRecorder } from '../../src/runtime/events.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { controllerSettingsOf } from '../../src/runtime/settings.ts';
import { kubeClient } from './kube.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { AwsAccounts, type AwsAccountsOptions } from '../../src/tenancy/accounts.ts';
import type { TenantSource } from '../../src/tenancy/directory.ts';

export interface RunningController {
  readonly controller: RunnableController;
  readonly metrics: Metrics;
  stop(): Promise<void>;
}

/**
 * Overrides of the AwsAccounts a test's controller gets (built like the operator's: its own clients,
 * AssumeRole outcomes reported to `tenants`).
 */
export type AccountsTestOptions = Partial<
  Pick<AwsAccountsOptions, 'retryMs' | 'failureTtlMs' | 'durationSeconds'>
>;

export async function startController(
  factory: (s: KindPlumbing) => RunnableController,
  opts: {
    namespace: string;
    endpoint: string;
    resyncPeriod?: string;
    clock?: Clock;
    /** Deadline of one AWS call attempt (default: the operator's). */
    awsTimeoutMs?: number;
    /** Which TeamPolicy serves a namespace (default: none; every object as without policies). */
    tenants?: TenantSource;
    /** Serve each policy's identity and region through AwsAccounts (default: the own clients for all). */
    accounts?: AccountsTestOptions;
    /** The apiserver to talk to (default: the shared stack's, as the admin). */
    client?: KubeClient;
  },
): Promise<RunningController> {
  const options = parseRunOptions(
    [
      '--namespaces',
      opts.namespace,
      '--resync-period',
      opts.resyncPeriod ?? '10m',
      '--cluster-id',
      'test-cluster',
    ],
    {
      AWS_REGION: 'us-east-1',
    },
  );
  const client = opts.client ?? kubeClient();
  const metrics = new Metrics();
  // As the operator counts them (src/operator/start.ts), so a test can count the controller's writes.
  client.observe((method, _path, code) => metrics.kubeRequests.inc({ verb: method, code: String(code) }));
  const logger = pino({ level: process.env.SKYLIFT_TEST_LOG_LEVEL ?? 'silent' });
  const events = new EventRecorder({
    client,
    clock: realClock,
    logger,
    controller: 'skylift.dev/test',
    instance: 'test',
    // As the operator counts them, so a test can tell an Event recorded twice (the recorder folds
    // repeats into a series the API shows only once a minute) from one recorded once.
    onRecorded: (spec, outcome) => metrics.events.inc({ reason: spec.reason, outcome }),
  });
  const awsOptions = {
    clock: realClock,
    metrics,
    endpoint: opts.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    ...(opts.awsTimeoutMs !== undefined ? { requestTimeoutMs: opts.awsTimeoutMs } : {}),
  };
  const aws = createAwsClients({ ...awsOptions, region: 'us-east-1' });
  const accounts =
    opts.accounts !== undefined
      ? new AwsAccounts({
          own: aws,
          clientOptions: awsOptions,
          ...(opts.tenants !== undefined ? { reports: opts.tenants } : {}),
          ...opts.accounts,
        })
      : undefined;
  const controller = factory({
    client,
    clock: opts.clock ?? realClock,
    logger,
    metrics,
    events,
    aws,
    ...(opts.tenants !== undefined ? { tenants: opts.tenants } : {}),
    ...(accounts !== undefined ? { accounts } : {}),
    settings: controllerSettingsOf(options),
  });
  await controller.start();
  return {
    controller,
    metrics,
    stop: async () => {
      await controller.stop(5000);
      accounts?.destroy();
      aws.destroy();
    },
  };
}
