// The cluster and AWS endpoint `skylift dev` works against: the ones the user
// named, and local ones (control plane, moto) for whatever was not named.
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AlbDataPlane, type ServedListener } from './albDataPlane/dataPlane.ts';
import { startControlPlane, type ControlPlane } from './controlplane.ts';
import { emulatorEnv, startEmulator, type Emulator } from './emulator.ts';
import { startNodeCluster, type NodeCluster } from './nodeCluster.ts';
import { startLocalStack } from './stack.ts';

/** Options for {@link startDevStack}. */
export interface DevStackOptions {
  /** Working directory (`.skylift/dev`): logs, pid files, and the files written below. */
  readonly dir: string;
  /** An existing cluster's kubeconfig; unset: start a local control plane. */
  readonly kubeconfig?: string | undefined;
  /** An existing AWS-compatible endpoint; unset: start moto. */
  readonly awsEndpoint?: string | undefined;
  /** Start a node cluster (a real node; moto where Pods reach it). Not with `kubeconfig` or `awsEndpoint`. */
  readonly node?: boolean;
  /** Progress lines while a node cluster starts. */
  readonly log?: (line: string) => void;
  /**
   * With a node cluster: called with the listeners the ALB data plane serves whenever one is
   * served or closed (its `onListenersChanged`; the conformance runner's dial map).
   */
  readonly onAlbListenersChanged?: (listeners: readonly ServedListener[]) => void;
}

/** What `skylift dev` runs against, and which parts of it it started. */
export interface DevStack {
  /** The kubeconfig to use: the given one, or `<dir>/kubeconfig` (admin) for a started control plane. */
  readonly kubeconfig: string;
  /** The AWS endpoint: the given one, or the started moto's. */
  readonly awsEndpoint: string;
  /** Set when this stack started the control plane. */
  readonly controlPlane: ControlPlane | undefined;
  /** Set when this stack started moto; `<dir>/aws.env` then points at it. */
  readonly emulator: Emulator | undefined;
  /** `<dir>/aws.env` when moto was started here. */
  readonly awsEnvFile: string | undefined;
  /** Set when this stack is a node cluster. */
  readonly nodeCluster: NodeCluster | undefined;
  /**
   * With a node cluster: the ALB data plane serving moto's load balancers on loopback, forwarding
   * to the Pod IPs their target groups hold (docs/development.md, "The ALB data plane").
   */
  readonly albDataPlane: AlbDataPlane | undefined;
  /** Stops what this stack started (nothing when everything was given). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts what the options do not name: both parts through startLocalStack
 * (exactly what `make dev` always started), or only the control plane, or
 * only moto, or nothing. Writes `<dir>/kubeconfig` for a started control
 * plane and `<dir>/aws.env` for a started emulator. Stops what it started if
 * a part fails to start.
 */
export async function startDevStack(opts: DevStackOptions): Promise<DevStack> {
  await mkdir(opts.dir, { recursive: true });
  if (opts.node === true) {
    if (opts.kubeconfig !== undefined || opts.awsEndpoint !== undefined)
      throw new Error('a node cluster starts its own control plane and moto');
    const cluster = await startNodeCluster({
      dir: opts.dir,
      ...(opts.log !== undefined ? { log: opts.log } : {}),
    });
    // Target states and listeners it serves go to its log; the host reaches Pod IPs through the node's veth.
    const dataPlaneLog = createWriteStream(join(opts.dir, 'alb-data-plane.log'), { flags: 'a' });
    let albDataPlane: AlbDataPlane | undefined;
    const stopNodeStack = async (): Promise<void> => {
      await albDataPlane?.stop();
      await new Promise<void>((closed) => dataPlaneLog.end(closed));
      await cluster.stop();
    };
    try {
      const kubeconfig = join(opts.dir, 'kubeconfig');
      await copyFile(cluster.controlPlane.kubeconfigPath('admin'), kubeconfig);
      const awsEnvFile = join(opts.dir, 'aws.env');
      await writeAwsEnv(awsEnvFile, cluster.emulator.endpoint);
      albDataPlane = await AlbDataPlane.start({
        endpoint: cluster.emulator.endpoint,
        log: (line) => dataPlaneLog.write(`${new Date().toISOString()} ${line}\n`),
        ...(opts.onAlbListenersChanged !== undefined
          ? { onListenersChanged: opts.onAlbListenersChanged }
          : {}),
      });
      // For clients of its HTTPS listeners: it signs the stand-ins of ACM-issued certificates.
      await writeFile(join(opts.dir, 'alb-data-plane-ca.pem'), albDataPlane.localCaPem);
      let stopped = false;
      return {
        kubeconfig,
        awsEndpoint: cluster.emulator.endpoint,
        controlPlane: cluster.controlPlane,
        emulator: cluster.emulator,
        awsEnvFile,
        nodeCluster: cluster,
        albDataPlane,
        async stop() {
          if (stopped) return;
          stopped = true;
          await stopNodeStack();
        },
      };
    } catch (err) {
      await stopNodeStack();
      throw err;
    }
  }
  if (opts.kubeconfig === undefined && opts.awsEndpoint === undefined) {
    const stack = await startLocalStack({ dir: opts.dir, controllerManager: true });
    return {
      kubeconfig: stack.kubeconfig,
      awsEndpoint: stack.emulator.endpoint,
      controlPlane: stack.controlPlane,
      emulator: stack.emulator,
      awsEnvFile: stack.awsEnvFile,
      nodeCluster: undefined,
      albDataPlane: undefined,
      stop: () => stack.stop(),
    };
  }
  let controlPlane: ControlPlane | undefined;
  let emulator: Emulator | undefined;
  let kubeconfig = opts.kubeconfig;
  let awsEndpoint = opts.awsEndpoint;
  let awsEnvFile: string | undefined;
  try {
    if (kubeconfig === undefined) {
      controlPlane = await startControlPlane({ dir: join(opts.dir, 'cluster'), controllerManager: true });
      kubeconfig = join(opts.dir, 'kubeconfig');
      await copyFile(controlPlane.kubeconfigPath('admin'), kubeconfig);
    }
    if (awsEndpoint === undefined) {
      emulator = await startEmulator({ dir: join(opts.dir, 'emulator') });
      awsEndpoint = emulator.endpoint;
      awsEnvFile = join(opts.dir, 'aws.env');
      await writeAwsEnv(awsEnvFile, awsEndpoint);
    }
  } catch (err) {
    await emulator?.stop();
    await controlPlane?.stop();
    throw err;
  }
  let stopped = false;
  const started = { controlPlane, emulator };
  return {
    kubeconfig,
    awsEndpoint,
    ...started,
    awsEnvFile,
    nodeCluster: undefined,
    albDataPlane: undefined,
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([started.emulator?.stop(), started.controlPlane?.stop()]);
    },
  };
}

/** Writes the `export KEY=value` lines that point AWS tools at an emulator (same format as startLocalStack's). */
async function writeAwsEnv(file: string, endpoint: string): Promise<void> {
  await writeFile(
    file,
    Object.entries(emulatorEnv(endpoint))
      .map(([k, v]) => `export ${k}=${v}\n`)
      .join(''),
  );
}
