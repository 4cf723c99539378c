// `make conformance`: the Gateway API conformance suite (hack/gatewayapi/, compiled by
// hack/install-gateway-api.sh) against Skylift on a local node cluster (issue 30). Starts the
// node cluster, moto and the ALB data plane as `make dev DEV_FLAGS=--node` does, installs
// Skylift's and the Gateway API's CRDs, runs the operator in this process, applies the
// GatewayClass `skylift`, and runs the suite's GATEWAY-HTTP profile with a dial map that sends
// its requests to the data plane (dev/conformanceDialMap.ts). A passing run's report is kept in
// conformance/reports/. docs/development.md, "Running the conformance suite".
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { skyliftGatewayClassName, skyliftGatewayControllerName } from '../src/apis/gatewayApi.ts';
import { kinds } from '../src/kinds/registry.ts';
import { parseRunOptions } from '../src/operator/options.ts';
import { startOperator, type RunningOperator } from '../src/operator/start.ts';
import { createAwsClients } from '../src/providers/aws/clients.ts';
import { realClock } from '../src/runtime/clock.ts';
import { KubeClient } from '../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../src/runtime/kube/kubeconfigLoad.ts';
import { Metrics } from '../src/runtime/metrics.ts';
import { ensureElbSubnets } from './awsAccount.ts';
import { dialMapEnv, dialMapOf, writeDialMap } from './conformanceDialMap.ts';
import { AwsFaultProxy } from './awsFaultProxy.ts';
import { acmDeleteInUseAsAws, acmReimportAsAws } from './acmFidelity.ts';
import { startDevStack, type DevStack } from './devStack.ts';
import { emulatorCredentials, emulatorEnv } from './emulator.ts';
import { installCrds, installGatewayApiCrds } from './installCrds.ts';
import { onceInterrupted } from './main.ts';
import { nodeClusterUnavailable } from './nodeCluster.ts';
import { pinnedVersions, repoRoot, toolPaths } from './paths.ts';
import { freePort } from './ports.ts';
import { reapStaleProcesses } from './reaper.ts';
import { waitFor } from './wait.ts';

/** The conformance profile `make conformance` runs: the core HTTP profile of issue 30's proof. */
export const conformanceProfile = 'GATEWAY-HTTP';

/** Skylift as the report names it (the suite's -organization, -project, -url, -contact). */
export const skyliftImplementation = {
  organization: 'skylift-dev',
  project: 'skylift',
  url: 'https://github.com/skylift-dev/skylift',
  contact: 'https://github.com/skylift-dev/skylift/issues',
} as const;

/** How long the suite may run (`-test.timeout`, a Go duration) unless `--timeout` says otherwise. */
export const defaultSuiteTimeout = '30m';

/**
 * How long the runner waits for the GatewayClass to be Accepted before it starts the suite. The
 * suite reads the class's `status.supportedFeatures` once, when it starts (with no
 * `-supported-features`, which features to test comes from there), so it must not start before the
 * controller has written them. The operator runs in this process and is started first: a
 * controller that serves the class accepts it within seconds.
 */
export const gatewayClassAcceptTimeoutMs = 30_000;

/** What `dev/conformance.ts` takes: its own `--timeout`; everything else goes to the suite. */
export interface ConformanceArgs {
  /** `-test.timeout` (a Go duration, e.g. 30m). */
  readonly timeout: string;
  /** More flags for the suite, after Skylift's own (a repeated flag's last value wins). */
  readonly suiteArgs: readonly string[];
}

/** Parses the runner's argv. Pure; throws on `--timeout` without a Go duration. */
export function parseConformanceArgs(argv: readonly string[]): ConformanceArgs {
  let timeout = defaultSuiteTimeout;
  const suiteArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const inline = /^--timeout=(.*)$/.exec(a);
    if (a === '--timeout' || inline !== null) {
      const value = inline !== null ? inline[1] : argv[++i];
      if (value === undefined || !/^(\d+(ns|us|ms|s|m|h))+$/.test(value))
        throw new Error(`--timeout needs a Go duration such as 30m or 1h30m, got ${value ?? 'nothing'}`);
      timeout = value;
    } else suiteArgs.push(a);
  }
  return { timeout, suiteArgs };
}

/**
 * Where a passing run's report is kept in the repository:
 * `conformance/reports/<Gateway API version>/skylift-v<Skylift version>-<profile>-report.yaml`.
 */
export function keptReportPath(gatewayApiVersion: string, skyliftVersion: string, root = repoRoot): string {
  return join(
    root,
    'conformance',
    'reports',
    gatewayApiVersion,
    `skylift-v${skyliftVersion}-${conformanceProfile.toLowerCase()}-report.yaml`,
  );
}

/** What the suite is run with, besides {@link ConformanceArgs}. */
export interface SuiteInvocation {
  readonly kubeconfig: string;
  /** Where the suite writes its report (the run directory; kept only when it passes). */
  readonly reportOutput: string;
  /** Skylift's version, for the report (`-version v…`). */
  readonly skyliftVersion: string;
}

/**
 * The conformance binary's command line: TestConformance, verbose, the timeout; the cluster;
 * GatewayClass {@link skyliftGatewayClassName}; the {@link conformanceProfile} profile (its core
 * features, plus the extended ones the GatewayClass lists in `status.supportedFeatures`); the
 * report with Skylift's implementation fields; then the user's flags. The suite's own timeouts
 * stay upstream's. Pure.
 */
/**
 * The core tests Skylift skips, each with why (docs/gateway.md, "Conformance"): what an ALB cannot
 * do, or Skylift refuses on purpose. The report lists them as skipped (the profile `partial`).
 */
export const skippedConformanceTests: Readonly<Record<string, string>> = {
  HTTPRouteRequestHeaderModifier:
    'an Application Load Balancer cannot add, set or remove request headers; Skylift refuses the filter (UnsupportedValue)',
  HTTPRouteServiceTypes:
    'its hand-made EndpointSlices name no manager: Skylift registers only addresses from slices the EndpointSlice controller (or a manager a TeamPolicy trusts) made',
  // The class lists GRPCRoute, so the suite runs its GRPCRoute tests too; every one sends cleartext
  // gRPC (h2c) to an HTTP listener, which an ALB cannot serve (test/integration/gatewayGrpc.test.ts
  // proves GRPCRoutes on HTTPS listeners instead).
  ...Object.fromEntries(
    [
      'GRPCExactMethodMatching',
      'GRPCRouteHeaderMatching',
      'GRPCRouteListenerHostnameMatching',
      'GRPCRouteNamedRule',
      'GRPCRouteWeight',
    ].map((t) => [
      t,
      'it sends cleartext gRPC (h2c) to an HTTP listener: an Application Load Balancer serves gRPC on HTTPS listeners only, so Skylift attaches GRPCRoutes there (NotAllowedByListeners on HTTP)',
    ]),
  ),
};

export function suiteCommandLine(args: ConformanceArgs, run: SuiteInvocation): string[] {
  return [
    '-test.run=^TestConformance$',
    '-test.v',
    `-test.timeout=${args.timeout}`,
    `-kubeconfig=${run.kubeconfig}`,
    `-gateway-class=${skyliftGatewayClassName}`,
    `-conformance-profiles=${conformanceProfile}`,
    `-report-output=${run.reportOutput}`,
    `-organization=${skyliftImplementation.organization}`,
    `-project=${skyliftImplementation.project}`,
    `-url=${skyliftImplementation.url}`,
    `-version=v${run.skyliftVersion}`,
    `-contact=${skyliftImplementation.contact}`,
    `-skip-tests=${Object.keys(skippedConformanceTests).join(',')}`,
    ...args.suiteArgs,
  ];
}

/** How a run of the suite ended. */
export type SuiteOutcome =
  | { readonly kind: 'passed' }
  /**
   * No controller serves the GatewayClass (today: no front end yet): the suite found no
   * `status.supportedFeatures` on it, or it was not Accepted in time. `said` is the suite's line.
   */
  | { readonly kind: 'gateway-class-not-served'; readonly said: string }
  /** The suite refused the cluster's Gateway API CRDs (another release or channel). */
  | { readonly kind: 'crds-mismatch' }
  /**
   * Setup gave up waiting for the base manifests' namespaces (`NamespacesMustBeReady`): their
   * Gateways Accepted and Programmed at their generation, then every Pod Ready. `gateways`: those
   * the suite last named as not ready yet, if any (today: no Gateway controller).
   */
  | { readonly kind: 'base-not-ready'; readonly gateways: readonly string[] }
  /** `-test.timeout` passed (Go panics with "test timed out"), or the runner's own deadline. */
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'failed'; readonly exitCode: number | null };

/** Reads a run's outcome from the binary's exit code and output. Pure. */
export function classifySuiteRun(
  exitCode: number | null,
  output: string,
  killedAtDeadline: boolean,
): SuiteOutcome {
  if (exitCode === 0 && !killedAtDeadline) return { kind: 'passed' };
  if (killedAtDeadline || /panic: test timed out after/.test(output)) return { kind: 'timed-out' };
  const unserved =
    /^.*(no supported features were determined|GatewayClass to have Accepted condition).*$/m.exec(output);
  if (unserved !== null)
    return {
      kind: 'gateway-class-not-served',
      said: unserved[0].trim().replace(/^(Messages|Error):\s*/, ''),
    };
  if (/multiple gateway API CRDs (versions|channels) detected/.test(output)) return { kind: 'crds-mismatch' };
  if (/error waiting for [\w, -]+ namespaces to be ready/.test(output)) {
    const named = [...output.matchAll(/Gateway ([\w.-]+\/[\w.-]+) expected observedGeneration/g)].map(
      (m) => m[1] ?? '',
    );
    return { kind: 'base-not-ready', gateways: [...new Set(named)].sort() };
  }
  return { kind: 'failed', exitCode };
}

/** The verdict line(s) for an outcome; `log` is the suite's full output. Pure. */
export function describeSuiteOutcome(
  outcome: SuiteOutcome,
  log: string,
  keptReport: string | undefined,
): string {
  switch (outcome.kind) {
    case 'passed':
      return `The ${conformanceProfile} profile passed. Report: ${keptReport ?? '(not kept)'}`;
    case 'gateway-class-not-served':
      return [
        `No controller serves GatewayClass ${skyliftGatewayClassName} (controllerName ${skyliftGatewayControllerName}): the suite stopped`,
        `before its first test, saying: ${outcome.said}`,
        'Expected until Skylift has its Gateway API front end (issue 30): it must set the class Accepted and list',
        'the features it supports in status.supportedFeatures. Everything around it ran: the node cluster, the ALB',
        'data plane, the operator, the CRDs, the echo image, the dial map. No report was kept.',
        `Suite output: ${log}`,
      ].join('\n');
    case 'base-not-ready':
      return [
        `The suite's setup gave up waiting for its base manifests' Gateways to be Accepted and Programmed${outcome.gateways.length > 0 ? ` (it named ${outcome.gateways.join(', ')})` : ''}.`,
        `GatewayClass ${skyliftGatewayClassName} was Accepted with its features; what is missing is the Gateway front end (issue 30): Gateways as ALBs,`,
        'Programmed, with status.addresses. The suite checks the base Pods (echo backends, CoreDNS) only after the Gateways. No report was kept.',
        `Suite output: ${log}`,
      ].join('\n');
    case 'crds-mismatch':
      return `The suite refused the cluster's Gateway API CRDs (another release or channel than ${pinnedVersions().GATEWAY_API_VERSION} standard). Suite output: ${log}`;
    case 'timed-out':
      return `The suite did not finish within its timeout (--timeout). Suite output: ${log}`;
    case 'failed':
      return `The suite failed (exit code ${String(outcome.exitCode)}). Suite output: ${log}`;
  }
}

/**
 * Runs `make conformance` with `argv` (the words after the command); returns the exit code: 0
 * when the profile passed (its report copied to {@link keptReportPath}), 1 when the suite failed,
 * 2 when it could not be run (not root, something not installed). Stops everything it started
 * before it returns, also on Ctrl-C.
 */
export async function runConformance(argv: readonly string[]): Promise<number> {
  const args = parseConformanceArgs(argv);
  const say = (text: string): void => {
    process.stdout.write(`${text}\n`);
  };
  const unavailable = await nodeClusterUnavailable();
  if (unavailable !== undefined) {
    say(`Cannot run the conformance suite: ${unavailable}`);
    return 2;
  }
  const suiteBin = join(toolPaths().gatewayApiDir, 'conformance.test');
  if (!existsSync(suiteBin)) {
    say(`Cannot run the conformance suite: ${suiteBin} is missing; run make gateway-api`);
    return 2;
  }
  const interrupted = onceInterrupted();
  const dir = process.env.SKYLIFT_CONFORMANCE_DIR ?? join(repoRoot, '.skylift', 'conformance');
  const reaped = await reapStaleProcesses(dir);
  if (reaped > 0) say(`Stopped ${reaped} processes left over from an earlier run.`);
  await mkdir(dir, { recursive: true });
  const dialMapPath = join(dir, 'dial-map.json');
  const reportOutput = join(dir, 'report.yaml');
  await rm(reportOutput, { force: true });
  await writeDialMap(dialMapPath, dialMapOf([]));
  // Rewrites, one after the other, as the data plane's listeners change.
  let dialMapWrites: Promise<void> = Promise.resolve();
  const started = Date.now();
  say('Starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler, a node and moto…');
  const stack: DevStack = await startDevStack({
    dir,
    node: true,
    log: (line) => {
      say(`  ${line}`);
    },
    onAlbListenersChanged: (listeners) => {
      dialMapWrites = dialMapWrites
        .then(() => writeDialMap(dialMapPath, dialMapOf(listeners)))
        .catch((err: unknown) => {
          say(`Writing the dial map failed: ${err instanceof Error ? err.message : String(err)}`);
        });
    },
  });
  let operator: RunningOperator | undefined;
  let proxy: AwsFaultProxy | undefined;
  try {
    if (interrupted.happened()) return 1;
    // The operator's AWS calls go through a proxy: ACM re-imports and in-use deletions answered as
    // AWS does, and every certificate imported recorded for the data plane's HTTPS listeners.
    proxy = await AwsFaultProxy.start({ target: stack.awsEndpoint });
    proxy.inject(acmReimportAsAws());
    proxy.inject(acmDeleteInUseAsAws());
    if (stack.albDataPlane !== undefined) proxy.tap(stack.albDataPlane.importCertificateTap());
    Object.assign(process.env, emulatorEnv(proxy.endpoint));
    const client = new KubeClient(loadKubeconfig(stack.kubeconfig));
    await installCrds(client);
    await installGatewayApiCrds(client);
    const region = process.env.AWS_REGION ?? emulatorCredentials.region;
    const subnets = await prepareSubnets(stack.awsEndpoint, region);
    operator = startOperator(
      parseRunOptions(
        [
          '--region',
          region,
          '--leader-elect=false',
          '--leader-election-namespace',
          'default',
          '--probe-address',
          `127.0.0.1:${await freePort()}`,
          '--log-format',
          'text',
          '--log-level',
          'warn',
          ...kinds.flatMap((k) => k.devFlags),
          '--kubeconfig',
          stack.kubeconfig,
        ],
        process.env,
      ),
    );
    await client.patch(
      `/apis/gateway.networking.k8s.io/v1/gatewayclasses/${skyliftGatewayClassName}`,
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GatewayClass',
        metadata: { name: skyliftGatewayClassName },
        spec: { controllerName: skyliftGatewayControllerName },
      },
      'apply',
      { fieldManager: 'skylift-conformance', force: true },
    );
    const rel = (p: string): string => relative(process.cwd(), p) || p;
    say(
      [
        `Local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s: CRDs (Skylift's, Gateway API ${pinnedVersions().GATEWAY_API_VERSION}),`,
        `  subnets ${subnets.join(', ')}, the operator in this process, GatewayClass ${skyliftGatewayClassName} (${skyliftGatewayControllerName}).`,
        `  Dial map ${rel(dialMapPath)} (the ALB data plane's listeners by load balancer DNS name); logs in ${rel(dir)}/.`,
      ].join('\n'),
    );
    const accepted = await waitForGatewayClass(client, say);
    say(
      accepted === undefined
        ? `GatewayClass ${skyliftGatewayClassName} not Accepted after ${gatewayClassAcceptTimeoutMs / 1000} s; running the suite anyway (it says why it cannot go on).`
        : `GatewayClass ${skyliftGatewayClassName} Accepted; supported features: ${accepted.join(', ') || '(none listed)'}.`,
    );
    const skyliftVersion = skyliftPackageVersion();
    const suiteArgs = suiteCommandLine(args, {
      kubeconfig: stack.kubeconfig,
      reportOutput,
      skyliftVersion,
    });
    const logPath = join(dir, 'conformance.log');
    say(
      `Running the ${conformanceProfile} profile (timeout ${args.timeout}; all output in ${rel(logPath)}), skipping:\n${Object.entries(
        skippedConformanceTests,
      )
        .map(([test, why]) => `  ${test}: ${why}`)
        .join('\n')}`,
    );
    const run = await runSuite(suiteBin, suiteArgs, {
      env: { ...process.env, KUBECONFIG: stack.kubeconfig, [dialMapEnv]: dialMapPath },
      logPath,
      deadlineMs: goDurationMs(args.timeout) + 60_000,
      interrupted: interrupted.promise,
      say,
    });
    if (interrupted.happened()) {
      say('Interrupted.');
      return 1;
    }
    const outcome = classifySuiteRun(run.exitCode, run.output, run.killedAtDeadline);
    let kept: string | undefined;
    if (outcome.kind === 'passed' && existsSync(reportOutput)) {
      kept = keptReportPath(pinnedVersions().GATEWAY_API_VERSION, skyliftVersion);
      await mkdir(join(kept, '..'), { recursive: true });
      await copyFile(reportOutput, kept);
      kept = rel(kept);
    }
    say(describeSuiteOutcome(outcome, rel(logPath), kept));
    return outcome.kind === 'passed' ? 0 : 1;
  } finally {
    if (operator !== undefined) {
      operator.manager.stop();
      await operator.done.catch(() => undefined);
    }
    await dialMapWrites;
    await proxy?.stop();
    await stack.stop();
    interrupted.dispose();
    say('Stopped.');
  }
}

/** A GatewayClass as far as the runner reads it. */
interface GatewayClassView {
  metadata: { generation?: number };
  status?: {
    conditions?: { type: string; status: string; observedGeneration?: number }[];
    supportedFeatures?: { name: string }[];
  };
}

/**
 * Waits up to {@link gatewayClassAcceptTimeoutMs} for GatewayClass {@link skyliftGatewayClassName}
 * to be Accepted at its current generation, saying so every 10 s; returns the supported features it
 * lists then, or undefined when it was not Accepted in time.
 */
async function waitForGatewayClass(
  client: KubeClient,
  say: (text: string) => void,
): Promise<string[] | undefined> {
  const t0 = Date.now();
  let lastSaid = t0;
  try {
    return await waitFor(
      async () => {
        const gwc = await client.get<GatewayClassView>(
          `/apis/gateway.networking.k8s.io/v1/gatewayclasses/${skyliftGatewayClassName}`,
        );
        const ok = (gwc.status?.conditions ?? []).some(
          (c) =>
            c.type === 'Accepted' && c.status === 'True' && c.observedGeneration === gwc.metadata.generation,
        );
        if (ok) return (gwc.status?.supportedFeatures ?? []).map((f) => f.name);
        if (Date.now() - lastSaid >= 10_000) {
          lastSaid = Date.now();
          say(
            `  … GatewayClass ${skyliftGatewayClassName} not Accepted yet (${Math.round((lastSaid - t0) / 1000)} s)`,
          );
        }
        return undefined;
      },
      { timeoutMs: gatewayClassAcceptTimeoutMs, intervalMs: 250, description: 'the GatewayClass Accepted' },
    );
  } catch {
    return undefined;
  }
}

/** The VPC subnets tagged for load balancers, as a user's account has them (the front end's ALBs go there). */
async function prepareSubnets(endpoint: string, region: string): Promise<string[]> {
  const aws = createAwsClients({ region, clock: realClock, metrics: new Metrics(), endpoint });
  try {
    return await ensureElbSubnets(await aws.ec2(), region);
  } finally {
    aws.destroy();
  }
}

/** This clone's version (package.json), as the report names it. */
function skyliftPackageVersion(): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Milliseconds of a Go duration as {@link parseConformanceArgs} accepts it (e.g. 1h30m). Pure. */
export function goDurationMs(d: string): number {
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const m of d.matchAll(/(\d+)(ns|us|ms|s|m|h)/g)) total += Number(m[1]) * (unit[m[2] ?? ''] ?? 0);
  return total;
}

/** How {@link runSuite} runs the binary. */
interface SuiteRunOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly logPath: string;
  /** Killed (TERM, then KILL 10 s later) if still running this long after the start. */
  readonly deadlineMs: number;
  /** Killed the same way when this resolves (Ctrl-C). */
  readonly interrupted: Promise<void>;
  readonly say: (text: string) => void;
}

/** Runs the binary to its end: everything it prints goes to the log, the outline to the console. */
async function runSuite(
  bin: string,
  args: readonly string[],
  opts: SuiteRunOptions,
): Promise<{ exitCode: number | null; output: string; killedAtDeadline: boolean }> {
  const log = createWriteStream(opts.logPath);
  const child = spawn(bin, args, { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const t0 = Date.now();
  let output = '';
  let partial = '';
  let lastPrinted = Date.now();
  let killedAtDeadline = false;
  const onData = (chunk: Buffer): void => {
    const text = chunk.toString();
    log.write(text);
    output += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines)
      if (outlineLine(line)) {
        opts.say(`  ${line.trim()}`);
        lastPrinted = Date.now();
      }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const stop = (): void => {
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  };
  // A line at least every 10 s while the suite is quiet on the console.
  const ticker = setInterval(() => {
    if (Date.now() - lastPrinted < 10_000) return;
    const last = output.trimEnd().split('\n').pop()?.trim() ?? '';
    opts.say(`  … ${Math.round((Date.now() - t0) / 1000)} s so far; last line: ${last.slice(0, 160)}`);
    lastPrinted = Date.now();
  }, 1_000);
  const deadline = setTimeout(() => {
    killedAtDeadline = true;
    opts.say(`  the suite is still running ${opts.deadlineMs / 1000} s after its start: stopping it`);
    stop();
  }, opts.deadlineMs);
  void opts.interrupted.then(stop);
  const exitCode = await new Promise<number | null>((resolveExit, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      resolveExit(code);
    });
  }).finally(() => {
    clearInterval(ticker);
    clearTimeout(deadline);
  });
  await new Promise<void>((closed) => log.end(closed));
  return { exitCode, output, killedAtDeadline };
}

/** Whether a line of the suite's verbose output belongs on the console: setup steps and test verdicts. */
export function outlineLine(line: string): boolean {
  return (
    /^\s*(=== RUN|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|ok\s|FAIL\s)/.test(line) ||
    /Test Setup:|Error:|error waiting for|panic:/.test(line)
  );
}
