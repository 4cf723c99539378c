import { describe, expect, it } from 'vitest';
import { busyPollInterval } from '../../src/runtime/polling.ts';

describe('busyPollInterval', () => {
  it('polls a busy instance less often the longer it has been busy, up to 5 minutes', () => {
    const t0 = Date.parse('2026-11-22T00:00:00Z');
    const mr = (since: string | undefined) =>
      ({
        metadata: { name: 'x' },
        spec: { engine: 'postgres', instanceClass: 'db.t3.micro', allocatedStorage: 20, masterUsername: 'a' },
        status:
          since === undefined
            ? {}
            : {
                conditions: [
                  {
                    type: 'Ready',
                    status: 'False',
                    reason: 'Creating',
                    message: '',
                    lastTransitionTime: since,
                  },
                ],
              },
      }) as Parameters<typeof busyPollInterval>[0];
    expect(busyPollInterval(mr(undefined), 15_000, t0)).toBe(15_000);
    expect(busyPollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 60_000)).toBe(15_000);
    expect(busyPollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 600_000)).toBe(60_000);
    expect(busyPollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 6 * 3_600_000)).toBe(300_000);
    // A load balancer provisioning for 3 minutes is looked at every 18 s, never less often than once a minute.
    expect(busyPollInterval(mr('2026-11-22T00:00:00Z'), 5000, t0 + 180_000, 60_000)).toBe(18_000);
    expect(busyPollInterval(mr('2026-11-22T00:00:00Z'), 5000, t0 + 3_600_000, 60_000)).toBe(60_000);
    // A cap below the first interval does not shorten it.
    expect(busyPollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 3_600_000, 5000)).toBe(15_000);
  });
});
