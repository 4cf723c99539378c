// `make generate` (second step): renders deploy/kustomize/base/skylift.yaml
// from the Helm chart. With --check, exits 1 when the committed file is stale.
import { readFile, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { kustomizeBaseFile, renderKustomizeBase } from './chart.ts';
import { repoRoot } from '../dev/paths.ts';

const want = await renderKustomizeBase();
const name = relative(repoRoot, kustomizeBaseFile);
if (process.argv.includes('--check')) {
  const have = await readFile(kustomizeBaseFile, 'utf8').catch(() => '');
  if (have !== want) {
    process.stderr.write(`${name} is stale (run make generate)\n`);
    process.exit(1);
  }
  process.stdout.write(`${name} is up to date\n`);
} else {
  await writeFile(kustomizeBaseFile, want);
  process.stdout.write(`wrote ${name}\n`);
}
