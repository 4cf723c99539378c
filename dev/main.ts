// `skylift dev` (and `make dev`): the embedded default. Starts what is not
// given (a local control plane, moto), prepares it like a user's account,
// runs the operator in this process, applies the sample application and
// prints it becoming Ready, until Ctrl-C; then stops everything it started.
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  installCrds,
  installedGatewayApiVersion,
  installGatewayApiCrds,
  installTargetHealthGate,
} from './installCrds.ts';
import { parseRunOptions } from '../src/operator/options.ts';
import { kinds } from '../src/kinds/registry.ts';
import { startOperator } from '../src/operator/start.ts';
import { createAwsClients } from '../src/providers/aws/clients.ts';
import { realClock } from '../src/runtime/clock.ts';
import { KubeClient } from '../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../src/runtime/kube/kubeconfigLoad.ts';
import { createLogger } from '../src/runtime/logger.ts';
import { Metrics } from '../src/runtime/metrics.ts';
import { ensureElbSubnets, ensureHostedZone } from './awsAccount.ts';
import { parseDevArgs, devUsage, type DevArgs } from './args.ts';
import { startDevStack, type DevStack } from './devStack.ts';
import { emulatorCredentials, emulatorEnv } from './emulator.ts';
import { pinnedVersions, repoRoot } from './paths.ts';
import { freePort } from './ports.ts';
import { formatSampleSummary, readinessKey, ReadinessReporter } from './progress.ts';
import { reapStaleProcesses } from './reaper.ts';
import { applyTeams, teamsFile, teamsOutcome } from './teams.ts';
import {
  applySamples,
  loadSamples,
  sampleFile,
  sampleWorkloadFile,
  skyliftTypes,
  standInEndpointSlices,
} from './samples.ts';
import {
  formatSampleCurl,
  formatSampleTargets,
  waitForSampleEndpoint,
  waitForSampleTargets,
} from './sampleTargets.ts';

/** The hosted zone the samples' DNSRecords live in. */
const sampleZone = 'example.com';

/**
 * Runs `skylift dev` with `argv` (the words after `dev`); returns the exit code: 0 after Ctrl-C (SIGINT/SIGTERM) with
 * everything stopped, 1 when the operator stopped by itself. Throws
 * UsageError for bad flags. Whatever it started is stopped before it returns.
 */
export async function runDev(argv: readonly string[]): Promise<number> {
  const args = parseDevArgs(argv);
  if (args.help) {
    process.stdout.write(devUsage);
    return 0;
  }
  const say = (text: string): void => {
    process.stdout.write(`${text}\n`);
  };
  // Listening keeps Ctrl-C from killing us mid-start, so what was started still gets stopped.
  const interrupted = onceInterrupted();
  const dir = process.env.SKYLIFT_DEV_DIR ?? join(repoRoot, '.skylift', 'dev');
  const reaped = await reapStaleProcesses(dir);
  if (reaped > 0) say(`Stopped ${reaped} processes left over from an earlier \`skylift dev\`.`);
  const started = Date.now();
  say(startingLine(args));
  const stack = await startDevStack({
    dir,
    kubeconfig: args.kubeconfig,
    awsEndpoint: args.awsEndpoint,
    node: args.node,
    log: (line) => {
      say(`  ${line}`);
    },
  });
  let reporter: ReadinessReporter | undefined;
  try {
    if (interrupted.happened()) return 0;
    pointAwsAt(stack, args);
    const options = parseRunOptions(
      [
        '--region',
        process.env.AWS_REGION ?? emulatorCredentials.region,
        '--leader-elect=false',
        // Its teams marker (docs/teams.md) in a namespace every cluster has.
        '--leader-election-namespace',
        'default',
        '--probe-address',
        `127.0.0.1:${await freePort()}`,
        '--log-format',
        'text',
        '--log-level',
        'warn',
        ...kinds.flatMap((k) => k.devFlags),
        ...args.runArgs,
        '--kubeconfig',
        stack.kubeconfig,
      ],
      process.env,
    );
    const client = new KubeClient(loadKubeconfig(stack.kubeconfig));
    await installCrds(client);
    const gatewayApi = await installGatewayApi(client);
    // As the chart does: Pods of namespaces labelled skylift.dev/target-health-gate=enabled get the gate.
    await installTargetHealthGate(client);
    const account = await prepareAccount(stack.awsEndpoint, options.region);
    say(
      banner(
        stack,
        account,
        gatewayApi,
        dir,
        args.operator ? options.probeAddress : undefined,
        Date.now() - started,
      ),
    );
    if (interrupted.happened()) return 0;

    const operator = args.operator ? startOperator(options) : undefined;
    if (operator !== undefined) await writeFile(markerFile(dir), `${process.pid}\n`);
    else say('Not running the operator (--no-operator): start it with `make run` in another shell.');
    // Never rejects: an operator that fails is reported below like one that stops.
    const operatorDone: Promise<unknown> =
      operator?.done.catch((err: unknown) => err) ?? new Promise(() => undefined);
    reporter = new ReadinessReporter({
      client,
      clock: realClock,
      logger: createLogger({ level: 'warn', format: 'text' }),
      types: skyliftTypes,
      namespaces: options.namespaces,
      defaultNamespace: args.namespace,
      write: say,
    });
    reporter.start();
    // The teams' policies go first: once any TeamPolicy exists, the samples' namespace needs its own.
    if (args.teams) await showTeams(client, args, stack, options.region, say);
    if (args.samples) void showSamples(client, reporter, args, stack, say);
    else say('Skipped the samples (--no-samples). Apply your own, e.g. kubectl apply -f examples/app.yaml');
    const first = await Promise.race([
      interrupted.promise.then(() => 'interrupted' as const),
      operatorDone.then(() => 'operator-stopped' as const),
    ]);
    say('\nStopping… (Ctrl-C again to kill everything at once)');
    if (args.samples && (stack.controlPlane === undefined || args.awsEndpoint !== undefined)) {
      // Not our throwaway stack: the samples (and what they created in AWS) outlive this process.
      say(
        `The samples stay in namespace ${args.namespace}; delete them while an operator runs: ` +
          `kubectl delete -n ${args.namespace} -f ${relative(process.cwd(), sampleFile)}`,
      );
    }
    if (first === 'interrupted') {
      // startOperator's own signal handler is already draining the manager.
      if (operator !== undefined) await operator.done.catch(() => undefined);
      return 0;
    }
    const why = await operatorDone;
    say(`The operator stopped by itself: ${why instanceof Error ? why.message : String(why)}`);
    return 1;
  } finally {
    await reporter?.stop();
    await rm(markerFile(dir), { force: true });
    await stack.stop();
    interrupted.dispose();
    say('Stopped.');
  }
}

/** While it exists and names a live process, `make run` refuses: that `skylift dev` already runs the operator. */
function markerFile(dir: string): string {
  return join(dir, 'operator.in-process');
}

/** Applies the samples, prints that, and prints the summary once all are Ready. Never throws: failures are printed. */
async function showSamples(
  client: KubeClient,
  reporter: ReadinessReporter,
  args: DevArgs,
  stack: DevStack,
  say: (text: string) => void,
): Promise<void> {
  try {
    const applied = Date.now();
    const samples = await loadSamples();
    await applySamples(client, args.namespace, samples);
    say(
      `Applied ${relative(process.cwd(), sampleFile)} to namespace ${args.namespace}: ${samples.map((s) => `${s.kind ?? ''}/${s.metadata.name}`).join(', ')}`,
    );
    if (stack.nodeCluster !== undefined) {
      // A real node: the sample Service's Pods run, and the cluster makes their EndpointSlices.
      const workload = await loadSamples(sampleWorkloadFile);
      await applySamples(client, args.namespace, workload);
      say(
        `Applied ${relative(process.cwd(), sampleWorkloadFile)}: ${workload.map((s) => `${s.kind ?? ''}/${s.metadata.name}`).join(', ')} (Pods on node ${stack.nodeCluster.nodeName})`,
      );
    } else if (stack.controlPlane !== undefined) {
      // No kubelet here: stand in for the Pods behind the sample Service.
      await applySamples(client, args.namespace, standInEndpointSlices(samples, args.namespace));
    }
    const keys = samples
      .filter((s) => skyliftTypes.some((t) => t.kind === s.kind))
      .map((s) =>
        readinessKey(s.kind ?? '', { metadata: { name: s.metadata.name, namespace: args.namespace } }),
      );
    const ready = await reporter.whenReady(keys);
    say(formatSampleSummary(ready, Date.now() - applied, args.namespace, skyliftCommand()));
    if (stack.nodeCluster !== undefined) await showSampleTargets(client, stack, args.namespace, say);
  } catch (err) {
    say(`Applying the samples failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Prints the sample MyIngress's targets once they are the sample Deployment's Ready Pods, then a
 * curl line through the ALB data plane once its health checks have found them healthy.
 */
async function showSampleTargets(
  client: KubeClient,
  stack: DevStack,
  namespace: string,
  say: (text: string) => void,
): Promise<void> {
  const aws = createAwsClients({
    region: emulatorCredentials.region,
    clock: realClock,
    metrics: new Metrics(),
    endpoint: stack.awsEndpoint,
  });
  try {
    const targets = await waitForSampleTargets(client, await aws.elbv2(), {
      namespace,
      name: 'shop',
      podSelector: 'app=web',
      timeoutMs: 120_000,
    });
    say(formatSampleTargets('shop', targets));
    if (stack.albDataPlane !== undefined) {
      try {
        const served = await waitForSampleEndpoint(client, stack.albDataPlane, targets, {
          namespace,
          name: 'shop',
          listenerPort: 80,
          timeoutMs: 60_000,
        });
        say(formatSampleCurl('shop', served));
      } catch (err) {
        say(
          `The ALB data plane does not serve MyIngress shop (its log: alb-data-plane.log beside the others): ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  } finally {
    aws.destroy();
  }
}

/**
 * Applies the teams example, prints that, then (in the background) each record's outcome: Ready,
 * or refused with the policy's message. Never throws: failures are printed.
 */
async function showTeams(
  client: KubeClient,
  args: DevArgs,
  stack: DevStack,
  region: string,
  say: (text: string) => void,
): Promise<void> {
  try {
    const objects = await applyTeams(
      client,
      stack.awsEndpoint,
      region,
      args.samples ? args.namespace : undefined,
    );
    say(
      `Applied ${relative(process.cwd(), teamsFile)}: namespaces team-a and team-b, TeamPolicies team-a (account 111111111111) and team-b (account 222222222222)${args.samples ? `, and dev-samples for namespace ${args.namespace}` : ''}; kubectl get teampolicies`,
    );
    void teamsOutcome(client, objects, 120_000)
      .then((lines) => {
        say(['Teams:', ...lines].join('\n'));
      })
      .catch((err: unknown) => {
        say(`The teams example did not settle: ${err instanceof Error ? err.message : String(err)}`);
      });
  } catch (err) {
    say(`Applying the teams example failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Environment for the in-process operator's AWS SDK: the emulator's endpoint and credentials. */
function pointAwsAt(stack: DevStack, args: DevArgs): void {
  if (stack.emulator !== undefined) {
    Object.assign(process.env, emulatorEnv(stack.awsEndpoint));
    return;
  }
  // A given endpoint is an emulator too (moto, LocalStack): any credentials do unless some are set.
  const env = emulatorEnv(args.awsEndpoint ?? stack.awsEndpoint);
  process.env.AWS_ENDPOINT_URL = env.AWS_ENDPOINT_URL;
  for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION'] as const)
    process.env[key] ??= env[key];
}

/** The VPC subnets and hosted zone a user's account would have, in the emulator. */
async function prepareAccount(
  endpoint: string,
  region: string,
): Promise<{ zoneId: string; subnets: string[] }> {
  const aws = createAwsClients({ region, clock: realClock, metrics: new Metrics(), endpoint });
  try {
    return {
      zoneId: await ensureHostedZone(await aws.route53(), sampleZone),
      subnets: await ensureElbSubnets(await aws.ec2(), region),
    };
  } finally {
    aws.destroy();
  }
}

/** What {@link installGatewayApi} did: installed the pinned release, or kept another one the cluster had. */
interface GatewayApiOutcome {
  readonly version: string;
  readonly kept: boolean;
}

/**
 * Installs the Gateway API's standard-channel CRDs of the pinned release (hack/versions.env), unless
 * the cluster has those of another release (a cluster `--kubeconfig` names, not one started here):
 * forcing ours over them could break whatever serves them, so they are left as they are.
 */
async function installGatewayApi(client: KubeClient): Promise<GatewayApiOutcome> {
  const pinned = pinnedVersions().GATEWAY_API_VERSION;
  const found = await installedGatewayApiVersion(client);
  if (found !== undefined && found !== pinned) return { version: found || 'unknown', kept: true };
  await installGatewayApiCrds(client);
  return { version: pinned, kept: false };
}

function startingLine(args: DevArgs): string {
  const parts = [
    args.node
      ? 'kube-apiserver, etcd, kube-controller-manager, kube-scheduler, a node (containerd, kubelet, kube-proxy)'
      : undefined,
    args.kubeconfig === undefined && !args.node ? 'kube-apiserver, etcd, kube-controller-manager' : undefined,
    args.awsEndpoint === undefined ? 'moto' : undefined,
  ].filter((p) => p !== undefined);
  const using = [
    args.kubeconfig !== undefined ? `the cluster in ${args.kubeconfig}` : undefined,
    args.awsEndpoint !== undefined ? `AWS at ${args.awsEndpoint}` : undefined,
  ].filter((p) => p !== undefined);
  return [
    parts.length > 0 ? `Starting ${parts.join(' and ')}…` : undefined,
    using.length > 0 ? `Using ${using.join(' and ')}.` : undefined,
  ]
    .filter((l) => l !== undefined)
    .join('\n');
}

function banner(
  stack: DevStack,
  account: { zoneId: string; subnets: string[] },
  gatewayApi: GatewayApiOutcome,
  dir: string,
  probeAddress: string | undefined,
  elapsedMs: number,
): string {
  const rel = (p: string): string => relative(process.cwd(), p) || p;
  const cp = stack.controlPlane;
  const emu = stack.emulator;
  return [
    `Local stack ready in ${(elapsedMs / 1000).toFixed(1)} s.`,
    '',
    cp !== undefined
      ? `  Kubernetes  ${cp.server}   (admin kubeconfig: ${rel(stack.kubeconfig)})`
      : `  Kubernetes  from ${stack.kubeconfig}`,
    ...(stack.nodeCluster !== undefined
      ? [
          `  Node        ${stack.nodeCluster.nodeName} Ready: containerd, kubelet, kube-proxy in network namespace ${stack.nodeCluster.addresses.netns}; Pods ${stack.nodeCluster.addresses.podCidr}, Services ${stack.nodeCluster.addresses.serviceCidr}`,
        ]
      : []),
    `  AWS         ${stack.awsEndpoint}${emu !== undefined ? ' (moto)' : ''}`,
    ...(cp !== undefined || emu !== undefined ? [`  Logs        ${rel(dir)}/`] : []),
    gatewayApi.kept
      ? `  CRDs        installed from src/kinds; the cluster's Gateway API ${gatewayApi.version} CRDs left as they were`
      : `  CRDs        installed from src/kinds and the Gateway API ${gatewayApi.version} standard channel (kubectl get crd)`,
    `  Route 53    hosted zone ${sampleZone} (${account.zoneId})`,
    `  EC2         subnets ${account.subnets.join(', ')} tagged kubernetes.io/role/elb=1`,
    probeAddress !== undefined
      ? `  Operator    running in this process; metrics http://${probeAddress}/metrics`
      : '  Operator    not started (--no-operator)',
    '',
    'In another shell:',
    `  export KUBECONFIG=${stack.kubeconfig}`,
    ...(stack.awsEnvFile !== undefined ? [`  source ${stack.awsEnvFile}`] : []),
    '  kubectl get skylift -A',
    '',
    'Press Ctrl-C to stop everything.',
    '',
  ].join('\n');
}

/** A latch for the first SIGINT/SIGTERM; a second one exits at once (the exit hook kills the children). */
export function onceInterrupted(): { happened(): boolean; readonly promise: Promise<void>; dispose(): void } {
  const latch = { happened: false };
  let fire: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  const handler = (): void => {
    if (latch.happened) process.exit(130);
    latch.happened = true;
    fire();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    happened: () => latch.happened,
    promise,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/** How a user in this shell runs `skylift`: the clone's bin/skylift (any Node on the PATH), else `skylift`. */
function skyliftCommand(): string {
  const wrapper = join(repoRoot, 'bin', 'skylift');
  if (!existsSync(wrapper)) return 'skylift';
  const rel = relative(process.cwd(), wrapper);
  return rel.startsWith('..') ? wrapper : rel;
}
