// ManagedDB's settings: its flags of `skylift run`, their defaults, and their parsing.
import { durationSetting, formatDuration } from '../../runtime/settings.ts';
import type { KindFlag } from '../module.ts';

/** Tuning of the ManagedDB controller. */
export interface ManagedDBSettings {
  /** First interval between looks at a DB instance in a transitional state (longer waits are polled less often). */
  readonly pollMs: number;
}

export const defaultManagedDBSettings: ManagedDBSettings = { pollMs: 15_000 };

/** ManagedDB's flags. */
export const managedDbFlags: readonly KindFlag[] = [
  {
    name: 'rds-poll-interval',
    env: 'SKYLIFT_RDS_POLL_INTERVAL',
    placeholder: 'DURATION',
    usage: `how often a creating/modifying DB instance is checked (default ${formatDuration(defaultManagedDBSettings.pollMs)})`,
  },
];

/** ManagedDB's settings from flag values by name; absent ones take the defaults. Throws SettingsError. Pure. */
export function parseManagedDBSettings(values: ReadonlyMap<string, string>): ManagedDBSettings {
  return { pollMs: durationSetting(values, 'rds-poll-interval', defaultManagedDBSettings.pollMs) };
}
