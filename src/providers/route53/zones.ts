import {
  GetHostedZoneCommand,
  ListHostedZonesByNameCommand,
  type Route53Client,
} from '@aws-sdk/client-route-53';
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
 * The error for a spec.zoneId whose hosted zone does not exist (never did, or was deleted): no retry
 * finds it, and spec.zoneId is immutable, so the message says to recreate the object. Keeps the
 * NoSuchHostedZone code. Pure.
 */
export function missingZoneIdError(zoneId: string, cause?: unknown): AwsTerminalError {
  const id = bareZoneId(zoneId);
  return new AwsTerminalError(
    `hosted zone ${id} (spec.zoneId) does not exist in this account (was it deleted?): spec.zoneId cannot be changed, so delete this DNSRecord and create it again with the zone's current ID, or with spec.zoneName to follow the zone by name`,
    'NoSuchHostedZone',
    cause !== undefined ? { cause } : undefined,
  );
}

/**
 * Resolves hosted zones by ID or name, caching answers (a zone's ID and name
 * never change, but a name can be given to a new zone: {@link ZoneDirectory.forget}
 * drops a zone found gone; a missing or ambiguous name is asked about again after
 * `negativeTtlMs`; a lookup that failed transiently is not remembered at all).
 * Concurrent lookups of the same zone share one call.
 */
export class ZoneDirectory {
  private readonly route53: Route53Client;
  private readonly clock: Clock;
  private readonly negativeTtlMs: number;
  private readonly byId = new Map<string, Promise<HostedZone>>();
  /** `id` is set once the lookup has answered, so {@link forget} can tell which zone a name stands for. */
  private readonly byName = new Map<string, { at: number; zone: Promise<HostedZone>; id?: string }>();

  constructor(route53: Route53Client, clock: Clock, negativeTtlMs = 30_000) {
    this.route53 = route53;
    this.clock = clock;
    this.negativeTtlMs = negativeTtlMs;
  }

  /** The zone for a spec's zoneId or zoneName. Throws TerminalError when it does not exist or is ambiguous. */
  resolve(ref: { zoneId?: string | undefined; zoneName?: string | undefined }): Promise<HostedZone> {
    if (ref.zoneId !== undefined) return this.getById(bareZoneId(ref.zoneId));
    if (ref.zoneName !== undefined) return this.getByName(normalizeName(ref.zoneName));
    return Promise.reject(new TerminalError('set spec.zoneId or spec.zoneName'));
  }

  /**
   * Forgets zone `zoneId` — its entry by ID and every name that resolved to it — because a call
   * against it answered NoSuchHostedZone: the zone was deleted, and perhaps created again under the
   * same name with a new ID. The next {@link resolve} asks Route 53 again. A name that already
   * resolves to another zone, or whose lookup is still in flight, is kept.
   */
  forget(zoneId: string): void {
    const id = bareZoneId(zoneId);
    this.byId.delete(id);
    for (const [name, entry] of this.byName) if (entry.id === id) this.byName.delete(name);
  }

  private getById(id: string): Promise<HostedZone> {
    let p = this.byId.get(id);
    if (p === undefined) {
      p = this.route53.send(new GetHostedZoneCommand({ Id: id })).then(
        (out) => ({
          id,
          name: normalizeName(out.HostedZone?.Name ?? ''),
          private: out.HostedZone?.Config?.PrivateZone === true,
        }),
        (err: unknown) => {
          this.byId.delete(id);
          if (isNoSuchHostedZone(err)) throw missingZoneIdError(id, err);
          throw toTypedAwsError(`look up hosted zone ${id}`, err, route53ErrorTable);
        },
      );
      this.byId.set(id, p);
    }
    return p;
  }

  private getByName(name: string): Promise<HostedZone> {
    const cached = this.byName.get(name);
    if (cached !== undefined) return cached.zone;
    const zone = this.route53.send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 10 })).then(
      (out) => {
        const matches = (out.HostedZones ?? []).filter((z) => normalizeName(z.Name ?? '') === name);
        if (matches.length === 0)
          throw new TerminalError(
            `spec.zoneName ${name}: no hosted zone of that name in this account: create it (Skylift looks again at the resync period), or delete this DNSRecord and create it in an existing zone (the zone is fixed at create)`,
          );
        if (matches.length > 1) {
          throw new TerminalError(
            `${matches.length} hosted zones are named ${name} (${matches.map((z) => `${bareZoneId(z.Id ?? '')}${z.Config?.PrivateZone === true ? ' private' : ' public'}`).join(', ')}): set spec.zoneId instead of zoneName`,
          );
        }
        const m = matches[0];
        return { id: bareZoneId(m?.Id ?? ''), name, private: m?.Config?.PrivateZone === true };
      },
      (err: unknown) => {
        throw toTypedAwsError(`look up hosted zone ${name}`, err, route53ErrorTable);
      },
    );
    const entry: { at: number; zone: Promise<HostedZone>; id?: string } = { at: this.clock.now(), zone };
    this.byName.set(name, entry);
    zone.then(
      (z) => {
        entry.id = z.id;
      },
      () => undefined,
    );
    zone.catch((err: unknown) => {
      // Throttling, 5xx and lost connections say nothing about the zone: the next lookup asks again.
      if (!(err instanceof TerminalError)) {
        if (this.byName.get(name) === entry) this.byName.delete(name);
        return;
      }
      // "No such zone" (or several) is remembered for a while, then forgotten so a zone created later is found.
      const forgetAt = entry.at + this.negativeTtlMs;
      this.clock.setTimer(Math.max(0, forgetAt - this.clock.now()), () => {
        if (this.byName.get(name) === entry) this.byName.delete(name);
      });
    });
    return zone;
  }
}
