// make bench: measures what Skylift costs. See docs/benchmarks.md.
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { installCrds } from '../dev/installCrds.ts';
import { repoRoot } from '../dev/paths.ts';
import { reapStaleProcesses } from '../dev/reaper.ts';
import { startLocalStack } from '../dev/stack.ts';
import { KubeClient } from '../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../src/runtime/kube/kubeconfigLoad.ts';
import { AwsFaultProxy } from '../dev/awsFaultProxy.ts';
import { benchUsage, parseBenchArgs, type BenchSettings } from './args.ts';
import { awsClients } from './lib/awsAccount.ts';
import { compileOperator } from './lib/compileOperator.ts';
import { compareWithBaseline, parseBaseline } from './lib/baseline.ts';
import { chartMemoryOf } from './lib/chartMemory.ts';
import { memoryByGroup } from './lib/costPerObject.ts';
import { machineInfo } from './lib/machine.ts';
import { costCurves, renderTable, reportFileName, type BenchReport, type ScenarioResult } from './report.ts';
import { runRolloutScenario } from './lib/rolloutScenario.ts';
import { runSharedLbScenario } from './lib/sharedLbScenario.ts';
import { operatorFlags, runScenario } from './runner.ts';
import { selectScenarios, type Scenario } from './scenarios.ts';

/** The chart's values, for the memory request and limit the report compares peak RSS with. */
const chartValuesFile = join(repoRoot, 'deploy', 'helm', 'skylift', 'values.yaml');

/** Where `--save-baseline` writes, and the baseline used when `--baseline` is not given. */
const defaultBaselineFile = join(repoRoot, 'bench', 'baseline.json');

/** `file` relative to the repository when inside it, else absolute: how reports name files. */
function displayPath(file: string): string {
  const rel = relative(repoRoot, file);
  return rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

/**
 * The baseline to compare with: `--baseline` (which must exist), else
 * bench/baseline.json if there is one. Read before anything starts, so a bad
 * file fails the run at once.
 */
async function loadBaseline(
  explicitPath: string | undefined,
): Promise<{ file: string; report: unknown } | undefined> {
  const file = explicitPath === undefined ? defaultBaselineFile : resolve(explicitPath);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (explicitPath === undefined && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`--baseline ${file}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  return { file: displayPath(file), report: parseBaseline(text, displayPath(file)) };
}

async function main(argv: readonly string[]): Promise<number> {
  let settings: BenchSettings | 'help';
  try {
    settings = parseBenchArgs(argv, join(repoRoot, 'bench', 'results'));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${benchUsage}`);
    return 2;
  }
  if (settings === 'help') {
    process.stdout.write(benchUsage);
    return 0;
  }
  let baseline: { file: string; report: unknown } | undefined;
  try {
    baseline = await loadBaseline(settings.baselinePath);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  let scenarios: Scenario[];
  try {
    scenarios = selectScenarios(settings.only, settings.sizes, settings.namespaces);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${benchUsage}`);
    return 2;
  }
  const chart = chartMemoryOf(await readFile(chartValuesFile, 'utf8'));
  const say = (line: string): void => {
    process.stderr.write(`${new Date().toISOString().slice(11, 19)}  ${line}\n`);
  };
  const started = new Date();
  const machine = machineInfo();
  const benchDir = join(repoRoot, '.skylift', 'bench');
  await mkdir(benchDir, { recursive: true });
  await reapStaleProcesses(benchDir);
  const workDir = join(benchDir, reportFileName(started).replace(/\.json$/, ''));
  let operatorEntry = join(repoRoot, 'src', 'cli', 'main.ts');
  if (settings.operatorBuild === 'dist') {
    say('compiling the operator to JavaScript, as the image runs it');
    operatorEntry = await compileOperator(workDir);
  }
  // Objects run on one local stack; the rollout matrix last, on a node cluster of its own.
  const objectScenarios = scenarios.filter((s) => s.group.nodeRollout !== true);
  const rolloutScenarios = scenarios.filter((s) => s.group.nodeRollout === true);
  let stopCluster: (() => Promise<void>) | undefined;
  let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  const stopAll = (): void => {
    void Promise.allSettled([stack?.stop(), stopCluster?.()]).finally(() => process.exit(130));
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  const results: ScenarioResult[] = [];
  const file = join(settings.outDir, reportFileName(started));
  await mkdir(settings.outDir, { recursive: true });
  // Rewritten after every scenario, so a run cut short still leaves what it measured.
  const writeReport = async (complete: boolean): Promise<BenchReport> => {
    const report: BenchReport = {
      schemaVersion: 2,
      complete,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      settings: { ...settings, operatorFlags: operatorFlags(settings) },
      scenarios: results,
      curves: costCurves(results),
      memory: memoryByGroup(results),
      baseline: baseline === undefined ? null : compareWithBaseline(results, baseline.report, baseline.file),
      chart,
    };
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    return report;
  };
  if (objectScenarios.length > 0) {
    say(`starting a local stack in ${workDir}`);
    const local = await startLocalStack({ dir: workDir });
    stack = local;
    const proxy = await AwsFaultProxy.start({ target: local.emulator.endpoint });
    try {
      const admin = new KubeClient(loadKubeconfig(local.kubeconfig));
      await installCrds(admin);
      const ctx = {
        stack: local,
        proxy,
        aws: awsClients(local.emulator.endpoint),
        admin,
        settings,
        logDir: workDir,
        say,
        operatorEntry,
      };
      for (const scenario of objectScenarios) {
        results.push(
          scenario.group.shared !== undefined
            ? await runSharedLbScenario(ctx, scenario)
            : await runScenario(ctx, scenario),
        );
        await writeReport(false);
      }
    } finally {
      await proxy.stop();
      await local.stop();
      stack = undefined;
    }
  }
  await mkdir(workDir, { recursive: true });
  for (const scenario of rolloutScenarios) {
    results.push(
      await runRolloutScenario(
        { settings, logDir: workDir, say, operatorEntry, onCluster: (stop) => (stopCluster = stop) },
        scenario,
      ),
    );
    await writeReport(false);
  }
  const report = await writeReport(true);
  process.stdout.write(renderTable(report));
  process.stdout.write(`report: ${file}\noperator logs: ${workDir}\n`);
  // A skipped scenario (no node cluster here) says why in the report and the table; it fails nothing.
  const allOk = results.every((r) => r.status !== 'failed');
  if (settings.saveBaseline) {
    // A baseline with failed scenarios would compare nothing for them: keep the old one.
    if (allOk) {
      await copyFile(file, defaultBaselineFile);
      process.stdout.write(`baseline: ${displayPath(defaultBaselineFile)} is now this report\n`);
    } else process.stdout.write('baseline: not saved, a scenario failed\n');
  }
  return allOk ? 0 : 1;
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(
        `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}
