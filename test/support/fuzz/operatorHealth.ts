// Is a `skylift run` process still healthy after hostile input? Alive, no
// crash in its log, and /healthz answering 200.
import type { SkyliftProcess } from '../skyliftProcess.ts';

/** The host:port the operator logged when its probe server started ("serving /metrics…"); undefined before. */
export function probeAddress(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: unknown; address?: unknown };
      if (
        typeof entry.msg === 'string' &&
        entry.msg.startsWith('serving /metrics') &&
        typeof entry.address === 'string'
      )
        return entry.address;
    } catch {
      // A partial line while the process is still writing it.
    }
  }
  return undefined;
}

/** Log lines that mean the process crashed or is about to: uncaught errors, fatal log entries (pino level 60). */
export const crashMarkers =
  /uncaught|unhandled ?rejection|FATAL|"level":60|heap out of memory|Maximum call stack/i;

/**
 * The problems with the operator's health, empty when healthy: it exited,
 * its output has a crash marker, or /healthz at `address` is not 200.
 */
export async function healthProblems(op: SkyliftProcess, address: string): Promise<string[]> {
  const problems: string[] = [];
  if (op.child.exitCode !== null || op.child.signalCode !== null)
    problems.push(`exited (code ${String(op.child.exitCode)}, signal ${String(op.child.signalCode)})`);
  const crash = crashMarkers.exec(op.output());
  if (crash !== null) {
    const at = crash.index;
    problems.push(`crash marker in output: …${op.output().slice(Math.max(0, at - 300), at + 500)}…`);
  }
  try {
    const res = await fetch(`http://${address}/healthz`);
    if (res.status !== 200) problems.push(`/healthz answered ${res.status}: ${await res.text()}`);
  } catch (err) {
    problems.push(`/healthz unreachable: ${err instanceof Error ? err.message : String(err)}`);
  }
  return problems;
}
