// A local cluster with one real node: the control plane in node mode, the
// node (containerd, kubelet, kube-proxy) in a network namespace of its own,
// and moto listening where both the host and the Pods reach it. What
// `skylift dev --node` and the node tests run on.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from './controlplane.ts';
import { startEmulator, type Emulator } from './emulator.ts';
import { cleanupNode, startNode, type RunningNode } from './node.ts';
import { claimNodeSlot, defaultSlotDir, type NodeSlot, type NodeSlotAddresses } from './nodeSlot.ts';
import { pinnedVersions, toolPaths } from './paths.ts';
import { reapStaleProcesses } from './reaper.ts';

/** The images hack/install-node-runtime.sh builds, as imported into the node's containerd. */
export const nodeImages = {
  pause: { name: 'localhost/skylift/pause:1', archive: 'pause.oci.tar' },
  hello: { name: 'localhost/skylift/hello:1', archive: 'hello.oci.tar' },
} as const;

/**
 * The Gateway API conformance suite's echo server, built from its module
 * (`sigs.k8s.io/gateway-api/conformance/echo-basic` at GATEWAY_API_VERSION) by
 * hack/install-node-runtime.sh into one archive holding it under every name the
 * suite's manifests use (`names`, the same list as the script's ECHO_BASIC_IMAGES).
 * Every node cluster imports it, so the suite's backends start without a registry.
 */
export const echoBasicImage = {
  names: [
    'registry.k8s.io/gateway-api/echo-basic:v1.5.1',
    'registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.2',
    'registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.3',
  ],
  archive: 'echo-basic.oci.tar',
} as const;

/**
 * CoreDNS as the conformance suite's base manifests run it (Deployment `coredns` in
 * `gateway-conformance-infra`, for the UDPRoute tests; setup waits for every Pod there to be
 * Ready), built by hack/install-node-runtime.sh from `github.com/coredns/coredns` at the version
 * hack/coredns/go.mod pins, with the plugins its Corefile uses, as upstream's image runs: user
 * 65532, the binary carrying the file capability `cap_net_bind_service=+ep` so it binds port 53
 * under the manifest's securityContext. `name` is the script's COREDNS_IMAGE. Every node cluster
 * imports it.
 */
export const corednsImage = {
  name: 'registry.k8s.io/coredns/coredns:v1.12.2',
  archive: 'coredns.oci.tar',
} as const;

/** The Node's name in every node cluster. */
export const nodeName = 'skylift-node';

/** Options for {@link startNodeCluster}. */
export interface NodeClusterOptions {
  /** Run directory: control plane, node and emulator state and logs go below it. */
  readonly dir: string;
  /** More OCI archives to import into the node's containerd (e.g. the operator image). */
  readonly extraImages?: readonly string[];
  /** Progress lines (phase timings). */
  readonly log?: (line: string) => void;
  /** Where slot claims live (default /run/skylift/node-slots; tests use their own). */
  readonly slotDir?: string;
}

/** A running node cluster. */
export interface NodeCluster {
  readonly controlPlane: ControlPlane;
  readonly node: RunningNode;
  /** moto, at `http://<addresses.hostIp>:<port>`: reachable from the host and from Pods. */
  readonly emulator: Emulator;
  /** The slot's addresses: Pod and Service CIDRs, host and node IPs, network namespace. */
  readonly addresses: NodeSlotAddresses;
  readonly nodeName: string;
  /** Milliseconds per phase: controlPlaneMs, nodeMs, emulatorMs, plus the node's own. */
  readonly timings: Record<string, number>;
  /** Drains and stops the node, then moto and the control plane, and frees the slot. Idempotent. */
  stop(): Promise<void>;
}

/** The kubelet's directory and the image archives a node cluster imports (the extra ones last). */
function nodeClusterFiles(extraImages: readonly string[] = []): {
  readonly kubeletBinDir: string;
  readonly images: readonly string[];
} {
  const cacheDir = toolPaths().cacheDir;
  const imageDir = join(cacheDir, 'node-images');
  return {
    kubeletBinDir: join(cacheDir, 'kubelet', pinnedVersions().KUBE_VERSION),
    images: [
      join(imageDir, nodeImages.pause.archive),
      join(imageDir, nodeImages.hello.archive),
      join(imageDir, echoBasicImage.archive),
      join(imageDir, corednsImage.archive),
      ...extraImages,
    ],
  };
}

/**
 * Why this machine cannot start a node cluster now — not root, or the kubelet or an image archive
 * (also of `extraImages`) missing — as one sentence saying what to do; undefined when it can.
 * What {@link startNodeCluster} checks first; `make bench` skips its node scenario with this reason.
 */
export async function nodeClusterUnavailable(
  extraImages: readonly string[] = [],
): Promise<string | undefined> {
  if (process.getuid?.() !== 0)
    return 'a node cluster needs root (containerd, network namespaces, cgroups); run as root or leave --node out';
  const { kubeletBinDir, images } = nodeClusterFiles(extraImages);
  for (const needed of [join(kubeletBinDir, 'kubelet'), ...images]) {
    const present = await access(needed).then(
      () => true,
      () => false,
    );
    if (!present)
      return `${needed} is missing: run make node-runtime (hack/install-node-runtime.sh)${extraImages.includes(needed) ? ' or make image' : ''}`;
  }
  return undefined;
}

/**
 * Starts a node cluster. Needs root, the node packages and the kubelet and
 * images from hack/install-node-runtime.sh (`make node-runtime`); says so
 * when any is missing. Claims a free slot first, sweeping what a killed
 * earlier owner of that slot left behind. Stops what it started if a part
 * fails. May take a few seconds; blocks until the node is Ready and moto answers.
 */
export async function startNodeCluster(opts: NodeClusterOptions): Promise<NodeCluster> {
  const log = opts.log ?? (() => undefined);
  const missing = await nodeClusterUnavailable(opts.extraImages);
  if (missing !== undefined) throw new Error(missing);
  const { kubeletBinDir, images } = nodeClusterFiles(opts.extraImages);

  const nodeDir = join(opts.dir, 'node');
  const slot: NodeSlot = await claimNodeSlot(nodeDir, opts.slotDir ?? defaultSlotDir);
  const a = slot.addresses;
  const netns = { name: a.netns, hostVeth: a.hostVeth, nodeIp: a.nodeIp, hostRoutes: [a.serviceCidr] };
  const nodeOpts = { netns, cgroupRoot: a.cgroupRoot, bridge: 'skylift0', kubeletBinDir };
  const timings: Record<string, number> = {};
  let controlPlane: ControlPlane | undefined;
  let node: RunningNode | undefined;
  let emulator: Emulator | undefined;
  const stopAll = async (): Promise<void> => {
    if (node !== undefined) await node.stop();
    await emulator?.stop();
    await controlPlane?.stop();
    await slot.release();
  };
  try {
    if (slot.staleDir !== undefined && slot.staleDir !== nodeDir) {
      log(`slot ${a.index} was held by a run that died; sweeping what it left in ${slot.staleDir}`);
      await reapStaleProcesses(slot.staleDir);
      await cleanupNode({ ...nodeOpts, dir: slot.staleDir }, log);
    }
    let t0 = Date.now();
    controlPlane = await startControlPlane({
      dir: join(opts.dir, 'cluster'),
      controllerManager: true,
      node: {
        nodeName,
        hostIp: a.hostIp,
        serviceCidr: a.serviceCidr,
        schedulerBin: join(kubeletBinDir, 'kube-scheduler'),
      },
    });
    timings.controlPlaneMs = Date.now() - t0;
    log(`control plane up in ${timings.controlPlaneMs} ms at ${controlPlane.server}`);
    t0 = Date.now();
    node = await startNode({
      ...nodeOpts,
      dir: nodeDir,
      controlPlane,
      nodeName,
      hostIp: a.hostIp,
      podCidr: a.podCidr,
      images,
      pauseImage: nodeImages.pause.name,
      log,
    });
    timings.nodeMs = Date.now() - t0;
    // moto listens on the veth's host end, which exists once the node does.
    t0 = Date.now();
    emulator = await startEmulator({ dir: join(opts.dir, 'emulator'), host: a.hostIp });
    timings.emulatorMs = Date.now() - t0;
    log(`moto up in ${timings.emulatorMs} ms at ${emulator.endpoint}`);
  } catch (err) {
    await stopAll();
    throw err;
  }
  let stopped = false;
  return {
    controlPlane,
    node,
    emulator,
    addresses: a,
    nodeName,
    timings: { ...timings, ...node.timings },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}
