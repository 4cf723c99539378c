// Starting a local server on ports chosen free a moment before it binds them:
// moto, Redis, Argo CD's components. Another process may take a port in
// between, so a server that exits while starting is tried again on others.
import { freePort } from './ports.ts';
import type { ManagedProcess } from './process.ts';
import { AbortWait, waitFor } from './wait.ts';

/** How {@link startOnFreePorts} starts one server. */
export interface FreePortServerSpec {
  /** For messages, e.g. `moto`. */
  readonly name: string;
  /** How many free ports one try needs. */
  readonly ports: number;
  /** Starts the server on `ports`. */
  start(ports: readonly number[]): Promise<ManagedProcess>;
  /** Whether it answers yet; a throw counts as "not yet" and is reported if the deadline passes. */
  ready(ports: readonly number[]): Promise<boolean>;
  /** What the wait is for, e.g. `moto at http://127.0.0.1:5000`. */
  describe(ports: readonly number[]): string;
  readonly timeoutMs: number;
  readonly intervalMs: number;
}

/**
 * Starts the server on fresh free ports and waits until it is ready. A
 * server that exits before (a port taken since it was chosen) is started
 * again on other ports, up to three tries; one that does not answer by the
 * deadline is stopped and not tried again. Throws `<name> did not start: …`
 * with the log tail of the process that exited.
 */
export async function startOnFreePorts(
  spec: FreePortServerSpec,
): Promise<{ process: ManagedProcess; ports: readonly number[] }> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < spec.ports; i++) ports.push(await freePort());
    const proc = await spec.start(ports);
    try {
      await waitFor(
        async () => {
          const s = proc.exitStatus;
          if (s !== undefined)
            throw new AbortWait(`${spec.name} exited (code ${String(s.code)}):\n${proc.tail()}`);
          return (await spec.ready(ports)) ? true : undefined;
        },
        { timeoutMs: spec.timeoutMs, description: spec.describe(ports), intervalMs: spec.intervalMs },
      );
      return { process: proc, ports };
    } catch (err) {
      lastError = err;
      await proc.stop(2000);
      if (!(err instanceof AbortWait)) break;
    }
  }
  throw new Error(
    `${spec.name} did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
  );
}
