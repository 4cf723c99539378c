// Parsing of the settings that flags and environment give the runtime and the kinds.

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
