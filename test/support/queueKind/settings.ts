// Queue's settings: its one flag of `skylift run`, its default, and its parsing.
import type { KindFlag } from '../../../src/kinds/module.ts';
import { durationSetting, formatDuration } from '../../../src/runtime/settings.ts';

/** Tuning of the Queue controller. */
export interface QueueSettings {
  /** How soon a queue is looked at again after a create or an update. */
  readonly pollMs: number;
}

export const defaultQueueSettings: QueueSettings = { pollMs: 2000 };

/** Queue's flags. */
export const queueFlags: readonly KindFlag[] = [
  {
    name: 'queue-poll-interval',
    env: 'SKYLIFT_QUEUE_POLL_INTERVAL',
    placeholder: 'DURATION',
    usage: `how soon a created or updated queue is checked again (default ${formatDuration(defaultQueueSettings.pollMs)})`,
  },
];

/** Queue's settings from flag values by name; absent ones take the defaults. Throws SettingsError. Pure. */
export function parseQueueSettings(values: ReadonlyMap<string, string>): QueueSettings {
  return { pollMs: durationSetting(values, 'queue-poll-interval', defaultQueueSettings.pollMs) };
}
