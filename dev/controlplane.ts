import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  generateLocalPki,
  issueClientCert,
  newIdentity,
  tokenAuthFile,
  type LocalPki,
  type TokenIdentity,
} from './certs.ts';
import { simpleRequest } from './http.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { toolPaths } from './paths.ts';
import { freePort } from './ports.ts';
import { ManagedProcess } from './process.ts';
import { AbortWait, waitFor } from './wait.ts';

/** The identities a local control plane hands out. */
export interface ControlPlaneIdentities {
  /** Member of system:masters: can do anything. */
  readonly admin: TokenIdentity;
  /**
   * User `skylift-operator` in group `skylift:operators`, with no permissions
   * beyond discovery until a test binds a Role/ClusterRole to it: the
   * operator's own least-privilege identity.
   */
  readonly operator: TokenIdentity;
}

/** Options for {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** Working directory for certs, etcd data and logs; created if missing. */
  readonly dir: string;
  /** Also run kube-controller-manager (garbage collection, namespace deletion, service accounts, role aggregation). */
  readonly controllerManager?: boolean;
  /** Directory with kube-apiserver, kube-controller-manager and etcd; default from hack/lib.sh's rules. */
  readonly binDir?: string;
  /** Deadline for each component to become healthy (default 60 s). */
  readonly startTimeoutMs?: number;
  /** Extra kube-apiserver flags (tests use e.g. --etcd-compaction-interval). */
  readonly extraApiServerArgs?: readonly string[];
  /** Extra kube-controller-manager flags, after Skylift's (a repeated flag's last value wins). */
  readonly extraControllerManagerArgs?: readonly string[];
  /**
   * Node mode (dev/nodeCluster.ts): prepare the control plane for one real
   * node. kube-apiserver listens on all addresses and advertises `hostIp` (the
   * CNI bridge's address, so Pods reach it through the `kubernetes` Service),
   * authorizes with Node,RBAC plus NodeRestriction, and has a client
   * certificate for the kubelet; kube-controller-manager runs the workload
   * controllers too; kubeconfigs for the kubelet and kube-proxy are written.
   */
  readonly node?: NodeModeOptions;
}

/** See {@link ControlPlaneOptions.node}. */
export interface NodeModeOptions {
  /** The Node's name; the kubelet authenticates as `system:node:<name>`. */
  readonly nodeName: string;
  /**
   * The host's address as the node sees it: the host end of the node's veth
   * pair when the node has its own network namespace (else the CNI bridge's
   * gateway). Advertised by kube-apiserver and used in the node's kubeconfigs.
   */
  readonly hostIp: string;
  /** kube-scheduler binary (built with the kubelet by hack/install-node-runtime.sh). */
  readonly schedulerBin: string;
  /**
   * The Service CIDR, a /24 (default 10.0.0.0/24, as without a node). Give
   * every node cluster on one host its own: the host routes it into the
   * node's network namespace, so two clusters' ClusterIPs must not overlap.
   */
  readonly serviceCidr?: string;
}

/** The Service CIDR of a control plane without `node.serviceCidr`. */
export const defaultServiceCidr = '10.0.0.0/24';

/** The `kubernetes` Service's ClusterIP: the first address of the Service CIDR. Pure. */
export function kubernetesServiceIp(serviceCidr: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(serviceCidr);
  if (m === null) throw new Error(`not an IPv4 CIDR: ${JSON.stringify(serviceCidr)}`);
  return `${m[1] ?? ''}.${m[2] ?? ''}.${m[3] ?? ''}.${Number(m[4]) + 1}`;
}

/** Identities of the node components, in node mode. */
export interface NodeIdentities {
  readonly kubelet: TokenIdentity;
  readonly kubeProxy: TokenIdentity;
}

/** A running etcd + kube-apiserver (+ kube-controller-manager) on loopback. */
export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  readonly caPem: string;
  readonly identities: ControlPlaneIdentities;
  readonly dir: string;
  readonly logDir: string;
  /** Path of a kubeconfig file for the identity (written at start). */
  kubeconfigPath(who: keyof ControlPlaneIdentities): string;
  /** Node mode only: path of the kubelet's or kube-proxy's kubeconfig. */
  nodeKubeconfigPath(who: keyof NodeIdentities): string;
  /** Stops kube-apiserver and starts it again on the same port and etcd data; resolves when ready. */
  restartApiServer(): Promise<void>;
  /**
   * Stops etcd (SIGTERM) while kube-apiserver keeps running, starts it again on
   * the same ports and data, and resolves once etcd is healthy and
   * kube-apiserver's `/readyz` answers 200 again.
   */
  restartEtcd(): Promise<void>;
  /** Stops everything (controller-manager, apiserver, etcd). Idempotent. Keeps `logDir`. */
  stop(): Promise<void>;
}

const controllers = [
  // Fills the built-in admin/edit/view roles from ClusterRoles labelled to aggregate into them.
  'clusterrole-aggregation-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  // Type-checks ValidatingAdmissionPolicies' CEL against the schemas (status.typeChecking).
  'validatingadmissionpolicy-status-controller',
].join(',');

/**
 * What node mode adds: Deployments make ReplicaSets make Pods, Services get
 * EndpointSlices, Pods get `kube-root-ca.crt` for their projected
 * service-account volume, finished Pods are collected, and a Node whose
 * kubelet stops is marked NotReady and tainted.
 */
const nodeControllers = [
  'deployment-controller',
  'replicaset-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'root-ca-certificate-publisher-controller',
  'pod-garbage-collector-controller',
  'disruption-controller',
  'taint-eviction-controller',
  'node-lifecycle-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
].join(',');

/**
 * Starts etcd and kube-apiserver (RBAC on, secure serving with a generated CA,
 * static-token identities, service-account signing keys) on free loopback
 * ports, and waits until `/readyz` answers 200. Throws with the component's log
 * tail when something does not come up within the deadline; whatever was
 * started is stopped again in that case.
 */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const binDir = opts.binDir ?? toolPaths().kubeBinDir;
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const logDir = join(opts.dir, 'logs');
  const pkiDir = join(opts.dir, 'pki');
  const etcdDir = join(opts.dir, 'etcd');
  await mkdir(logDir, { recursive: true });
  await mkdir(pkiDir, { recursive: true });
  await rm(etcdDir, { recursive: true, force: true });

  const node = opts.node;
  const serviceCidr = node?.serviceCidr ?? defaultServiceCidr;
  // The server certificate names the `kubernetes` Service's ClusterIP: Pods call it there.
  const pki = await generateLocalPki(pkiDir, [
    kubernetesServiceIp(serviceCidr),
    ...(node !== undefined ? [node.hostIp] : []),
  ]);
  const identities: ControlPlaneIdentities = {
    admin: newIdentity('skylift-admin', ['system:masters']),
    operator: newIdentity('skylift-operator', ['skylift:operators']),
  };
  const controllerManagerIdentity = newIdentity('system:kube-controller-manager', ['system:masters']);
  const nodeIdentities: NodeIdentities | undefined =
    node === undefined
      ? undefined
      : {
          kubelet: newIdentity(`system:node:${node.nodeName}`, ['system:nodes']),
          // Bound to ClusterRole system:node-proxier by the default bootstrap policy.
          kubeProxy: newIdentity('system:kube-proxy', []),
        };
  const kubeletClient =
    node === undefined
      ? undefined
      : await issueClientCert(
          pki,
          pkiDir,
          'apiserver-kubelet-client',
          'kube-apiserver-kubelet-client',
          'system:masters',
        );
  const tokenFile = join(pkiDir, 'tokens.csv');
  await writeFile(
    tokenFile,
    tokenAuthFile([
      identities.admin,
      identities.operator,
      controllerManagerIdentity,
      ...(nodeIdentities !== undefined ? [nodeIdentities.kubelet, nodeIdentities.kubeProxy] : []),
    ]),
    {
      mode: 0o600,
    },
  );

  const started: ManagedProcess[] = [];
  try {
    let etcd = await startEtcd(binDir, etcdDir, logDir, timeoutMs);
    started.push(etcd.process);

    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;
    const apiArgs = [
      ...apiServerArgs({
        port,
        etcdUrl: etcd.url,
        pki,
        tokenFile,
        certDir: pkiDir,
        serviceCidr,
        ...(node !== undefined && kubeletClient !== undefined
          ? {
              node: {
                hostIp: node.hostIp,
                kubeletClientCert: kubeletClient.cert,
                kubeletClientKey: kubeletClient.key,
              },
            }
          : {}),
      }),
      ...(opts.extraApiServerArgs ?? []),
    ];
    let apiserver = await startApiServer(binDir, apiArgs, logDir, server, pki, identities.admin, timeoutMs);
    started.push(apiserver);

    const kubeconfigs = {
      admin: join(opts.dir, 'admin.kubeconfig'),
      operator: join(opts.dir, 'operator.kubeconfig'),
    };
    for (const who of ['admin', 'operator'] as const) {
      await writeTokenKubeconfig(kubeconfigs[who], server, pki, identities[who], `skylift-local-${who}`);
    }

    const nodeKubeconfigs = {
      kubelet: join(opts.dir, 'kubelet.kubeconfig'),
      kubeProxy: join(opts.dir, 'kube-proxy.kubeconfig'),
    };
    if (nodeIdentities !== undefined) {
      for (const who of ['kubelet', 'kubeProxy'] as const) {
        // Not 127.0.0.1: the node's components may run in their own network namespace, whose
        // loopback is not the host's.
        const nodeServer = `https://${node?.hostIp ?? '127.0.0.1'}:${port}`;
        await writeTokenKubeconfig(nodeKubeconfigs[who], nodeServer, pki, nodeIdentities[who]);
      }
    }

    let kcm: ManagedProcess | undefined;
    if (opts.controllerManager === true) {
      const kcmConfig = join(opts.dir, 'controller-manager.kubeconfig');
      await writeTokenKubeconfig(kcmConfig, server, pki, controllerManagerIdentity);
      kcm = await ManagedProcess.start({
        name: 'kube-controller-manager',
        command: join(binDir, 'kube-controller-manager'),
        args: [
          `--kubeconfig=${kcmConfig}`,
          '--secure-port=0',
          '--leader-elect=false',
          `--controllers=${node !== undefined ? `${controllers},${nodeControllers}` : controllers}`,
          `--root-ca-file=${pki.caCert}`,
          `--service-account-private-key-file=${pki.saKey}`,
          '--use-service-account-credentials=false',
          '--concurrent-gc-syncs=5',
          ...(opts.extraControllerManagerArgs ?? []),
        ],
        logFile: join(logDir, 'kube-controller-manager.log'),
        pidFile: join(logDir, 'kube-controller-manager.pid'),
      });
      started.push(kcm);
      // It has no serving port here (--secure-port=0): its first piece of work is the sign of life.
      // One that exits at once (an unknown controller name) is reported now, not by its absence.
      await waitForControllerManager(kcm, server, pki, identities.admin, timeoutMs);
    }

    let scheduler: ManagedProcess | undefined;
    if (node !== undefined) {
      // Same all-powerful identity as the controller-manager: a dev cluster's scheduler.
      const schedulerConfig = join(opts.dir, 'scheduler.kubeconfig');
      await writeTokenKubeconfig(schedulerConfig, server, pki, controllerManagerIdentity);
      scheduler = await ManagedProcess.start({
        name: 'kube-scheduler',
        command: node.schedulerBin,
        args: [`--kubeconfig=${schedulerConfig}`, '--secure-port=0', '--leader-elect=false'],
        logFile: join(logDir, 'kube-scheduler.log'),
        pidFile: join(logDir, 'kube-scheduler.pid'),
      });
      started.push(scheduler);
    }

    let stopped = false;
    return {
      server,
      caPem: pki.caPem,
      identities,
      dir: opts.dir,
      logDir,
      kubeconfigPath: (who) => kubeconfigs[who],
      nodeKubeconfigPath: (who) => {
        if (nodeIdentities === undefined) throw new Error('not a node-mode control plane');
        return nodeKubeconfigs[who];
      },
      async restartApiServer() {
        await apiserver.stop();
        apiserver = await startApiServer(binDir, apiArgs, logDir, server, pki, identities.admin, timeoutMs);
      },
      async restartEtcd() {
        await etcd.process.stop();
        etcd = await launchEtcd(binDir, etcdDir, logDir, etcd.ports, timeoutMs);
        await waitForApiServer(apiserver, server, pki, identities.admin, timeoutMs);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        if (scheduler !== undefined) await scheduler.stop();
        if (kcm !== undefined) await kcm.stop();
        await apiserver.stop();
        await etcd.process.stop();
        await rm(etcdDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const p of started.reverse()) await p.stop(2000);
    throw err;
  }
}

interface ApiServerArgInputs {
  readonly port: number;
  readonly etcdUrl: string;
  readonly pki: LocalPki;
  readonly tokenFile: string;
  readonly certDir: string;
  /** --service-cluster-ip-range. */
  readonly serviceCidr: string;
  /** Node mode: listen on all addresses, advertise `hostIp`, Node authorizer, kubelet client certificate. */
  readonly node?: {
    readonly hostIp: string;
    readonly kubeletClientCert: string;
    readonly kubeletClientKey: string;
  };
}

/** kube-apiserver flags for a single-node local control plane. Pure. */
export function apiServerArgs(i: ApiServerArgInputs): string[] {
  return [
    `--etcd-servers=${i.etcdUrl}`,
    `--secure-port=${i.port}`,
    ...(i.node === undefined
      ? ['--bind-address=127.0.0.1', '--advertise-address=127.0.0.1']
      : [
          '--bind-address=0.0.0.0',
          `--advertise-address=${i.node.hostIp}`,
          `--kubelet-client-certificate=${i.node.kubeletClientCert}`,
          `--kubelet-client-key=${i.node.kubeletClientKey}`,
          '--enable-admission-plugins=NodeRestriction',
          // The Node's name does not resolve; its InternalIP (the bridge's address) does.
          '--kubelet-preferred-address-types=InternalIP',
        ]),
    `--cert-dir=${i.certDir}`,
    `--tls-cert-file=${i.pki.serverCert}`,
    `--tls-private-key-file=${i.pki.serverKey}`,
    `--client-ca-file=${i.pki.caCert}`,
    i.node === undefined ? '--authorization-mode=RBAC' : '--authorization-mode=Node,RBAC',
    `--token-auth-file=${i.tokenFile}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${i.pki.saPub}`,
    `--service-account-signing-key-file=${i.pki.saKey}`,
    `--service-cluster-ip-range=${i.serviceCidr}`,
    '--allow-privileged=true',
    '--profiling=false',
    // Benchmarks drive thousands of objects through one apiserver.
    '--max-requests-inflight=1000',
    '--max-mutating-requests-inflight=500',
  ];
}

async function startEtcd(
  binDir: string,
  dataDir: string,
  logDir: string,
  timeoutMs: number,
): Promise<RunningEtcd> {
  // A free port can be taken between probing and binding: retry with new ports.
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const ports = { client: await freePort(), peer: await freePort() };
    await rm(dataDir, { recursive: true, force: true });
    try {
      return await launchEtcd(binDir, dataDir, logDir, ports, timeoutMs);
    } catch (err) {
      lastError = err;
      if (!(err instanceof EtcdExited)) break;
    }
  }
  throw new Error(`etcd did not start: ${describe(lastError)}`, { cause: lastError });
}

/** A running etcd and what it takes to start it again on the same ports and data. */
interface RunningEtcd {
  readonly process: ManagedProcess;
  readonly url: string;
  readonly ports: { readonly client: number; readonly peer: number };
}

/** The wait for a new etcd failed because the process exited (a port race, say). */
class EtcdExited extends Error {}

/**
 * Starts etcd on the given ports over `dataDir` (kept as it is: a restart
 * finds its data again) and waits until `/health` says true. Stops the
 * process again and throws when it does not get there.
 */
async function launchEtcd(
  binDir: string,
  dataDir: string,
  logDir: string,
  ports: { readonly client: number; readonly peer: number },
  timeoutMs: number,
): Promise<RunningEtcd> {
  const url = `http://127.0.0.1:${ports.client}`;
  const peer = `http://127.0.0.1:${ports.peer}`;
  const proc = await ManagedProcess.start({
    name: 'etcd',
    command: join(binDir, 'etcd'),
    args: [
      '--name=skylift',
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=skylift=${peer}`,
      // Test data is throwaway; fsync dominates etcd latency on small disks.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    logFile: join(logDir, 'etcd.log'),
    pidFile: join(logDir, 'etcd.pid'),
  });
  try {
    await waitFor(
      async () => {
        if (proc.exitStatus !== undefined) throw new ExitedError(proc);
        const res = await simpleRequest(`${url}/health`, { timeoutMs: 2000 });
        return res.status === 200 && res.body.includes('"health":"true"') ? true : undefined;
      },
      { timeoutMs, description: `etcd healthy at ${url}`, intervalMs: 100 },
    );
    return { process: proc, url, ports };
  } catch (err) {
    await proc.stop(2000);
    if (err instanceof ExitedError) throw new EtcdExited(err.message, { cause: err });
    throw err;
  }
}

async function startApiServer(
  binDir: string,
  args: string[],
  logDir: string,
  server: string,
  pki: LocalPki,
  admin: TokenIdentity,
  timeoutMs: number,
): Promise<ManagedProcess> {
  const proc = await ManagedProcess.start({
    name: 'kube-apiserver',
    command: join(binDir, 'kube-apiserver'),
    args,
    logFile: join(logDir, 'kube-apiserver.log'),
    pidFile: join(logDir, 'kube-apiserver.pid'),
  });
  try {
    await waitForApiServer(proc, server, pki, admin, timeoutMs);
    return proc;
  } catch (err) {
    await proc.stop(2000);
    throw err;
  }
}

/** Waits until kube-apiserver's `/readyz` answers 200; throws with its log tail when it exits or the deadline passes. */
async function waitForApiServer(
  proc: ManagedProcess,
  server: string,
  pki: LocalPki,
  admin: TokenIdentity,
  timeoutMs: number,
): Promise<void> {
  try {
    await waitFor(
      async () => {
        if (proc.exitStatus !== undefined) throw new ExitedError(proc);
        const res = await simpleRequest(`${server}/readyz`, {
          ca: pki.caPem,
          headers: { authorization: `Bearer ${admin.token}` },
          timeoutMs: 5000,
        });
        return res.status === 200 ? true : undefined;
      },
      { timeoutMs, description: `kube-apiserver ready at ${server}/readyz`, intervalMs: 200 },
    );
  } catch (err) {
    throw new Error(
      `kube-apiserver did not become ready: ${describe(err)}\n--- ${proc.logFile} ---\n${proc.tail()}`,
      { cause: err },
    );
  }
}

/** Writes a kubeconfig (mode 0600) for `who`'s static token against `server`, trusting the local CA. */
async function writeTokenKubeconfig(
  path: string,
  server: string,
  pki: LocalPki,
  who: TokenIdentity,
  context?: string,
): Promise<void> {
  await writeFile(
    path,
    renderKubeconfig([
      {
        clusterName: 'skylift-local',
        server,
        caPem: pki.caPem,
        user: who.user,
        token: who.token,
        ...(context !== undefined ? { context } : {}),
      },
    ]),
    { mode: 0o600 },
  );
}

/**
 * Waits until kube-controller-manager has made the `default` ServiceAccount of namespace `default`
 * (its serviceaccount-controller's first work); throws with its log tail when it exits or the
 * deadline passes.
 */
async function waitForControllerManager(
  proc: ManagedProcess,
  server: string,
  pki: LocalPki,
  admin: TokenIdentity,
  timeoutMs: number,
): Promise<void> {
  try {
    await waitFor(
      async () => {
        if (proc.exitStatus !== undefined) throw new ExitedError(proc);
        const res = await simpleRequest(`${server}/api/v1/namespaces/default/serviceaccounts/default`, {
          ca: pki.caPem,
          headers: { authorization: `Bearer ${admin.token}` },
          timeoutMs: 5000,
        });
        return res.status === 200 ? true : undefined;
      },
      {
        timeoutMs,
        description: 'kube-controller-manager to make the default ServiceAccount',
        intervalMs: 100,
      },
    );
  } catch (err) {
    throw new Error(
      `kube-controller-manager did not start working: ${describe(err)}\n--- ${proc.logFile} ---\n${proc.tail()}`,
      { cause: err },
    );
  }
}

class ExitedError extends AbortWait {
  constructor(proc: ManagedProcess) {
    const s = proc.exitStatus;
    super(`${proc.name} exited (code ${String(s?.code)}, signal ${String(s?.signal)}):\n${proc.tail()}`);
  }
}

function describe(err: unknown): string {
  if (err instanceof Error)
    return err.cause instanceof Error ? `${err.message}\n${err.cause.message}` : err.message;
  return String(err);
}
