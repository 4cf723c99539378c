import { setTimeout as delay } from 'node:timers/promises';

/** Options for {@link waitFor}. */
export interface WaitOptions {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Pause between attempts (default 100 ms). */
  readonly intervalMs?: number;
  /** Says what is awaited, for the timeout error. */
  readonly description: string;
}

/** Thrown by a probe to stop {@link waitFor} at once (e.g. the awaited process died). */
export class AbortWait extends Error {}

/**
 * Polls `probe` until it returns a value other than `undefined`, or throws
 * once the deadline passes (with the last probe error, if any). This is a
 * condition wait with a deadline, not a sleep: it returns as soon as the
 * condition holds. Exceptions from `probe` count as "not yet", except
 * {@link AbortWait}, which is rethrown immediately.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  opts: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 100;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      if (err instanceof AbortWait) throw err;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.description}${cause}`, {
        cause: lastError,
      });
    }
    await delay(interval);
  }
}
