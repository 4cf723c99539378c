// One real Kubernetes node beside the local control plane: containerd (own
// root, state and socket), the CNI bridge with host-local IPAM, kubelet and
// kube-proxy. dev/nodeCluster.ts puts it together with the control plane
// and moto for `skylift dev --node` and the node tests.
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ControlPlane } from './controlplane.ts';
import { simpleRequest } from './http.ts';
import { importImages } from './images.ts';
import { freePort } from './ports.ts';
import { ManagedProcess } from './process.ts';
import { AbortWait, waitFor } from './wait.ts';

const run = promisify(execFile);

/** Options for {@link startNode}. */
export interface NodeOptions {
  /** Run directory: containerd root/state/socket, kubelet root, CNI state, logs. */
  readonly dir: string;
  /** A control plane started with `node: { nodeName, hostIp }`. */
  readonly controlPlane: ControlPlane;
  readonly nodeName: string;
  /**
   * The host as the node sees it (kube-apiserver advertises it): the host end
   * of the veth pair, e.g. 10.244.255.1.
   */
  readonly hostIp: string;
  /** The node's own network namespace (see {@link NodeNetns}). */
  readonly netns: NodeNetns;
  /** The kubelet's --cgroup-root (default /skylift); one per node that runs at the same time. */
  readonly cgroupRoot?: string;
  /** The node's Pod CIDR, a /24, e.g. 10.244.0.0/24. */
  readonly podCidr: string;
  /** Linux bridge name (≤ 15 characters). */
  readonly bridge: string;
  /** Directory with kubelet and kube-proxy (hack/install-node-runtime.sh). */
  readonly kubeletBinDir: string;
  /** OCI archives to import into containerd's k8s.io namespace (pause first; the operator's: `skyliftImage()`). */
  readonly images: readonly string[];
  /** The sandbox image's name, as imported. */
  readonly pauseImage: string;
  /** Report progress (phase timings). */
  readonly log?: (line: string) => void;
}

/**
 * The node's own network namespace: containerd, the kubelet, kube-proxy, the
 * CNI bridge, the Pod veths, their iptables chains and `ip_forward` live in
 * it; a veth pair with a small transfer net joins it to the host. The host
 * routes the Pod CIDR (and `hostRoutes`) into it; the namespace's default
 * route is the host end, so Pods reach kube-apiserver at `hostIp`.
 */
export interface NodeNetns {
  /** Name under /run/netns, e.g. skylift-0. */
  readonly name: string;
  /** Host end of the veth pair (≤ 15 characters); it gets `hostIp`. */
  readonly hostVeth: string;
  /** The namespace end's address, in the transfer net with `hostIp`: the Node's InternalIP. */
  readonly nodeIp: string;
  /** Prefix length of the transfer net (default 30). */
  readonly prefix?: number;
  /** More CIDRs the host routes into the namespace besides the Pod CIDR (e.g. the Service CIDR). */
  readonly hostRoutes?: readonly string[];
}

/** A running node. */
export interface RunningNode {
  readonly containerdSocket: string;
  readonly timings: Record<string, number>;
  /** Deletes the Pods, stops kube-proxy, kubelet and containerd, and cleans up mounts, netns, bridge, cgroups. */
  stop(): Promise<void>;
}

const defaultCgroupRoot = '/skylift';

/** Runs `command` in the node's network namespace (nsenter execs it: same pid). */
function inNetns(
  netns: NodeNetns,
  command: string,
  args: readonly string[],
): { command: string; args: string[]; pidFileCommand: string } {
  // nsenter, not `ip netns exec`: that remounts /sys and hides the cgroup v1 hierarchies.
  return {
    command: 'nsenter',
    args: [`--net=/run/netns/${netns.name}`, '--', command, ...args],
    pidFileCommand: command,
  };
}

/** The first address of a CIDR (the bridge's gateway), e.g. 10.244.0.0/24 → 10.244.0.1. */
function firstAddress(cidr: string): string {
  const [base = ''] = cidr.split('/');
  const octets = base.split('.').map(Number);
  octets[3] = (octets[3] ?? 0) + 1;
  return octets.join('.');
}

export async function startNode(opts: NodeOptions): Promise<RunningNode> {
  const log = opts.log ?? (() => undefined);
  const cgroupRoot = opts.cgroupRoot ?? defaultCgroupRoot;
  const netns = opts.netns;
  // The bridge's address: the Pod CIDR's first.
  const gateway = firstAddress(opts.podCidr);
  // The kubelet's and kube-proxy's address (the Node's InternalIP).
  const nodeIp = netns.nodeIp;
  const timings: Record<string, number> = {};
  const d = (...p: string[]): string => join(opts.dir, ...p);
  // A new cluster each run: no IP leases, pod state or images from the last one.
  await cleanupNode(opts, log);
  for (const sub of ['cni', 'containerd', 'kubelet', 'pod-logs'])
    await rm(d(sub), { recursive: true, force: true });
  for (const sub of [
    'logs',
    'containerd',
    'cni/net.d',
    'cni/ipam',
    'kubelet/root',
    'kubelet/pki',
    'pod-logs',
  ])
    await mkdir(d(sub), { recursive: true });
  const socket = d('containerd', 'containerd.sock');
  if (socket.length > 100) throw new Error(`containerd socket path too long for a unix socket: ${socket}`);

  // The bridge exists before the Pods need it, with the gateway address; the
  // CNI bridge plugin adopts it. IPv4 forwarding, which the bridge plugin
  // (isGateway) turns on, is the namespace's setting and goes with it.
  let t0 = Date.now();
  await ensureNetns(netns, opts.hostIp, opts.podCidr);
  timings.netnsMs = Date.now() - t0;
  log(`network namespace ${netns.name} ready in ${timings.netnsMs} ms`);
  await ensureBridge(opts.bridge, gateway, opts.podCidr, netns);
  await ensureCgroupRoot(cgroupRoot);

  const cniConf = {
    cniVersion: '1.0.0',
    name: 'skylift',
    plugins: [
      {
        type: 'bridge',
        bridge: opts.bridge,
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: opts.podCidr, gateway }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: d('cni', 'ipam'),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  await writeFile(d('cni', 'net.d', '10-skylift.conflist'), JSON.stringify(cniConf, null, 2));

  const containerdConfig = `version = 2
root = "${d('containerd', 'root')}"
state = "${d('containerd', 'state')}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${d('containerd', 'opt')}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${opts.pauseImage}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  # This sandbox has no CAP_SYS_RESOURCE: runc cannot set the sandbox's
  # oom_score_adj of -998 ("can't get final child's PID from pipe: EOF");
  # clamp every container's to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "${process.env.SKYLIFT_NODE_SNAPSHOTTER ?? 'overlayfs'}"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false${process.env.SKYLIFT_RUNC_BINARY !== undefined ? `\n        BinaryName = "${process.env.SKYLIFT_RUNC_BINARY}"` : ''}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${d('cni', 'net.d')}"
`;
  await writeFile(d('containerd', 'config.toml'), containerdConfig);

  const started: ManagedProcess[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of started.reverse()) await p.stop(10_000);
  };
  try {
    t0 = Date.now();
    const containerd = await ManagedProcess.start({
      name: 'containerd',
      ...inNetns(netns, 'containerd', ['--config', d('containerd', 'config.toml'), '--log-level', 'info']),
      logFile: d('logs', 'containerd.log'),
      pidFile: d('logs', 'containerd.pid'),
    });
    started.push(containerd);
    await waitFor(
      async () => {
        if (containerd.exitStatus !== undefined)
          throw new AbortWait(`containerd exited:\n${containerd.tail()}`);
        await ctr(socket, ['version']);
        return true;
      },
      { timeoutMs: 30_000, description: 'containerd answering', intervalMs: 100 },
    );
    timings.containerdReadyMs = Date.now() - t0;
    log(`containerd ready in ${timings.containerdReadyMs} ms`);

    t0 = Date.now();
    await importImages(socket, opts.images);
    timings.imageImportMs = Date.now() - t0;
    log(`imported ${opts.images.length} images in ${timings.imageImportMs} ms`);

    const cp = opts.controlPlane;
    await writeFile(d('kubelet', 'pki', 'ca.crt'), cp.caPem);
    const kubeletPort = await freePort();
    const kubeletConfig = {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: nodeIp,
      port: kubeletPort,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: await freePort(),
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: d('kubelet', 'pki', 'ca.crt') },
      },
      authorization: { mode: 'Webhook' },
      containerRuntimeEndpoint: `unix://${socket}`,
      cgroupDriver: 'cgroupfs',
      cgroupRoot,
      // Kubernetes 1.35+ refuses cgroup v1 unless told otherwise; this machine has v1 controllers.
      failCgroupV1: false,
      failSwapOn: false,
      podCIDR: opts.podCidr,
      podLogsDir: d('pod-logs'),
      volumePluginDir: d('kubelet', 'volume-plugins'),
      resolvConf: '/etc/resolv.conf',
      registerNode: true,
      serializeImagePulls: false,
      // Locally imported images cannot be pulled again: never collect them.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: {
        'memory.available': '100Mi',
        'nodefs.available': '1%',
        'imagefs.available': '1%',
        'nodefs.inodesFree': '1%',
      },
      // A dev node: no pressure from the host's own processes.
      protectKernelDefaults: false,
      shutdownGracePeriod: '0s',
      nodeStatusUpdateFrequency: '4s',
      syncFrequency: '10s',
      fileCheckFrequency: '0s',
    };
    await writeFile(d('kubelet', 'config.json'), JSON.stringify(kubeletConfig, null, 2));

    t0 = Date.now();
    const kubelet = await ManagedProcess.start({
      name: 'kubelet',
      ...inNetns(netns, join(opts.kubeletBinDir, 'kubelet'), [
        `--config=${d('kubelet', 'config.json')}`,
        `--kubeconfig=${cp.nodeKubeconfigPath('kubelet')}`,
        `--root-dir=${d('kubelet', 'root')}`,
        `--cert-dir=${d('kubelet', 'pki')}`,
        `--hostname-override=${opts.nodeName}`,
        `--node-ip=${nodeIp}`,
        '--v=2',
      ]),
      logFile: d('logs', 'kubelet.log'),
      pidFile: d('logs', 'kubelet.pid'),
    });
    started.push(kubelet);

    const kubeProxyConfig = {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: cp.nodeKubeconfigPath('kubeProxy') },
      mode: 'iptables',
      clusterCIDR: opts.podCidr,
      hostnameOverride: opts.nodeName,
      bindAddress: nodeIp,
      healthzBindAddress: `127.0.0.1:${await freePort()}`,
      metricsBindAddress: `127.0.0.1:${await freePort()}`,
      // Leave the host's conntrack sysctls alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    };
    await writeFile(d('kube-proxy.json'), JSON.stringify(kubeProxyConfig, null, 2));
    const kubeProxy = await ManagedProcess.start({
      name: 'kube-proxy',
      ...inNetns(netns, join(opts.kubeletBinDir, 'kube-proxy'), [
        `--config=${d('kube-proxy.json')}`,
        '--v=1',
      ]),
      logFile: d('logs', 'kube-proxy.log'),
      pidFile: d('logs', 'kube-proxy.pid'),
    });
    started.push(kubeProxy);

    await waitFor(
      async () => {
        if (kubelet.exitStatus !== undefined) throw new AbortWait(`kubelet exited:\n${kubelet.tail()}`);
        const node = await getJson(cp, `/api/v1/nodes/${opts.nodeName}`);
        const conditions = (node?.status as { conditions?: { type: string; status: string }[] } | undefined)
          ?.conditions;
        return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true ? true : undefined;
      },
      { timeoutMs: 120_000, description: `node ${opts.nodeName} Ready`, intervalMs: 200 },
    );
    timings.kubeletToReadyMs = Date.now() - t0;
    log(`node ${opts.nodeName} Ready ${timings.kubeletToReadyMs} ms after kubelet start`);

    let stopped = false;
    return {
      containerdSocket: socket,
      timings,
      async stop() {
        if (stopped) return;
        stopped = true;
        await drainPods(cp, opts.nodeName, log).catch((err: unknown) => {
          log(`draining Pods failed: ${String(err)}`);
        });
        await stopAll();
        await cleanupNode(opts, log);
      },
    };
  } catch (err) {
    await stopAll();
    await cleanupNode(opts, log);
    throw err;
  }
}

async function ctr(socket: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run('ctr', ['--address', socket, ...args], { timeout: 120_000 });
  return stdout;
}

async function getJson(cp: ControlPlane, path: string): Promise<Record<string, unknown> | undefined> {
  const token = cp.identities.admin.token;
  const res = await simpleRequest(`${cp.server}${path}`, {
    ca: cp.caPem,
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Record<string, unknown>;
}

/**
 * Deletes every Pod on the node (grace 0) and waits until the kubelet has torn
 * them down, so the CNI plugin releases IPs and iptables rules and nothing is
 * left mounted.
 */
async function drainPods(cp: ControlPlane, nodeName: string, log: (line: string) => void): Promise<void> {
  const token = cp.identities.admin.token;
  const list = async (): Promise<{ namespace: string; name: string }[]> => {
    const res = await getJson(cp, `/api/v1/pods?fieldSelector=spec.nodeName%3D${nodeName}`);
    const items = (res?.items ?? []) as { metadata: { namespace: string; name: string } }[];
    return items.map((i) => i.metadata);
  };
  const pods = await list();
  if (pods.length === 0) return;
  log(`cordoning ${nodeName} and deleting its ${pods.length} Pods`);
  // Cordoned, the node gets no replacement Pods from the ReplicaSets. Grace 1,
  // not 0: with 0 the apiserver forgets the Pod at once and we could not wait
  // for the kubelet to stop its sandbox (CNI DEL releases IP and iptables rules).
  await simpleRequest(`${cp.server}/api/v1/nodes/${nodeName}`, {
    method: 'PATCH',
    ca: cp.caPem,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ spec: { unschedulable: true } }),
  });
  for (const p of pods) {
    const res = await simpleRequest(`${cp.server}/api/v1/namespaces/${p.namespace}/pods/${p.name}`, {
      method: 'DELETE',
      ca: cp.caPem,
      // Node sends a DELETE's body unframed unless told its length.
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': '24',
      },
      body: JSON.stringify({ gracePeriodSeconds: 1 }),
    });
    if (res.status >= 300)
      log(`DELETE pod ${p.namespace}/${p.name}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
  }
  await waitFor(async () => ((await list()).length === 0 ? true : undefined), {
    timeoutMs: 30_000,
    description: 'Pods gone from the node',
    intervalMs: 250,
  });
}

/** Creates the bridge with the gateway address unless it is there. */
async function ensureBridge(
  bridge: string,
  gateway: string,
  podCidr: string,
  netns: NodeNetns,
): Promise<void> {
  const ip = (...args: string[]): Promise<{ stdout: string }> => run('ip', ['-n', netns.name, ...args]);
  const prefix = podCidr.split('/')[1] ?? '24';
  const exists = await ip('link', 'show', bridge).then(
    () => true,
    () => false,
  );
  if (!exists) await ip('link', 'add', bridge, 'type', 'bridge');
  const { stdout } = await ip('-4', 'addr', 'show', 'dev', bridge);
  if (!stdout.includes(`${gateway}/`)) await ip('addr', 'add', `${gateway}/${prefix}`, 'dev', bridge);
  await ip('link', 'set', bridge, 'up');
}

/**
 * Creates the namespace and the veth pair (host end `hostVeth` with `hostIp`,
 * namespace end `eth0` with `nodeIp`), the namespace's default route via the
 * host, IPv4 forwarding inside it, and the host's routes into it.
 */
async function ensureNetns(netns: NodeNetns, hostIp: string, podCidr: string): Promise<void> {
  const prefix = netns.prefix ?? 30;
  const inNs = (...args: string[]): Promise<{ stdout: string }> => run('ip', ['-n', netns.name, ...args]);
  await run('ip', ['netns', 'add', netns.name]);
  await run('ip', [
    'link',
    'add',
    netns.hostVeth,
    'type',
    'veth',
    'peer',
    'name',
    'eth0',
    'netns',
    netns.name,
  ]);
  await run('ip', ['addr', 'add', `${hostIp}/${prefix}`, 'dev', netns.hostVeth]);
  await run('ip', ['link', 'set', netns.hostVeth, 'up']);
  await inNs('link', 'set', 'lo', 'up');
  await inNs('addr', 'add', `${netns.nodeIp}/${prefix}`, 'dev', 'eth0');
  await inNs('link', 'set', 'eth0', 'up');
  await inNs('route', 'add', 'default', 'via', hostIp);
  // /proc/sys/net belongs to the reader's network namespace.
  await run('nsenter', [`--net=/run/netns/${netns.name}`, '--', 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  for (const cidr of [podCidr, ...(netns.hostRoutes ?? [])])
    await run('ip', ['route', 'replace', cidr, 'via', netns.nodeIp, 'dev', netns.hostVeth]);
}

/**
 * After containerd and kubelet have stopped: kills leftover shims, unmounts
 * whatever is mounted under the run directory (rootfs overlays, netns,
 * projected volumes, shm), deletes the network namespace with everything in
 * it and the pod cgroups. Best effort; logs what fails.
 */
export async function cleanupNode(
  opts: Pick<NodeOptions, 'dir' | 'netns' | 'cgroupRoot'>,
  log: (line: string) => void,
): Promise<void> {
  const socket = join(opts.dir, 'containerd', 'containerd.sock');
  // Shims outlive containerd by design; ours carry our socket in their argv.
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (argv.includes('containerd-shim') && argv.includes(socket)) {
      try {
        process.kill(-Number(pid), 'SIGKILL');
      } catch {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      log(`killed leftover shim ${pid}`);
    }
  }
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(opts.dir + '/'))
    .reverse();
  for (const m of mounts) {
    await run('umount', ['-l', m]).catch((err: unknown) => {
      log(`umount ${m}: ${String(err)}`);
    });
  }
  if (mounts.length > 0) log(`unmounted ${mounts.length} mounts under ${opts.dir}`);
  // Everything else network is inside the namespace and goes with it: the
  // bridge, Pod veths, CNI and kube-proxy chains, ip_forward. Deleting the
  // host end of the pair deletes both ends (and the host's routes via it)
  // at once; the namespace itself is freed once its last process is gone.
  await run('ip', ['link', 'del', opts.netns.hostVeth]).catch(() => undefined);
  await run('ip', ['netns', 'del', opts.netns.name]).catch(() => undefined);
  await removeCgroups(opts.cgroupRoot ?? defaultCgroupRoot, log);
  await rm(join(opts.dir, 'containerd', 'state'), { recursive: true, force: true }).catch(() => undefined);
}

/**
 * The kubelet wants its --cgroup-root to exist in every cgroup v1 hierarchy
 * (it creates kubepods/… below it). cpuset needs cpus and mems copied from the
 * parent before anything can join.
 */
async function ensureCgroupRoot(cgroupRoot: string): Promise<void> {
  for (const c of await readdir('/sys/fs/cgroup').catch(() => [] as string[])) {
    const parent = join('/sys/fs/cgroup', c);
    // Only mounted hierarchies (cgroup.procs present), not stray files in the tmpfs.
    const isHierarchy = await readFile(join(parent, 'cgroup.procs'), 'utf8').then(
      () => true,
      () => false,
    );
    if (!isHierarchy || c === 'unified') continue;
    const dir = join(parent, cgroupRoot);
    await mkdir(dir, { recursive: true });
    if (c === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        const cur = (await readFile(join(dir, f), 'utf8')).trim();
        if (cur === '') await writeFile(join(dir, f), await readFile(join(parent, f), 'utf8'));
      }
    }
  }
}

async function removeCgroups(cgroupRoot: string, log: (line: string) => void): Promise<void> {
  const controllers = await readdir('/sys/fs/cgroup').catch(() => [] as string[]);
  // Container processes outlive a killed shim: whatever is still in our pids
  // hierarchy is ours and goes first.
  let killed = 0;
  for (const dir of await walkDirs(join('/sys/fs/cgroup', 'pids', cgroupRoot))) {
    const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const pid of procs.split('\n').filter((l) => l !== '')) {
      try {
        process.kill(Number(pid), 'SIGKILL');
        killed++;
      } catch {
        /* gone */
      }
    }
  }
  if (killed > 0) {
    log(`killed ${killed} leftover container processes`);
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const c of controllers) {
    const root = join('/sys/fs/cgroup', c, cgroupRoot);
    const dirs = await walkDirs(root);
    for (const dir of dirs.reverse()) {
      // cgroup directories go with rmdir once empty of processes and children.
      await rmdir(dir).catch((err: unknown) => {
        log(`rmdir ${dir}: ${String(err)}`);
      });
    }
  }
}

async function walkDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    out.push(dir);
    for (const e of entries) if (e.isDirectory()) await visit(join(dir, e.name));
  };
  await visit(root);
  return out;
}
