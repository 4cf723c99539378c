import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from './controlplane.ts';
import { emulatorEnv, startEmulator, type Emulator } from './emulator.ts';

/** Options for {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Working directory (e.g. `.skylift/dev`); kubeconfig and aws.env are written here. */
  readonly dir: string;
  readonly controllerManager?: boolean;
}

/** The local control plane plus the AWS emulator, as `make dev` and the tests use them. */
export interface LocalStack {
  readonly controlPlane: ControlPlane;
  readonly emulator: Emulator;
  /** Admin kubeconfig at `<dir>/kubeconfig`. */
  readonly kubeconfig: string;
  /** `<dir>/aws.env`: `export AWS_ENDPOINT_URL=… AWS_ACCESS_KEY_ID=…`, to `source`. */
  readonly awsEnvFile: string;
  /** Stops the emulator and the control plane. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts kube-apiserver + etcd (+ kube-controller-manager) and moto, and
 * writes `<dir>/kubeconfig` and `<dir>/aws.env`. Stops what it started if any
 * part fails.
 */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  await mkdir(opts.dir, { recursive: true });
  const [cp, emu] = await Promise.allSettled([
    startControlPlane({ dir: join(opts.dir, 'cluster'), controllerManager: opts.controllerManager ?? true }),
    startEmulator({ dir: join(opts.dir, 'emulator') }),
  ]);
  if (cp.status === 'rejected' || emu.status === 'rejected') {
    if (cp.status === 'fulfilled') await cp.value.stop();
    if (emu.status === 'fulfilled') await emu.value.stop();
    const reason: unknown =
      cp.status === 'rejected' ? cp.reason : emu.status === 'rejected' ? emu.reason : undefined;
    throw reason instanceof Error ? reason : new Error(String(reason));
  }
  const controlPlane = cp.value;
  const emulator = emu.value;
  const kubeconfig = join(opts.dir, 'kubeconfig');
  await copyFile(controlPlane.kubeconfigPath('admin'), kubeconfig);
  const awsEnvFile = join(opts.dir, 'aws.env');
  await writeFile(
    awsEnvFile,
    Object.entries(emulatorEnv(emulator.endpoint))
      .map(([k, v]) => `export ${k}=${v}\n`)
      .join(''),
  );
  let stopped = false;
  return {
    controlPlane,
    emulator,
    kubeconfig,
    awsEnvFile,
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([emulator.stop(), controlPlane.stop()]);
    },
  };
}
