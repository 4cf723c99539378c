/** A parsed five-field cron expression (minute hour day-of-month month day-of-week), in UTC. */
export interface CronSchedule {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly weekdays: ReadonlySet<number>;
  readonly anyDay: boolean;
  readonly anyWeekday: boolean;
}

const fields: readonly { name: string; min: number; max: number }[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 6 },
];

/**
 * Parses `*`, numbers, ranges `a-b`, steps `*\/n` and `a-b/n`, and lists; day
 * of week 0-6 (Sunday 0, 7 also Sunday). Throws an Error saying which field is
 * wrong. Pure.
 */
export function parseCron(expr: string): CronSchedule {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5)
    throw new Error(`cron expression ${JSON.stringify(expr)} needs 5 fields (minute hour day month weekday)`);
  const sets = parts.map((part, i) => {
    const f = fields[i] ?? { name: '?', min: 0, max: 0 };
    const out = new Set<number>();
    for (const item of part.split(',')) {
      const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
      if (m === null) throw new Error(`cron ${f.name} field ${JSON.stringify(part)} is not valid`);
      const step = m[4] !== undefined ? Number(m[4]) : 1;
      const lo = m[1] === '*' ? f.min : Number(m[2]);
      const hi = m[1] === '*' ? f.max : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? f.max : lo;
      const max = f.name === 'day of week' ? 7 : f.max;
      if (lo < f.min || hi > max || lo > hi || step < 1)
        throw new Error(`cron ${f.name} field ${JSON.stringify(part)} is out of range ${f.min}-${f.max}`);
      for (let v = lo; v <= hi; v += step) out.add(f.name === 'day of week' && v === 7 ? 0 : v);
    }
    return out;
  });
  const [minutes, hours, days, months, weekdays] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  return { minutes, hours, days, months, weekdays, anyDay: parts[2] === '*', anyWeekday: parts[4] === '*' };
}

/** The first run strictly after `after` (ms since epoch), or undefined if none within ~5 years. Pure. */
export function nextRun(s: CronSchedule, after: number): number | undefined {
  const d = new Date(Math.floor(after / 60_000) * 60_000 + 60_000);
  const limit = after + 5 * 366 * 86_400_000;
  const dayMatches = (x: Date): boolean => {
    const dom = s.days.has(x.getUTCDate());
    const dow = s.weekdays.has(x.getUTCDay());
    // Standard cron: when both are restricted, either may match.
    if (s.anyDay && s.anyWeekday) return true;
    if (s.anyDay) return dow;
    if (s.anyWeekday) return dom;
    return dom || dow;
  };
  while (d.getTime() <= limit) {
    if (!s.months.has(d.getUTCMonth() + 1)) {
      d.setUTCMonth(d.getUTCMonth() + 1, 1);
      d.setUTCHours(0, 0, 0, 0);
    } else if (!dayMatches(d)) {
      d.setUTCDate(d.getUTCDate() + 1);
      d.setUTCHours(0, 0, 0, 0);
    } else if (!s.hours.has(d.getUTCHours())) {
      d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
    } else if (!s.minutes.has(d.getUTCMinutes())) {
      d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
    } else {
      return d.getTime();
    }
  }
  return undefined;
}
