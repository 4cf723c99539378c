// Argo CD health checks run the way Argo CD runs them: through hack/luahealth (gopher-lua, as the
// Argo CD controller embeds it), and the cases of a health_test.yaml (Argo CD's test format). Used
// by test/unit/argocdHealth.test.ts for Skylift's kinds and test/integration/newKind.test.ts for
// the Queue test kind.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { repoRoot } from '../../dev/paths.ts';

const run = promisify(execFile);

/** What a health script returned (null: it returned nothing). */
export interface HealthStatus {
  status?: string;
  message?: string;
}

/** One case of a health_test.yaml: the object in `inputPath` (relative to the file) and what it must give. */
export interface HealthCase {
  readonly healthStatus: { status: string; message: string };
  readonly inputPath: string;
}

/** The luahealth runner's path, built first if it is missing (seconds with a warm Go module cache). */
export async function luahealthPath(): Promise<string> {
  const { stdout } = await run(join(repoRoot, 'hack/install-luahealth.sh'));
  return stdout.trim();
}

/** Runs `script` with `luahealth` on `obj` as Argo CD would; rejects when the script fails. */
export async function runHealthScript(
  luahealth: string,
  script: string,
  obj: unknown,
): Promise<HealthStatus | null> {
  const child = run(luahealth, [script]);
  child.child.stdin?.end(JSON.stringify(obj));
  const { stdout } = await child;
  return JSON.parse(stdout) as HealthStatus | null;
}

/** The parsed YAML file at `path`. */
export function readYaml(path: string): unknown {
  return parse(readFileSync(path, 'utf8'));
}

/** The cases of `dir`/health_test.yaml. */
export function healthCasesIn(dir: string): HealthCase[] {
  return (readYaml(join(dir, 'health_test.yaml')) as { tests: HealthCase[] }).tests;
}
