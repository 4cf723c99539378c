// `make generate`: writes every generated file (see generatedFiles.ts).
// `node tools/generate.ts --check` exits 1 when one is stale instead.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { repoRoot } from '../dev/paths.ts';
import { generatedDirs, renderGeneratedFiles } from './generatedFiles.ts';

const want = renderGeneratedFiles(repoRoot);
const have = new Map<string, string>();
for (const dir of generatedDirs) {
  const names = await readdir(join(repoRoot, dir)).catch(() => []);
  for (const name of names.filter((n) => /\.(ya?ml|md)$/.test(n) && !(dir === 'crds' && n === 'README.md'))) {
    have.set(`${dir}/${name}`, await readFile(join(repoRoot, dir, name), 'utf8'));
  }
}
for (const path of want.keys()) {
  if (!have.has(path)) {
    const text = await readFile(join(repoRoot, path), 'utf8').catch(() => undefined);
    if (text !== undefined) have.set(path, text);
  }
}

if (process.argv.includes('--check')) {
  const stale = [...new Set([...want.keys(), ...have.keys()])].filter((p) => want.get(p) !== have.get(p));
  if (stale.length > 0) {
    process.stderr.write(`generated files are stale (run make generate): ${stale.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write(`generated files are up to date (${want.size} files)\n`);
} else {
  for (const path of have.keys()) if (!want.has(path)) await rm(join(repoRoot, path));
  for (const [path, text] of want) {
    await mkdir(dirname(join(repoRoot, path)), { recursive: true });
    await writeFile(join(repoRoot, path), text);
  }
  process.stdout.write(`wrote ${want.size} generated files\n`);
}
