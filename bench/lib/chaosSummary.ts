// The human-readable summary of a chaos report. Pure.
import type { ChaosReport } from './chaosRun.ts';
import { formatResults } from './invariants.ts';

function seconds(ms: number | undefined): string {
  return ms === undefined ? 'deadline passed' : `${(ms / 1000).toFixed(1)} s`;
}

/** The lines `make chaos` prints at the end of a run. Pure. */
export function chaosSummary(r: ChaosReport): string[] {
  const c = r.counts;
  const d = r.convergence.readyAfterMs;
  const faulted = Object.entries(r.awsCalls.byOutcome)
    .filter(([k]) => k !== 'forwarded')
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const topOps = Object.entries(r.awsCalls.byOperation)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `Chaos run, seed ${r.seed} (replay: make chaos CHAOS_FLAGS='--seed ${r.seed}${r.settings.resources !== 200 ? ` --resources ${r.settings.resources}` : ''}')`,
    `  workload      ${r.workload.total} objects: ${r.workload.dns} DNSRecord, ${r.workload.myIngress} MyIngress, ${r.workload.managedDb} ManagedDB`,
    `  chaos         ${c.operatorKills} operator SIGKILLs, ${c.leaderKills} leader SIGKILLs (${c.takeovers} takeovers: ${r.convergence.failovers.map((f) => `${f.killed} → ${f.successor} in ${(f.afterMs / 1000).toFixed(1)} s`).join(', ') || '-'}), ${c.apiServerRestarts} kube-apiserver restarts, ${c.etcdRestarts} etcd restarts, ${c.fiveXxBursts} 5xx bursts, ${c.unexpectedOperatorExits} unexpected operator exits, ${c.operatorStarts} operator starts`,
    `  converged     all Ready ${seconds(r.convergence.allReadyAfterMs)} after the first apply; per object p50/p95/max: DNSRecord ${d.DNSRecord.p50}/${d.DNSRecord.p95}/${d.DNSRecord.max} ms, MyIngress ${d.MyIngress.p50}/${d.MyIngress.p95}/${d.MyIngress.max} ms, ManagedDB ${d.ManagedDB.p50}/${d.ManagedDB.p95}/${d.ManagedDB.max} ms`,
    `  deleted       ${r.deletion.requested} objects, all gone ${seconds(r.deletion.allGoneAfterMs)} after the first delete`,
    `  AWS calls     ${r.awsCalls.total} at the proxy; faulted: ${faulted || 'none'}`,
    `  busiest       ${topOps}`,
    `  phases        ${r.phases.map((p) => `${p.name} ${((p.endMs - p.startMs) / 1000).toFixed(1)} s`).join(', ')}`,
    `  invariants after converging:`,
    ...formatResults(r.invariants.afterConverge),
    `  invariants after deleting half:`,
    ...formatResults(r.invariants.afterDelete),
    r.passed ? `PASSED in ${seconds(r.durationMs)}` : `FAILED: an invariant broke (logs: ${r.logDir})`,
  ];
}
