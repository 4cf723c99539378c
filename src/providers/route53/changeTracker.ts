import { GetChangeCommand } from '@aws-sdk/client-route-53';
import { route53Of, type Route53Source } from './source.ts';
import type { Clock } from '../../runtime/clock.ts';
import { toTypedAwsError } from '../aws/errors.ts';
import { route53ErrorTable } from './errors.ts';

export type ChangeStatus = 'PENDING' | 'INSYNC';

/**
 * Answers "has this Route 53 change propagated?" with GetChange, shared by
 * every record the change carried (one batch, one change ID): INSYNC is
 * final and cached; PENDING is asked again at most every `minIntervalMs`.
 */
export class ChangeTracker {
  private readonly route53: Route53Source;
  private readonly clock: Clock;
  private readonly minIntervalMs: number;
  private readonly known = new Map<string, { status: ChangeStatus; at: number }>();
  private readonly inflight = new Map<string, Promise<ChangeStatus>>();

  constructor(route53: Route53Source, clock: Clock, minIntervalMs = 2000) {
    this.route53 = route53;
    this.clock = clock;
    this.minIntervalMs = minIntervalMs;
  }

  status(changeId: string): Promise<ChangeStatus> {
    const k = this.known.get(changeId);
    if (k !== undefined && (k.status === 'INSYNC' || this.clock.now() - k.at < this.minIntervalMs)) {
      return Promise.resolve(k.status);
    }
    let p = this.inflight.get(changeId);
    if (p === undefined) {
      p = route53Of(this.route53)
        .send(new GetChangeCommand({ Id: changeId }))
        .then(
          (out) => {
            const status: ChangeStatus = out.ChangeInfo?.Status === 'INSYNC' ? 'INSYNC' : 'PENDING';
            this.known.set(changeId, { status, at: this.clock.now() });
            return status;
          },
          (err: unknown) => {
            throw toTypedAwsError(`get change ${changeId}`, err, route53ErrorTable);
          },
        )
        .finally(() => this.inflight.delete(changeId));
      this.inflight.set(changeId, p);
    }
    return p;
  }
}
