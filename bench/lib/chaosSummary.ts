// The human-readable summary of a chaos report. Pure.
import type { ChaosReport } from './chaosRun.ts';
import type { ChaosAccountReport } from './chaosReport.ts';
import { formatResults, type InvariantResult } from './invariants.ts';

function seconds(ms: number | undefined): string {
  return ms === undefined ? 'deadline passed' : `${(ms / 1000).toFixed(1)} s`;
}

/** "6/6 hold (31 AWS resources)": how many invariants held, over how many Skylift-owned resources. Pure. */
function holding(results: readonly InvariantResult[]): string {
  const resources = results.find((x) => x.name === 'in-own-account')?.checked ?? 0;
  return `${results.filter((x) => x.ok).length}/${results.length} hold (${resources} AWS resources)`;
}

function accountLabel(a: ChaosAccountReport): string {
  const who = a.teamPolicy !== undefined ? `TeamPolicy ${a.teamPolicy}` : "the operator's own";
  return `${a.account} (${who}): ${a.namespaces.join(', ') || 'no namespace'}`;
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
    `Chaos run, seed ${r.seed} (replay: make chaos CHAOS_FLAGS='--seed ${r.seed}${r.settings.resources !== 200 ? ` --resources ${r.settings.resources}` : ''}${r.settings.accounts !== 2 ? ` --accounts ${r.settings.accounts}` : ''}')`,
    `  workload      ${r.workload.total} objects: ${r.workload.dns} DNSRecord, ${r.workload.myIngress} MyIngress, ${r.workload.managedDb} ManagedDB, in ${r.workload.namespaces.join(', ')}`,
    `  accounts      ${r.accounts.map(accountLabel).join('; ')}${r.teamPolicies !== undefined ? `; TeamPolicies (${r.teamPolicies.selector}) deleted at the end, ${r.teamPolicies.leftAfterRun} left` : ''}`,
    `  chaos         ${c.operatorKills} operator SIGKILLs, ${c.leaderKills} leader SIGKILLs (${c.takeovers} takeovers: ${r.convergence.failovers.map((f) => `${f.killed} → ${f.successor} in ${(f.afterMs / 1000).toFixed(1)} s`).join(', ') || '-'}), ${c.apiServerRestarts} kube-apiserver restarts, ${c.etcdRestarts} etcd restarts, ${c.fiveXxBursts} 5xx bursts, ${c.unexpectedOperatorExits} unexpected operator exits, ${c.operatorStarts} operator starts`,
    `  converged     all Ready ${seconds(r.convergence.allReadyAfterMs)} after the first apply; per object p50/p95/max: DNSRecord ${d.DNSRecord.p50}/${d.DNSRecord.p95}/${d.DNSRecord.max} ms, MyIngress ${d.MyIngress.p50}/${d.MyIngress.p95}/${d.MyIngress.max} ms, ManagedDB ${d.ManagedDB.p50}/${d.ManagedDB.p95}/${d.ManagedDB.max} ms`,
    `  deleted       ${r.deletion.requested} objects, all gone ${seconds(r.deletion.allGoneAfterMs)} after the first delete`,
    `  AWS calls     ${r.awsCalls.total} at the proxy; faulted: ${faulted || 'none'}; sts:AssumeRole ${r.awsCalls.assumeRole.calls} (faulted ${r.awsCalls.assumeRole.faulted})`,
    `  busiest       ${topOps}`,
    `  phases        ${r.phases.map((p) => `${p.name} ${((p.endMs - p.startMs) / 1000).toFixed(1)} s`).join(', ')}`,
    `  invariants after converging (all accounts):`,
    ...formatResults(r.invariants.afterConverge),
    `  invariants after deleting half (all accounts):`,
    ...formatResults(r.invariants.afterDelete),
    `  per account:`,
    ...r.accounts.map(
      (a) =>
        `    ${a.account} ${a.passed ? 'ok  ' : 'FAIL'}  ${a.namespaces.join(', ') || 'no namespace'}: after converging ${holding(a.invariants.afterConverge)}, after deleting ${holding(a.invariants.afterDelete)}`,
    ),
    r.passed ? `PASSED in ${seconds(r.durationMs)}` : `FAILED: an invariant broke (logs: ${r.logDir})`,
  ];
}
