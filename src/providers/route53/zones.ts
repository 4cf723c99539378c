import { GetHostedZoneCommand, ListHostedZonesByNameCommand } from '@aws-sdk/client-route-53';
import { route53Of, type Route53Source } from './source.ts';
import type { Clock } from '../../runtime/clock.ts';
import { TerminalError } from '../../runtime/errors.ts';
import { AwsTerminalError, toTypedAwsError } from '../aws/errors.ts';
import { isNoSuchHostedZone, route53ErrorTable } from './errors.ts';
import { bareZoneId, normalizeName } from './names.ts';

/** A hosted zone, as records refer to it. */
export interface HostedZone {
  /** Without the /hostedzone/ prefix. */
  readonly id: string;
  /** Normalised, with the trailing dot. */
  readonly name: string;
  readonly private: boolean;
}

/**
 * Route 53 answered that hosted zone `zoneId` does not exist (never did, or was deleted): no retry
 * finds it. Keeps the NoSuchHostedZone code; its cause is Route 53's answer.
 */
export class NoSuchZoneError extends AwsTerminalError {
  /** Without the /hostedzone/ prefix. */
  readonly zoneId: string;
  constructor(zoneId: string, options?: ErrorOptions) {
    super(`hosted zone ${zoneId} does not exist in this account`, 'NoSuchHostedZone', options);
    this.zoneId = zoneId;
  }
}

/** No hosted zone of this account has the name `zoneName`. */
export class ZoneNameNotFoundError extends TerminalError {
  /** Normalised, with the trailing dot. */
  readonly zoneName: string;
  constructor(zoneName: string) {
    super(`no hosted zone named ${zoneName} in this account`);
    this.zoneName = zoneName;
  }
}

/** Several hosted zones of this account have the name `zoneName` (a public and a private one, say). */
export class AmbiguousZoneNameError extends TerminalError {
  /** Normalised, with the trailing dot. */
  readonly zoneName: string;
  /** The zones of that name, in Route 53's order. */
  readonly zones: readonly HostedZone[];
  constructor(zoneName: string, zones: readonly HostedZone[]) {
    super(`${zones.length} hosted zones are named ${zoneName} (${zones.map((z) => z.id).join(', ')})`);
    this.zoneName = zoneName;
    this.zones = zones;
  }
}

/**
 * Resolves hosted zones by ID or name, caching answers (a zone's ID and name
 * never change, but a name can be given to a new zone: {@link HostedZoneDirectory.forget}
 * drops a zone found gone; a missing or ambiguous name is asked about again after
 * `negativeTtlMs`; a lookup that failed transiently is not remembered at all).
 * Concurrent lookups of the same zone share one call.
 */
export class HostedZoneDirectory {
  private readonly route53: Route53Source;
  private readonly clock: Clock;
  private readonly negativeTtlMs: number;
  private readonly byIdCache = new Map<string, Promise<HostedZone>>();
  /** `id` is set once the lookup has answered, so {@link forget} can tell which zone a name stands for. */
  private readonly byNameCache = new Map<string, { at: number; zone: Promise<HostedZone>; id?: string }>();

  constructor(route53: Route53Source, clock: Clock, negativeTtlMs = 30_000) {
    this.route53 = route53;
    this.clock = clock;
    this.negativeTtlMs = negativeTtlMs;
  }

  /**
   * The zone with ID `zoneId` (with or without the /hostedzone/ prefix). Rejects with
   * NoSuchZoneError when Route 53 says it does not exist, else with the typed error of the failed
   * call.
   */
  byId(zoneId: string): Promise<HostedZone> {
    return this.getById(bareZoneId(zoneId));
  }

  /**
   * The one zone named `name` (normalised first). Rejects with ZoneNameNotFoundError or
   * AmbiguousZoneNameError (remembered for `negativeTtlMs`), else with the typed error of the
   * failed call (not remembered).
   */
  byName(name: string): Promise<HostedZone> {
    return this.getByName(normalizeName(name));
  }

  /**
   * Forgets zone `zoneId` — its entry by ID and every name that resolved to it — because a call
   * against it answered NoSuchHostedZone: the zone was deleted, and perhaps created again under the
   * same name with a new ID. The next lookup asks Route 53 again. A name that already resolves to
   * another zone, or whose lookup is still in flight, is kept.
   */
  forget(zoneId: string): void {
    const id = bareZoneId(zoneId);
    this.byIdCache.delete(id);
    for (const [name, entry] of this.byNameCache) if (entry.id === id) this.byNameCache.delete(name);
  }

  private getById(id: string): Promise<HostedZone> {
    let p = this.byIdCache.get(id);
    if (p === undefined) {
      p = route53Of(this.route53)
        .send(new GetHostedZoneCommand({ Id: id }))
        .then(
          (out) => ({
            id,
            name: normalizeName(out.HostedZone?.Name ?? ''),
            private: out.HostedZone?.Config?.PrivateZone === true,
          }),
          (err: unknown) => {
            this.byIdCache.delete(id);
            if (isNoSuchHostedZone(err)) throw new NoSuchZoneError(id, { cause: err });
            throw toTypedAwsError(`look up hosted zone ${id}`, err, route53ErrorTable);
          },
        );
      this.byIdCache.set(id, p);
    }
    return p;
  }

  private getByName(name: string): Promise<HostedZone> {
    const cached = this.byNameCache.get(name);
    if (cached !== undefined) return cached.zone;
    const zone = route53Of(this.route53)
      .send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 10 }))
      .then(
        (out) => {
          const matches: HostedZone[] = (out.HostedZones ?? [])
            .filter((z) => normalizeName(z.Name ?? '') === name)
            .map((z) => ({ id: bareZoneId(z.Id ?? ''), name, private: z.Config?.PrivateZone === true }));
          const [only, ...others] = matches;
          if (only === undefined) throw new ZoneNameNotFoundError(name);
          if (others.length > 0) throw new AmbiguousZoneNameError(name, matches);
          return only;
        },
        (err: unknown) => {
          throw toTypedAwsError(`look up hosted zone ${name}`, err, route53ErrorTable);
        },
      );
    const entry: { at: number; zone: Promise<HostedZone>; id?: string } = { at: this.clock.now(), zone };
    this.byNameCache.set(name, entry);
    zone.then(
      (z) => {
        entry.id = z.id;
      },
      () => undefined,
    );
    zone.catch((err: unknown) => {
      // Throttling, 5xx and lost connections say nothing about the zone: the next lookup asks again.
      if (!(err instanceof TerminalError)) {
        if (this.byNameCache.get(name) === entry) this.byNameCache.delete(name);
        return;
      }
      // "No such zone" (or several) is remembered for a while, then forgotten so a zone created later is found.
      const forgetAt = entry.at + this.negativeTtlMs;
      this.clock.setTimer(Math.max(0, forgetAt - this.clock.now()), () => {
        if (this.byNameCache.get(name) === entry) this.byNameCache.delete(name);
      });
    });
    return zone;
  }
}
