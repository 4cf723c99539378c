// The `machine` block of a report: what the numbers were measured on.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { repoRoot } from '../../dev/paths.ts';
import type { MachineInfo } from '../report.ts';

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync('git', [...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/** Cores, memory, Node version, git commit (and whether the tree had changes), load at start. */
export function machineInfo(): MachineInfo {
  const cpuList = cpus();
  return {
    cores: cpuList.length,
    cpuModel: cpuList[0]?.model ?? 'unknown',
    totalMemoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    gitCommit: git(['rev-parse', 'HEAD']) ?? 'unknown',
    gitDirty: (git(['status', '--porcelain']) ?? '') !== '',
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    note:
      'The operator, kube-apiserver, etcd, kube-controller-manager, moto and the bench share these cores, ' +
      'and other work may have run on the machine at the same time: compare runs from the same machine, ' +
      'and treat small differences as noise. moto is not AWS: latencies and state transitions are not AWS’s.',
  };
}
