// How much AWS throttled one account's calls lately: what the TeamPolicy's Throttled condition says.

/** One minute's calls and throttles of one service. */
interface MinuteCounts {
  readonly minute: number;
  calls: number;
  throttles: number;
}

/** What {@link ThrottleWindow.sustained} found: the service throttled in most recent minutes. */
export interface SustainedThrottling {
  readonly service: string;
  /** Minutes of the window (the current one included) with at least one throttle. */
  readonly minutes: number;
  readonly calls: number;
  readonly throttles: number;
}

/** Minutes a window looks back, the current one included. */
export const throttleWindowMinutes = 5;
/** Minutes of the window with throttles for the throttling to count as sustained. */
export const sustainedMinutes = 3;

/**
 * Counts the calls and throttles of each service per minute, keeping the last
 * {@link throttleWindowMinutes} minutes. Throttling is sustained when it was seen in at least
 * {@link sustainedMinutes} of them: a burst that the client-side limiter absorbs in a minute is not,
 * a quota that is too small for the account's work is. O(1) per note; never blocks.
 */
export class ThrottleWindow {
  private readonly byService = new Map<string, MinuteCounts[]>();

  /** Notes one attempt of `service` at `nowMs`, throttled or not. */
  note(service: string, throttled: boolean, nowMs: number): void {
    const minute = Math.floor(nowMs / 60_000);
    let counts = this.byService.get(service);
    if (counts === undefined) {
      counts = [];
      this.byService.set(service, counts);
    }
    let last = counts.at(-1);
    if (last?.minute !== minute) {
      last = { minute, calls: 0, throttles: 0 };
      counts.push(last);
      while (counts.length > 0 && (counts[0]?.minute ?? minute) <= minute - throttleWindowMinutes)
        counts.shift();
    }
    last.calls++;
    if (throttled) last.throttles++;
  }

  /**
   * The services whose throttling is sustained at `nowMs` (throttles in at least
   * {@link sustainedMinutes} of the last {@link throttleWindowMinutes} minutes), most throttled
   * first. Pure over what was noted.
   */
  sustained(nowMs: number): SustainedThrottling[] {
    const minute = Math.floor(nowMs / 60_000);
    const out: SustainedThrottling[] = [];
    for (const [service, counts] of this.byService) {
      const recent = counts.filter((c) => c.minute > minute - throttleWindowMinutes);
      const minutes = recent.filter((c) => c.throttles > 0).length;
      if (minutes < sustainedMinutes) continue;
      out.push({
        service,
        minutes,
        calls: recent.reduce((n, c) => n + c.calls, 0),
        throttles: recent.reduce((n, c) => n + c.throttles, 0),
      });
    }
    return out.sort((a, b) => b.throttles - a.throttles);
  }
}
