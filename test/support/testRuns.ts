// What both global setups (the shared stack's and the node cluster's) do with
// their run directories and how they describe a control plane to test files.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from '../../dev/controlplane.ts';
import { reapStaleProcesses } from '../../dev/reaper.ts';
import type { StackInfo } from './stackInfo.ts';

/**
 * Prepares `runsDir` for a new run: reaps processes a killed earlier run left
 * (pid files), keeps the newest `keep - 1` earlier runs' logs for
 * post-mortems, and returns the new run's directory name (a timestamp, cut to
 * `nameLength` characters: unix socket paths below it must stay short).
 */
export async function newTestRun(runsDir: string, keep: number, nameLength = 24): Promise<string> {
  await mkdir(runsDir, { recursive: true });
  await reapStaleProcesses(runsDir);
  const entries = (await readdir(runsDir)).sort();
  for (const old of entries.slice(0, Math.max(0, entries.length - (keep - 1))))
    await rm(join(runsDir, old), { recursive: true, force: true });
  return join(runsDir, new Date().toISOString().replace(/[:.]/g, '-').slice(0, nameLength));
}

/** The coordinates test files get of a control plane and the AWS endpoint beside it. Pure. */
export function stackInfoOf(dir: string, cp: ControlPlane, awsEndpoint: string): StackInfo {
  return {
    dir,
    server: cp.server,
    caPem: cp.caPem,
    adminToken: cp.identities.admin.token,
    operatorToken: cp.identities.operator.token,
    operatorUser: cp.identities.operator.user,
    operatorGroup: cp.identities.operator.groups[0] ?? '',
    adminKubeconfig: cp.kubeconfigPath('admin'),
    operatorKubeconfig: cp.kubeconfigPath('operator'),
    awsEndpoint,
    logDir: cp.logDir,
  };
}
