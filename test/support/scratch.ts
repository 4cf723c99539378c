import { mkdir, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../../dev/paths.ts';

/**
 * A fresh directory for a test's own processes (a second control plane, a
 * `make dev`), under .skylift/test-runs/ so that the next run's reaper stops
 * them if this run is killed before it can.
 */
export async function scratchDir(prefix: string): Promise<string> {
  const base = join(repoRoot, '.skylift', 'test-runs');
  await mkdir(base, { recursive: true });
  return mkdtemp(join(base, `${new Date().toISOString().replace(/[:.]/g, '-')}-${prefix}-`));
}
