import { describe, expect, it } from 'vitest';
import { nextRun, parseCron } from '../../src/runtime/cron.ts';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string => (ms === undefined ? 'none' : new Date(ms).toISOString());

describe('cron', () => {
  it.each([
    {
      reason: 'every 15 minutes',
      expr: '*/15 * * * *',
      after: '2026-11-22T03:07:00Z',
      want: '2026-11-22T03:15:00.000Z',
    },
    {
      reason: 'daily at 02:30',
      expr: '30 2 * * *',
      after: '2026-11-22T03:07:00Z',
      want: '2026-11-23T02:30:00.000Z',
    },
    {
      reason: 'strictly after an exact match',
      expr: '30 2 * * *',
      after: '2026-11-23T02:30:00Z',
      want: '2026-11-24T02:30:00.000Z',
    },
    {
      reason: 'Sundays (0 and 7)',
      expr: '0 4 * * 7',
      after: '2026-11-22T05:00:00Z',
      want: '2026-11-29T04:00:00.000Z',
    },
    {
      reason: 'first of the month',
      expr: '0 0 1 * *',
      after: '2026-11-22T00:00:00Z',
      want: '2026-12-01T00:00:00.000Z',
    },
    {
      reason: 'a list and a range',
      expr: '0 9-17/4 * * 1,3',
      after: '2026-11-23T10:00:00Z',
      want: '2026-11-23T13:00:00.000Z',
    },
    {
      reason: 'February 29th',
      expr: '0 0 29 2 *',
      after: '2026-03-01T00:00:00Z',
      want: '2028-02-29T00:00:00.000Z',
    },
  ])('$reason', ({ expr, after, want }) => {
    expect(iso(nextRun(parseCron(expr), at(after)))).toBe(want);
  });

  it.each(['* * * *', '61 * * * *', '* 24 * * *', 'a b c d e', '*/0 * * * *', '5-1 * * * *'])(
    'rejects %s',
    (expr) => {
      expect(() => parseCron(expr)).toThrow(/cron/);
    },
  );

  it('finds nothing for an impossible date', () => {
    expect(nextRun(parseCron('0 0 31 2 *'), at('2026-01-01T00:00:00Z'))).toBeUndefined();
  });
});
