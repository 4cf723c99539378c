import { describe, expect, it } from 'vitest';

describe('ManagedDB polling', () => {
  it('polls a busy instance less often the longer it has been busy, up to 5 minutes', async () => {
    const { pollInterval } = await import('../../src/controllers/manageddb/adapter.ts');
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
      }) as Parameters<typeof pollInterval>[0];
    expect(pollInterval(mr(undefined), 15_000, t0)).toBe(15_000);
    expect(pollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 60_000)).toBe(15_000);
    expect(pollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 600_000)).toBe(60_000);
    expect(pollInterval(mr('2026-11-22T00:00:00Z'), 15_000, t0 + 6 * 3_600_000)).toBe(300_000);
  });
});
