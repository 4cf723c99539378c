// The operator compiled to JavaScript for a bench run, as the image runs it
// (the Dockerfile's `tsc -p tsconfig.build.json`), into the run's own folder.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { repoRoot } from '../../dev/paths.ts';

/** How long the compile may take before the bench gives up. */
const compileTimeoutMs = 300_000;

/**
 * Compiles src/ into `<dir>/dist` with the build tsconfig and returns the CLI's entry point there.
 * Blocks for the compile (tens of seconds); throws with tsc's output when it fails or times out.
 * Bare imports resolve from the repository's node_modules, as `dir` lies inside the repository.
 */
export async function compileOperator(dir: string): Promise<string> {
  const outDir = join(dir, 'dist');
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const child = spawn(
    process.execPath,
    [tsc, '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', outDir],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: AbortSignal.timeout(compileTimeoutMs),
    },
  );
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0)
    throw new Error(`compiling the operator failed (tsc exit ${String(code)}):\n${output.slice(-4000)}`);
  return join(outDir, 'cli', 'main.js');
}
