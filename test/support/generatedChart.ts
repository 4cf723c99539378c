// The Helm chart as `make generate` would leave it for another registry of kinds: a copy in a
// temporary directory whose generated files (files/crds/, files/kinds.yaml and
// files/admission-policies.yaml, …) are rendered for that registry. How a test sees what adding a
// kind does to the chart (its CRD, RBAC rules and admission policy) without touching deploy/.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from '../../dev/paths.ts';
import type { KindModule } from '../../src/kinds/module.ts';
import { chartDir } from '../../tools/chart.ts';
import { renderGeneratedFiles } from '../../tools/generatedFiles.ts';

/** A chart copy: its directory (what `helm template` takes) and how to remove it. */
export interface GeneratedChart {
  readonly dir: string;
  remove(): Promise<void>;
}

/**
 * Copies deploy/helm/skylift to a temporary directory and writes into it the chart's generated
 * files rendered for `registry` (files/crds/ only has that registry's CRDs). Remove it when done.
 */
export async function chartFor(registry: readonly KindModule[]): Promise<GeneratedChart> {
  const tmp = await mkdtemp(join(tmpdir(), 'skylift-chart-'));
  const dir = join(tmp, 'skylift');
  await cp(chartDir, dir, { recursive: true });
  await rm(join(dir, 'files', 'crds'), { recursive: true, force: true });
  const inChart = relative(repoRoot, chartDir);
  for (const [path, text] of renderGeneratedFiles(repoRoot, registry)) {
    if (!path.startsWith(`${inChart}/`)) continue;
    const target = join(dir, relative(inChart, path));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
  }
  return { dir, remove: () => rm(tmp, { recursive: true, force: true }) };
}
