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
import { resourcePath } from '../src/apis/meta.ts';
import { teamPolicyType } from '../src/apis/teampolicy.ts';
import { anyEndpointSliceManager } from '../src/kinds/myingress/backends.ts';
import { myIngressGroupType } from '../src/kinds/myingress/group/api.ts';
import { gatewayUidLabel } from '../src/kinds/myingress/gateway/names.ts';
import { parseRunOptions } from '../src/operator/options.ts';
import { startOperator, type RunningOperator } from '../src/operator/start.ts';
import { createAwsClients } from '../src/providers/aws/clients.ts';
import { realClock } from '../src/runtime/clock.ts';
import { KubeClient } from '../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../src/runtime/kube/kubeconfigLoad.ts';
import { Metrics } from '../src/runtime/metrics.ts';
import { ensureElbSubnets } from './awsAccount.ts';
import { dialMapEnv, dialMapFile, type DialMapFile } from './conformanceDialMap.ts';
import type { AlbDataPlane } from './albDataPlane/dataPlane.ts';
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
 * The GATEWAY-HTTP core tests Skylift skips, each with why (docs/gateway.md, "Conformance"): what an
 * ALB cannot do. The report lists them as skipped (the profile `partial`).
 */
export const skippedHttpCoreTests: Readonly<Record<string, string>> = {
  HTTPRouteRequestHeaderModifier:
    'an Application Load Balancer cannot add, set or remove request headers; Skylift refuses the filter (UnsupportedValue)',
};

/**
 * The GRPCRoute tests Skylift skips: the class lists GRPCRoute, so the suite runs them (they count
 * toward the GATEWAY-GRPC profile, not in GATEWAY-HTTP's report); every one sends cleartext gRPC
 * (h2c) to an HTTP listener, which an ALB cannot serve (test/integration/gatewayGrpc.test.ts
 * proves GRPCRoutes on HTTPS listeners instead).
 */
export const skippedGrpcTests: Readonly<Record<string, string>> = Object.fromEntries(
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
);

/** Every test the run skips (`-skip-tests`), with why. */
export const skippedConformanceTests: Readonly<Record<string, string>> = {
  ...skippedHttpCoreTests,
  ...skippedGrpcTests,
};

/**
 * The TeamPolicy the run applies, labelled for the run's operator only ({@link conformancePolicySelector}):
 * every namespace, served with the operator's identity, trusting every EndpointSlice (`*`) — the
 * suite's HTTPRouteServiceTypes test makes EndpointSlices by hand, with no manager label, which
 * Skylift registers only under a policy that trusts them (docs/gateway.md, "Conformance").
 */
export const conformancePolicyName = 'skylift-gateway-conformance';
/** The label on {@link conformancePolicyName} and the run's operator's --team-policy-selector. */
export const conformancePolicySelector = { key: 'skylift.dev/conformance', value: 'gateway-api' } as const;

/**
 * The conformance binary's command line: TestConformance, verbose, the timeout; the cluster;
 * GatewayClass {@link skyliftGatewayClassName}; the {@link conformanceProfile} profile (its core
 * features, plus the extended ones the GatewayClass lists in `status.supportedFeatures`); the
 * report with Skylift's implementation fields; then the user's flags. The suite's own timeouts
 * stay upstream's. Pure.
 */
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
  const unavailable = (await nodeClusterUnavailable()) ?? suiteUnavailable();
  if (unavailable !== undefined) {
    say(`Cannot run the conformance suite: ${unavailable}`);
    return 2;
  }
  const interrupted = onceInterrupted();
  const dir = process.env.SKYLIFT_CONFORMANCE_DIR ?? join(repoRoot, '.skylift', 'conformance');
  const reaped = await reapStaleProcesses(dir);
  if (reaped > 0) say(`Stopped ${reaped} processes left over from an earlier run.`);
  await mkdir(dir, { recursive: true });
  const dialMap = await dialMapFile(join(dir, 'dial-map.json'), (err: unknown) => {
    say(`Writing the dial map failed: ${err instanceof Error ? err.message : String(err)}`);
  });
  const started = Date.now();
  say('Starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler, a node and moto…');
  const stack: DevStack = await startDevStack({
    dir,
    node: true,
    log: (line) => {
      say(`  ${line}`);
    },
    onAlbListenersChanged: (listeners) => {
      dialMap.follow(listeners);
    },
  });
  try {
    if (interrupted.happened() || stack.albDataPlane === undefined) return 1;
    say(`Node cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    const run = await runConformanceProfile(
      {
        kubeconfig: stack.kubeconfig,
        awsEndpoint: stack.awsEndpoint,
        dataPlane: stack.albDataPlane,
        dialMap,
        dir,
      },
      args,
      { say, interrupted },
    );
    if (run === 'interrupted') {
      say('Interrupted.');
      return 1;
    }
    let kept: string | undefined;
    if (run.outcome.kind === 'passed' && existsSync(run.reportOutput)) {
      kept = keptReportPath(pinnedVersions().GATEWAY_API_VERSION, skyliftPackageVersion());
      await mkdir(join(kept, '..'), { recursive: true });
      await copyFile(run.reportOutput, kept);
      kept = relative(process.cwd(), kept) || kept;
    }
    say(describeSuiteOutcome(run.outcome, relative(process.cwd(), run.logPath) || run.logPath, kept));
    return run.outcome.kind === 'passed' ? 0 : 1;
  } finally {
    await dialMap.flushed();
    await stack.stop();
    interrupted.dispose();
    say('Stopped.');
  }
}

/** Why the compiled suite cannot be run (it is not installed), or undefined. */
export function suiteUnavailable(): string | undefined {
  const suiteBin = join(toolPaths().gatewayApiDir, 'conformance.test');
  return existsSync(suiteBin) ? undefined : `${suiteBin} is missing; run make gateway-api`;
}

/** A cluster to run the profile against: everything {@link runConformanceProfile} does not start. */
export interface ConformanceTarget {
  /** The cluster's admin kubeconfig (the suite and the operator use it). */
  readonly kubeconfig: string;
  /** moto itself; the run puts a fault proxy with ACM's fidelity rules in front of it for the operator. */
  readonly awsEndpoint: string;
  /** The ALB data plane following that moto, whose listeners {@link dialMap} follows. */
  readonly dataPlane: AlbDataPlane;
  readonly dialMap: DialMapFile;
  /** Where the suite's log and report go. */
  readonly dir: string;
}

/** A finished run of the profile: how it ended, and where its full output and report are. */
export interface ConformanceProfileRun {
  readonly outcome: SuiteOutcome;
  /** The suite's report (written by the suite; present when it got that far). */
  readonly reportOutput: string;
  readonly logPath: string;
  /** The GatewayClass's supported features when the suite started; undefined if it was not Accepted in time. */
  readonly supportedFeatures: readonly string[] | undefined;
}

/** How {@link runConformanceProfile} talks and is stopped. */
export interface ConformanceProfileIo {
  readonly say: (text: string) => void;
  /** Ctrl-C: the suite is stopped, the run answers 'interrupted'. */
  readonly interrupted?: { readonly promise: Promise<void>; happened(): boolean };
}

/**
 * Runs the {@link conformanceProfile} profile against a running cluster: installs Skylift's and the
 * Gateway API's CRDs (idempotent), tags the default VPC's subnets for load balancers, applies the
 * TeamPolicy {@link conformancePolicyName} (deleted at the end), starts the
 * operator in this process with its AWS calls through a fault proxy (ACM re-imports and in-use
 * deletions answered as AWS does; imported keys recorded for the data plane), applies GatewayClass
 * {@link skyliftGatewayClassName}, waits for it to be Accepted, runs the suite, then waits (up to 3
 * min) for the Gateways the suite deleted to be gone from ELBv2's side — their MyIngressGroups
 * deleted — and stops the operator and the proxy. The GatewayClass stays. Sets the AWS endpoint
 * variables of `process.env` to the proxy's (the operator's SDK reads them). May block for the
 * suite's timeout; never throws for a failing suite (the outcome says it).
 */
export async function runConformanceProfile(
  target: ConformanceTarget,
  args: ConformanceArgs,
  io: ConformanceProfileIo,
): Promise<ConformanceProfileRun | 'interrupted'> {
  const { say } = io;
  const reportOutput = join(target.dir, 'report.yaml');
  const logPath = join(target.dir, 'conformance.log');
  await rm(reportOutput, { force: true });
  const started = Date.now();
  const proxy = await AwsFaultProxy.start({ target: target.awsEndpoint });
  let operator: RunningOperator | undefined;
  const client = new KubeClient(loadKubeconfig(target.kubeconfig));
  try {
    proxy.inject(acmReimportAsAws());
    proxy.inject(acmDeleteInUseAsAws());
    proxy.tap(target.dataPlane.importCertificateTap());
    Object.assign(process.env, emulatorEnv(proxy.endpoint));
    await installCrds(client);
    await installGatewayApiCrds(client);
    const region = process.env.AWS_REGION ?? emulatorCredentials.region;
    const subnets = await prepareSubnets(target.awsEndpoint, region);
    await client.patch(
      resourcePath(teamPolicyType, { name: conformancePolicyName }),
      {
        apiVersion: `${teamPolicyType.group}/${teamPolicyType.version}`,
        kind: teamPolicyType.kind,
        metadata: {
          name: conformancePolicyName,
          labels: { [conformancePolicySelector.key]: conformancePolicySelector.value },
        },
        spec: {
          namespaces: { selector: {} },
          guardrails: { loadBalancers: { endpointSliceManagers: [anyEndpointSliceManager] } },
        },
      },
      'apply',
      { fieldManager: 'skylift-conformance', force: true },
    );
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
          // Its own Lease and teams marker, and only the run's TeamPolicy: on a shared cluster (make
          // test's) no other operator's policies or marker decide what it serves, nor it theirs.
          '--leader-election-id',
          'skylift-conformance',
          '--team-policy-selector',
          `${conformancePolicySelector.key}=${conformancePolicySelector.value}`,
          '--kubeconfig',
          target.kubeconfig,
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
        `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s: CRDs (Skylift's, Gateway API ${pinnedVersions().GATEWAY_API_VERSION}),`,
        `  subnets ${subnets.join(', ')}, the operator in this process, GatewayClass ${skyliftGatewayClassName} (${skyliftGatewayControllerName}).`,
        `  Dial map ${rel(target.dialMap.path)} (the ALB data plane's listeners by load balancer DNS name); logs in ${rel(target.dir)}/.`,
      ].join('\n'),
    );
    const supportedFeatures = await waitForGatewayClass(client, say);
    say(
      supportedFeatures === undefined
        ? `GatewayClass ${skyliftGatewayClassName} not Accepted after ${gatewayClassAcceptTimeoutMs / 1000} s; running the suite anyway (it says why it cannot go on).`
        : `GatewayClass ${skyliftGatewayClassName} Accepted; supported features: ${supportedFeatures.join(', ') || '(none listed)'}.`,
    );
    const suiteArgs = suiteCommandLine(args, {
      kubeconfig: target.kubeconfig,
      reportOutput,
      skyliftVersion: skyliftPackageVersion(),
    });
    say(
      `Running the ${conformanceProfile} profile (timeout ${args.timeout}; all output in ${rel(logPath)}), skipping:\n${Object.entries(
        skippedConformanceTests,
      )
        .map(([test, why]) => `  ${test}: ${why}`)
        .join('\n')}`,
    );
    const run = await runSuite(join(toolPaths().gatewayApiDir, 'conformance.test'), suiteArgs, {
      env: { ...process.env, KUBECONFIG: target.kubeconfig, [dialMapEnv]: target.dialMap.path },
      logPath,
      deadlineMs: goDurationMs(args.timeout) + 60_000,
      interrupted: io.interrupted?.promise ?? new Promise<void>(() => undefined),
      say,
    });
    if (io.interrupted?.happened() === true) return 'interrupted';
    const outcome = classifySuiteRun(run.exitCode, run.output, run.killedAtDeadline);
    await gatewayGroupsGone(client, say);
    return { outcome, reportOutput, logPath, supportedFeatures };
  } finally {
    if (operator !== undefined) {
      operator.manager.stop();
      await operator.done.catch(() => undefined);
    }
    await proxy.stop();
    await client.delete(resourcePath(teamPolicyType, { name: conformancePolicyName })).catch(() => undefined);
  }
}

/**
 * Waits up to 3 min for every MyIngressGroup a Gateway made (label skylift.dev/gateway-uid) to be
 * gone — the suite deletes its Gateways when it ends, and the operator deletes their load
 * balancers — saying what is left if some stay.
 */
async function gatewayGroupsGone(client: KubeClient, say: (text: string) => void): Promise<void> {
  const list = (): Promise<{ items: { metadata: { name: string } }[] }> =>
    client.get(resourcePath(myIngressGroupType), { labelSelector: gatewayUidLabel });
  try {
    await waitFor(async () => ((await list()).items.length === 0 ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 500,
      description: "the Gateways' load balancers deleted",
    });
  } catch {
    const left = (await list().catch(() => ({ items: [] }))).items.map((g) => g.metadata.name);
    say(`Load balancers of Gateways still there after 3 min: ${left.join(', ')}`);
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
