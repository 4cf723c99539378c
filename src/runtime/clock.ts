/** A cancellable timer handle. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * Time as the runtime sees it. Injected everywhere a delay or timestamp is
 * used, so tests drive backoff, resync and leases without sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` (≥ 0). Does not keep the process alive. */
  setTimer(ms: number, fn: () => void): TimerHandle;
}

/** The wall clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** Whether `signal` has aborted. A function, so TypeScript does not narrow it away across awaits. */
export function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** Resolves after `ms` on `clock`, or at once when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolveSleep) => {
    if (signal?.aborted === true) {
      resolveSleep();
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolveSleep();
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolveSleep();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
