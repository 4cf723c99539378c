// The settings flags and environment give the runtime and the kinds, their
// defaults, and their parsing.

/** A setting that cannot be used; the message names it and says what to give instead. */
export class SettingsError extends Error {
  override readonly name: string = 'SettingsError';
}

/** Parses `10m`, `30s`, `1500ms`, `1h` into milliseconds; throws SettingsError otherwise. Pure. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (m === null)
    throw new SettingsError(`invalid duration ${JSON.stringify(text)}: use e.g. 500ms, 30s, 10m, 1h`);
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Math.round(n * unit);
}

/** `10m`, `30s` or `1500ms` for a number of milliseconds (the inverse of parseDuration for whole units). Pure. */
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 && ms > 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * The duration a flag gives (by flag name in `values`), or `fallback` when it
 * is absent; throws SettingsError naming the flag. Pure.
 */
export function durationSetting(values: ReadonlyMap<string, string>, flag: string, fallback: number): number {
  const v = values.get(flag);
  if (v === undefined) return fallback;
  try {
    return parseDuration(v);
  } catch (err) {
    throw new SettingsError(`--${flag}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * How every kind's controller runs, whatever the kind: set by `skylift run`'s
 * flags, defaulted here and nowhere else.
 */
export interface ControllerSettings {
  /** Written into the ownership tags of everything this operator creates. */
  readonly clusterId: string;
  /** Watch only these namespaces; empty: all. */
  readonly namespaces: readonly string[];
  /** Only manage objects matching this label selector (to shard). */
  readonly labelSelector: string | undefined;
  /** Concurrent reconciles per kind. */
  readonly workers: number;
  /** Periodic drift check of Ready resources. */
  readonly resyncPeriodMs: number;
}

/** The defaults of {@link ControllerSettings}. */
export const defaultControllerSettings: ControllerSettings = {
  clusterId: 'default',
  namespaces: [],
  labelSelector: undefined,
  workers: 16,
  resyncPeriodMs: 600_000,
};

/** The controller settings among a larger set of options (e.g. `skylift run`'s). Pure. */
export function controllerSettingsOf(o: ControllerSettings): ControllerSettings {
  return {
    clusterId: o.clusterId,
    namespaces: o.namespaces,
    labelSelector: o.labelSelector,
    workers: o.workers,
    resyncPeriodMs: o.resyncPeriodMs,
  };
}
