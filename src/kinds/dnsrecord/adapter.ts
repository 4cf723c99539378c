import type { Change, ResourceRecordSet, Route53Client } from '@aws-sdk/client-route-53';
import { ConditionType, getCondition } from '../../runtime/conditions.ts';
import type { DNSRecord, DNSRecordSpec } from './api.ts';
import type { ReferenceReader } from '../../runtime/references.ts';
import { aliasTargetRef } from './references.ts';
import {
  ChangeTooLargeError,
  RecordSetBusyError,
  route53Limits,
  type ChangeBatcher,
  type ChangeTicket,
} from '../../providers/route53/changeBatcher.ts';
import type { ChangeTracker } from '../../providers/route53/changeTracker.ts';
import {
  legacyWildcardOwnerName,
  ownerRecordName,
  ownerRecordValue,
  parseOwnerValue,
  recordFqdn,
  recordKey,
} from '../../providers/route53/names.ts';
import { isNoSuchHostedZone } from '../../providers/route53/errors.ts';
import type { HostedZone } from '../../providers/route53/zones.ts';
import type { ZoneRecordCache } from '../../providers/route53/zoneRecords.ts';
import {
  busyObservation,
  describeDelta,
  type Created,
  type DeltaEntry,
  type Released,
  type Updated,
} from '../../runtime/adapter.ts';
import type { ExistingObservation, ExternalClient, Observation } from '../../runtime/adapter.ts';
import type { ReadyState, ReconcileContext } from '../../runtime/adapter.ts';
import { Reason } from '../../runtime/conditions.ts';
import { OwnershipConflictError, RequeueAfter, RetryableError, TerminalError } from '../../runtime/errors.ts';
import { ownerAsSeenBy, type KindStatusOf, type OwnershipTags } from '../../apis/managed.ts';
import { compareRecordSets, desiredRecordSet, dnsRecordFqdn, type AliasTarget } from './desired.ts';
import { isZoneNameNotFound, missingZoneIdError, type ZoneDirectory } from './zones.ts';

/** Ready/Synced reasons particular to DNSRecord. */
export const DNSReason = {
  /** The change is queued or in flight to Route 53. */
  Pending: 'Pending',
  /** Route 53 accepted the change; its name servers are not all in sync yet. */
  Propagating: 'Propagating',
  Throttled: 'Throttled',
  WaitingForReference: 'WaitingForReference',
  /** The zone spec.zoneName stood for is gone (deleted, perhaps recreated): the name is looked up again. */
  ZoneGone: 'ZoneGone',
} as const;

/**
 * What the DNSRecord adapter needs: the zone directory, record snapshots, batcher and tracker are
 * its account's (shared by every identity and namespace of the account); `signer` is its own.
 */
export interface DNSRecordAdapterDeps {
  readonly zones: ZoneDirectory;
  readonly records: ZoneRecordCache;
  readonly batcher: ChangeBatcher;
  readonly tracker: ChangeTracker;
  /** The Route 53 client of this adapter's identity: every change of its objects is signed by it. */
  readonly signer: Route53Client;
  /** Prefix of ownership TXT record names (default `_skylift-owner`). */
  readonly ownerPrefix: string;
  /** The controller's caches of what DNSRecords refer to: the MyIngress an alias follows (references.ts). */
  readonly refs: ReferenceReader<DNSRecord>;
  /** How soon to look again while a change is queued or propagating. */
  readonly pollMs: number;
  /**
   * How old a zone's listing may be for the look at a settled record (Ready at its generation):
   * the records of a zone resync spread over the resync jitter, and one listing serves them all.
   */
  readonly resyncListingMaxAgeMs: number;
  /** How long to wait for a referenced MyIngress before looking again (its watch usually triggers sooner). */
  readonly referenceRetryMs: number;
}

/**
 * True when the record is settled: Ready, its spec observed at its generation, not being deleted —
 * a look at it is a resync (or an event that changed nothing), not a change to carry out. Pure.
 */
function settled(mr: DNSRecord): boolean {
  return (
    mr.metadata.deletionTimestamp === undefined &&
    mr.status?.observedGeneration === mr.metadata.generation &&
    getCondition(mr.status?.conditions, ConditionType.Ready)?.status === 'True'
  );
}

/** How old a zone listing may be to conclude that a record to adopt or observe is not there. */
const freshListingMs = 1000;

/** Whether the object names a record that must exist (adoption by spec.externalName, or ObserveOnly). Pure. */
function mustFindExisting(mr: DNSRecord): boolean {
  return (
    (mr.spec.externalName !== undefined && mr.spec.externalName !== '') ||
    mr.spec.managementPolicy === 'ObserveOnly'
  );
}

/** What can differ between a record in Route 53 and its spec. */
export type DNSRecordField = 'record' | 'ownership';

type DNSObservation = Observation<undefined, DNSRecordField>;

interface Target {
  readonly zone: HostedZone;
  readonly fqdn: string;
  /** The record as spec.externalName names it: `<name>/<type>[/<setIdentifier>]`. */
  readonly identity: string;
  readonly key: string;
  readonly ownerName: string;
  readonly ownerKey: string;
  /** A wildcard's ownership TXT as Skylift wrote it before issue 27 (legacyWildcardOwnerName); else undefined. */
  readonly legacyOwnerKey: string | undefined;
}

/**
 * DNSRecord's AWS side. Observation reads the zone's shared record snapshot;
 * writes go through the zone's change batcher and are followed on later
 * reconciles through the ticket they left (never awaited in a worker);
 * Ready waits for GetChange INSYNC. Ownership lives in a TXT record beside
 * each record, written in the same change batch.
 */
export class DNSRecordAdapter implements ExternalClient<DNSRecord, undefined, DNSRecordField> {
  private readonly d: DNSRecordAdapterDeps;
  /** In-flight changes by object uid. */
  private readonly tickets = new Map<string, ChangeTicket>();
  /**
   * Objects whose CREATE Route 53 refused as "already exists" while its own
   * listing has no such record (emulators keep deleted alias records as
   * ghosts): their next create is an UPSERT, as nobody can own what nobody
   * can see.
   */
  private readonly ghosts = new Set<string>();

  constructor(deps: DNSRecordAdapterDeps) {
    this.d = deps;
  }

  async observe(mr: DNSRecord, ctx: ReconcileContext): Promise<DNSObservation> {
    try {
      return await this.inZone(mr, (t) => this.observeIn(t, mr, ctx));
    } catch (err) {
      if (goneWithItsZone(mr, err) || (await this.goneWithItsZoneName(mr, err))) return { exists: false };
      throw err;
    }
  }

  /**
   * True when `err` says no hosted zone has the spec.zoneName of a DNSRecord being deleted, and the
   * zone its record was written to (status.zoneId) is confirmed gone by its ID, or none was ever
   * recorded: Route 53 deletes only empty zones, so nothing of this object's is left. "Not found"
   * by name alone (a lookup that may be stale) is never taken as gone.
   */
  private async goneWithItsZoneName(mr: DNSRecord, err: unknown): Promise<boolean> {
    if (mr.metadata.deletionTimestamp === undefined || mr.spec.zoneId !== undefined) return false;
    if (!isZoneNameNotFound(err)) return false;
    const zoneId = mr.status?.zoneId;
    if (zoneId === undefined || zoneId === '') return true;
    this.d.zones.forget(zoneId);
    try {
      await this.d.zones.resolve({ zoneId });
      return false;
    } catch (lookup) {
      if (isNoSuchHostedZone(lookup)) return true;
      throw lookup;
    }
  }

  private async observeIn(t: Target, mr: DNSRecord, ctx: ReconcileContext): Promise<DNSObservation> {
    // A change recorded in another zone (the one spec.zoneName stood for before) says nothing about this one.
    const sameZone = mr.status?.zoneId === undefined || mr.status.zoneId === t.zone.id;
    const status: KindStatusOf<DNSRecord> = {
      fqdn: t.fqdn,
      zoneId: t.zone.id,
      ...pick(mr.status, sameZone ? ['changeId', 'changeStatus', 'aliasDNSName'] : ['aliasDNSName']),
    };
    let ticket = this.tickets.get(ctx.ownership.uid);
    if (ticket !== undefined && ticket.zoneId !== t.zone.id) {
      // Submitted to a zone the object no longer resolves to: whatever became of it, it is not this zone's.
      this.tickets.delete(ctx.ownership.uid);
      ticket = undefined;
    }
    if (ticket !== undefined) {
      if (ticket.state === 'failed') {
        this.tickets.delete(ctx.ownership.uid);
        const refusal = await this.createRefusal(t, ticket);
        if (refusal === 'phantom') {
          // Not in the zone, whatever Route 53 said: the engine creates it again, as an UPSERT.
          this.ghosts.add(ctx.ownership.uid);
          return { exists: false };
        }
        // 'exists': someone made the record since the zone was listed (by hand, another tool or
        // another Skylift), or an earlier CREATE of this very object was carried out but its answer
        // was lost. The fresh listing below observes it like any other record: ours, or a conflict
        // the engine reports naming its owner or advising spec.externalName.
        if (refusal !== 'exists') throw ticket.error ?? new Error('Route 53 change failed');
      } else if (ticket.state !== 'applied') {
        // The change stays queued and the zone's batch is retried; this pass reports the failure,
        // whether the object is live or being deleted. Throttling passes by itself: the ticket is
        // looked at again at the poll interval, not after a backoff that grows with each look.
        const failing = ticket.failing;
        if (failing?.reason === DNSReason.Throttled)
          throw new RequeueAfter(this.d.pollMs, failing.message, DNSReason.Throttled);
        if (failing !== undefined) throw new RetryableError(failing.reason, failing.message);
        return busyObservation({
          ownership: ctx.ownership,
          reason: DNSReason.Pending,
          message: ticket.note ?? 'change queued for Route 53',
          status,
          details: undefined,
          requeueAfterMs: this.d.pollMs,
        });
      }
      this.tickets.delete(ctx.ownership.uid);
      if (ticket.changeId !== undefined && ticket.changeId !== '') {
        status.changeId = ticket.changeId;
        status.changeStatus = 'PENDING';
      }
    }

    let snap = await this.d.records.get(t.zone.id, settled(mr) ? this.d.resyncListingMaxAgeMs : undefined);
    let rr = snap.records.get(t.key);
    if (rr === undefined && mustFindExisting(mr)) {
      // Adopting or observing: "absent" ends in Terminal or NotFound, so it is judged on a listing
      // made now, not on one up to the cache's age old (a record made since would be missed).
      snap = await this.d.records.get(t.zone.id, freshListingMs);
      rr = snap.records.get(t.key);
    }
    if (rr === undefined) return { exists: false };
    const current = snap.records.get(t.ownerKey);
    const legacy = current === undefined ? await this.ownLegacyMark(t, mr, ctx) : undefined;
    const ownerRr = current ?? legacy;
    const ownership = ownerRr !== undefined ? parseOwnerValue(txtValue(ownerRr)) : undefined;

    const delta: DeltaEntry<DNSRecordField>[] = [];
    if (mr.metadata.deletionTimestamp === undefined && mr.spec.managementPolicy !== 'ObserveOnly') {
      const alias = this.resolveAlias(mr);
      if (alias !== undefined) status.aliasDNSName = alias.dnsName;
      else delete status.aliasDNSName;
      const cmp = compareRecordSets(rr, desiredRecordSet(mr.spec, t.fqdn, alias));
      if (cmp.diff !== undefined) delta.push({ field: 'record', change: cmp.diff });
      if (ownership?.uid !== ctx.ownership.uid)
        delta.push({ field: 'ownership', change: 'ownership record missing' });
      else if (legacy !== undefined)
        delta.push({ field: 'ownership', change: 'ownership record under its old wildcard name' });
    }

    let ready: ReadyState = { ready: true, reason: Reason.Available };
    let requeueAfterMs: number | undefined;
    const changeId = status.changeId;
    if (changeId !== undefined && status.changeStatus !== 'INSYNC') {
      status.changeStatus = await this.d.tracker.status(changeId);
      if (status.changeStatus !== 'INSYNC') {
        ready = {
          ready: false,
          reason: DNSReason.Propagating,
          message: `Route 53 is propagating change ${changeId}`,
        };
        requeueAfterMs = this.d.pollMs;
      }
    }
    return {
      exists: true,
      details: undefined,
      ownership,
      identity: t.identity,
      delta,
      ready,
      status,
      ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
    };
  }

  create(mr: DNSRecord, ctx: ReconcileContext): Promise<Created> {
    return this.inZone(mr, (t) => this.createIn(t, mr, ctx));
  }

  private async createIn(t: Target, mr: DNSRecord, ctx: ReconcileContext): Promise<Created> {
    const alias = this.resolveAlias(mr);
    const rr = desiredRecordSet(mr.spec, t.fqdn, alias);
    // CREATE fails if someone else wrote the name since we looked; when our
    // ownership record is still there, the name is ours and UPSERT puts it back.
    const snap = await this.d.records.get(t.zone.id);
    const ownerRr = snap.records.get(t.ownerKey);
    const legacy = await this.ownLegacyMark(t, mr, ctx);
    const ghost = this.ghosts.delete(ctx.ownership.uid);
    const ours = ghost || ownerUid(ownerRr) === ctx.ownership.uid || legacy !== undefined;
    this.submit(t, mr, ctx, [
      { Action: ours ? 'UPSERT' : 'CREATE', ResourceRecordSet: rr },
      { Action: 'UPSERT', ResourceRecordSet: this.ownerRecord(t, ctx) },
      ...(legacy !== undefined ? [{ Action: 'DELETE' as const, ResourceRecordSet: legacy }] : []),
    ]);
    return {
      status: {
        fqdn: t.fqdn,
        zoneId: t.zone.id,
        ...(alias !== undefined ? { aliasDNSName: alias.dnsName } : {}),
      },
      description: `submitted ${mr.spec.type} ${t.fqdn} to Route 53`,
    };
  }

  update(
    mr: DNSRecord,
    observed: ExistingObservation<undefined, DNSRecordField>,
    ctx: ReconcileContext,
  ): Promise<Updated> {
    return this.inZone(mr, async (t) =>
      this.updateIn(t, mr, observed, ctx, await this.ownLegacyMark(t, mr, ctx)),
    );
  }

  private updateIn(
    t: Target,
    mr: DNSRecord,
    observed: ExistingObservation<undefined, DNSRecordField>,
    ctx: ReconcileContext,
    legacy: ResourceRecordSet | undefined,
  ): Updated {
    if (this.inFlight(ctx)) return { description: 'a change is already in flight', pending: true };
    const rr = desiredRecordSet(mr.spec, t.fqdn, this.resolveAlias(mr));
    const changes: Change[] = [{ Action: 'UPSERT', ResourceRecordSet: rr }];
    if (observed.ownership?.uid !== ctx.ownership.uid || legacy !== undefined)
      changes.push({ Action: 'UPSERT', ResourceRecordSet: this.ownerRecord(t, ctx) });
    // The old mark moves to the new name in the same batch, so the record is never without one.
    if (legacy !== undefined) changes.push({ Action: 'DELETE', ResourceRecordSet: legacy });
    this.submit(t, mr, ctx, changes);
    const diff = describeDelta(observed.delta);
    return {
      description: `UPSERT ${mr.spec.type} ${t.fqdn}${diff !== undefined ? `: ${diff}` : ''}`,
      pending: true,
    };
  }

  async delete(
    mr: DNSRecord,
    _observed: ExistingObservation<undefined, DNSRecordField>,
    ctx: ReconcileContext,
  ): Promise<{ gone: boolean }> {
    if (this.inFlight(ctx)) return Promise.resolve({ gone: false });
    return this.inZone(mr, (t) => this.deleteIn(t, mr, ctx));
  }

  private async deleteIn(t: Target, mr: DNSRecord, ctx: ReconcileContext): Promise<{ gone: boolean }> {
    const snap = await this.d.records.get(t.zone.id);
    const changes: Change[] = [];
    const rr = snap.records.get(t.key);
    if (rr !== undefined) changes.push({ Action: 'DELETE', ResourceRecordSet: rr });
    const ownerRr = snap.records.get(t.ownerKey);
    if (ownerRr !== undefined && ownerUid(ownerRr) === ctx.ownership.uid)
      changes.push({ Action: 'DELETE', ResourceRecordSet: ownerRr });
    const legacy = await this.ownLegacyMark(t, mr, ctx);
    if (legacy !== undefined) changes.push({ Action: 'DELETE', ResourceRecordSet: legacy });
    if (changes.length === 0) return { gone: true };
    this.submit(t, mr, ctx, changes);
    return { gone: false };
  }

  /**
   * Lets go of the object (deletionPolicy Orphan, ObserveOnly) leaving the record and its ownership
   * TXT as they are in Route 53. A change of its still waiting in the zone's batch is withdrawn, so
   * nothing is written for it once it is released; a change already sent cannot be called back, so
   * the release waits until Route 53 has answered it (the record and TXT then stand as that change
   * left them, the two written in one batch).
   */
  release(mr: DNSRecord, ctx: ReconcileContext): Promise<Released> {
    const uid = ctx.ownership.uid;
    this.ghosts.delete(uid);
    const { inFlight } = this.d.batcher.withdraw(uid);
    if (inFlight > 0) {
      return Promise.resolve({
        waiting: {
          message: `waiting for Route 53 to answer the change sent for ${mr.spec.type} ${mr.status?.fqdn ?? mr.spec.name} before letting go of the record (nothing more is sent for it)`,
          requeueAfterMs: this.d.pollMs,
        },
      });
    }
    this.tickets.delete(uid);
    return Promise.resolve({});
  }

  /**
   * Runs `fn` against the zone `mr` resolves to. When a call against that zone answers
   * NoSuchHostedZone (its listing, a change batch), the directory forgets the zone and its records
   * are dropped, so the next reconcile looks spec.zoneName up again instead of failing against the
   * old ID until a restart; this reconcile ends with {@link zoneGoneError}.
   */
  private async inZone<R>(mr: DNSRecord, fn: (t: Target) => Promise<R>): Promise<R> {
    const t = await this.target(mr);
    try {
      return await fn(t);
    } catch (err) {
      if (!isNoSuchHostedZone(err)) throw err;
      this.d.zones.forget(t.zone.id);
      this.d.records.invalidate(t.zone.id);
      throw zoneGoneError(mr.spec, t.zone, err);
    }
  }

  /**
   * Why a CREATE was refused as "already exists", judged from a fresh listing (which the caller
   * then reads): `phantom` when the record is not there, `exists` when it is (whoever made it),
   * `other` for any other failure, which stands.
   */
  private async createRefusal(t: Target, ticket: ChangeTicket): Promise<'phantom' | 'exists' | 'other'> {
    if (!(ticket.error instanceof OwnershipConflictError) || !/already exists/i.test(ticket.error.message))
      return 'other';
    if (!ticket.changes.some((c) => c.Action === 'CREATE')) return 'other';
    this.d.records.invalidate(t.zone.id);
    const snap = await this.d.records.get(t.zone.id);
    return snap.records.has(t.key) ? 'exists' : 'phantom';
  }

  private inFlight(ctx: ReconcileContext): boolean {
    const t = this.tickets.get(ctx.ownership.uid);
    return t !== undefined && (t.state === 'queued' || t.state === 'submitted');
  }

  private submit(t: Target, mr: DNSRecord, ctx: ReconcileContext, changes: Change[]): void {
    let ticket: ChangeTicket;
    try {
      ticket = this.d.batcher.submit(t.zone.id, ctx.ownership.uid, changes, {
        ownership: ctx.ownership,
        tenant: mr.metadata.namespace ?? '',
        via: this.d.signer,
      });
    } catch (err) {
      if (err instanceof RecordSetBusyError) throw recordSetBusyError(err, t, ctx.ownership);
      throw err instanceof ChangeTooLargeError ? recordsTooLargeError(err) : err;
    }
    this.tickets.set(ctx.ownership.uid, ticket);
  }

  private ownerRecord(t: Target, ctx: ReconcileContext): ResourceRecordSet {
    return {
      Name: t.ownerName,
      Type: 'TXT',
      TTL: 300,
      ResourceRecords: [{ Value: ownerRecordValue(ctx.ownership) }],
    };
  }

  private async target(mr: DNSRecord): Promise<Target> {
    const zone = await this.d.zones.resolve(mr.spec);
    const fqdn = dnsRecordFqdn(mr.spec.name, zone.name);
    if (mr.spec.type === 'CNAME' && fqdn === zone.name)
      throw new TerminalError(
        `spec.type CNAME cannot be at the zone apex (${fqdn}; DNS allows no CNAME beside the zone's SOA and NS): the name and type are fixed at create, so delete this DNSRecord and create an A or AAAA record with spec.aliasTarget instead`,
      );
    if (mr.spec.type === 'NS' && fqdn === zone.name)
      throw new TerminalError(
        `the zone's own NS records at its apex (${fqdn}) are its delegation, which Route 53 keeps; Skylift will not adopt or change them: manage the NS records of a subdomain instead`,
      );
    if (fqdn.startsWith(`${this.d.ownerPrefix.toLowerCase()}.`))
      throw new TerminalError(
        `${fqdn} is a Skylift ownership record name (prefix ${this.d.ownerPrefix}); Skylift will not manage or adopt ownership records: choose another spec.name`,
      );
    const ext = mr.spec.externalName;
    if (ext !== undefined && ext !== '')
      checkExternalName(ext, fqdn, mr.spec.type, mr.spec.setIdentifier, zone.name);
    const ownerName = ownerRecordName(fqdn, mr.spec.type, mr.spec.setIdentifier, this.d.ownerPrefix);
    const legacyOwnerName = legacyWildcardOwnerName(
      fqdn,
      mr.spec.type,
      mr.spec.setIdentifier,
      this.d.ownerPrefix,
    );
    const set = mr.spec.setIdentifier;
    return {
      zone,
      fqdn,
      identity: `${fqdn.replace(/\.$/, '')}/${mr.spec.type}${set !== undefined ? `/${set}` : ''}`,
      key: recordKey(fqdn, mr.spec.type, mr.spec.setIdentifier),
      ownerName,
      ownerKey: recordKey(ownerName, 'TXT'),
      legacyOwnerKey: legacyOwnerName !== undefined ? recordKey(legacyOwnerName, 'TXT') : undefined,
    };
  }

  /**
   * This object's own ownership TXT under the name Skylift gave a wildcard's mark before issue 27
   * (which a literal `_wildcard` record's mark also had), to be moved to the new name: only the
   * object's own uid counts, and never for an adoption (spec.externalName), so a mark another
   * object wrote there is neither taken nor removed.
   */
  private async ownLegacyMark(
    t: Target,
    mr: DNSRecord,
    ctx: ReconcileContext,
  ): Promise<ResourceRecordSet | undefined> {
    if (t.legacyOwnerKey === undefined) return undefined;
    if (mr.spec.externalName !== undefined && mr.spec.externalName !== '') return undefined;
    const rr = (await this.d.records.get(t.zone.id)).records.get(t.legacyOwnerKey);
    return ownerUid(rr) === ctx.ownership.uid ? rr : undefined;
  }

  private resolveAlias(mr: DNSRecord): AliasTarget | undefined {
    const a = mr.spec.aliasTarget;
    if (a === undefined) return undefined;
    const evaluateTargetHealth = a.evaluateTargetHealth ?? false;
    if (a.myIngressRef === undefined)
      return { dnsName: a.dnsName ?? '', hostedZoneId: a.hostedZoneId ?? '', evaluateTargetHealth };
    const ns = mr.metadata.namespace ?? '';
    const ref = a.myIngressRef.name;
    const wait = this.d.referenceRetryMs;
    const ming = this.d.refs.get(aliasTargetRef, ns, ref);
    if (ming === undefined)
      throw new RequeueAfter(
        wait,
        `waiting for MyIngress ${ref}: it does not exist (yet)`,
        DNSReason.WaitingForReference,
      );
    const dnsName = ming.status?.dnsName;
    const hostedZoneId = ming.status?.canonicalHostedZoneId;
    if (dnsName === undefined || dnsName === '' || hostedZoneId === undefined || hostedZoneId === '') {
      throw new RequeueAfter(
        wait,
        `waiting for MyIngress ${ref} to report its load balancer (status.dnsName and status.canonicalHostedZoneId)`,
        DNSReason.WaitingForReference,
      );
    }
    return { dnsName, hostedZoneId, evaluateTargetHealth };
  }
}

/**
 * The error a reconcile ends with after a call against the zone a DNSRecord resolved to answered
 * NoSuchHostedZone (the caller has forgotten that zone). By spec.zoneId: Terminal, naming
 * spec.zoneId and what to do ({@link missingZoneIdError}), as no retry brings that zone back. By
 * spec.zoneName: retryable, so the engine backs off rather than waiting for the resync, and the next
 * reconcile looks the name up again: a zone recreated under it is found (and a name no zone has any
 * more is Terminal there). Pure.
 */
export function zoneGoneError(
  spec: Pick<DNSRecordSpec, 'zoneId' | 'zoneName'>,
  zone: HostedZone,
  cause: unknown,
): Error {
  if (spec.zoneId !== undefined) return missingZoneIdError(zone.id, cause);
  return new RetryableError(
    DNSReason.ZoneGone,
    `hosted zone ${zone.id} that spec.zoneName ${zone.name} stood for no longer exists: looking the name up again`,
    { cause },
  );
}

/**
 * The Conflict of an object whose change was refused because another object is writing the same
 * record set: names that object when the object may know it (its own namespace and cluster,
 * {@link ownerAsSeenBy}), else only where it is. Pure.
 */
export function recordSetBusyError(
  err: RecordSetBusyError,
  t: Pick<Target, 'identity' | 'zone'>,
  ours: OwnershipTags,
): OwnershipConflictError {
  const who = err.other !== undefined ? ownerAsSeenBy(err.other, ours) : 'another Skylift object';
  return new OwnershipConflictError(
    `${who} is writing the record set ${t.identity} in zone ${t.zone.name} (${t.zone.id}) at the same time; Skylift will not let two objects own one record: delete one of the two, or give it another spec.name, type or setIdentifier`,
    { cause: err },
  );
}

/**
 * The error for record changes Route 53 cannot take in one request (the batcher's
 * ChangeTooLargeError): spec.records is what to shorten. Pure.
 */
export function recordsTooLargeError(err: ChangeTooLargeError): TerminalError {
  return new TerminalError(
    `spec.records is too large for one Route 53 change (${err.records} records, ${err.chars} value characters; the limits are ${route53Limits.maxRecords} and ${route53Limits.maxValueChars}, UPSERT counted twice): shorten or reduce spec.records`,
  );
}

/**
 * True when `err` says the zone of a DNSRecord being deleted, named by spec.zoneId, does not exist:
 * its record went with the zone, so nothing is left to delete. (By spec.zoneName the name is looked
 * up again first: a zone recreated under it may hold the record.) Pure.
 */
export function goneWithItsZone(mr: DNSRecord, err: unknown): boolean {
  return (
    mr.metadata.deletionTimestamp !== undefined && mr.spec.zoneId !== undefined && isNoSuchHostedZone(err)
  );
}

/** externalName names the record to adopt: `<name>/<type>[/<setIdentifier>]`; it must be this spec's record. */
function checkExternalName(
  ext: string,
  fqdn: string,
  type: string,
  setIdentifier: string | undefined,
  zone: string,
): void {
  const [name = '', extType = '', ...rest] = ext.split('/');
  const extSet = rest.length > 0 ? rest.join('/') : undefined;
  let extFqdn: string;
  try {
    extFqdn = recordFqdn(name, zone);
  } catch {
    extFqdn = '';
  }
  if (extFqdn !== fqdn || extType.toUpperCase() !== type || (extSet ?? '') !== (setIdentifier ?? '')) {
    throw new TerminalError(
      `spec.externalName ${JSON.stringify(ext)} must name this record as <name>/<type>[/<setIdentifier>], e.g. ${JSON.stringify(`${fqdn}/${type}${setIdentifier !== undefined ? `/${setIdentifier}` : ''}`)}`,
    );
  }
}

function txtValue(rr: ResourceRecordSet): string {
  return (rr.ResourceRecords ?? []).map((r) => r.Value ?? '').join(' ');
}

/** The object uid an ownership TXT record names (undefined when absent or unreadable). */
function ownerUid(rr: ResourceRecordSet | undefined): string | undefined {
  return rr !== undefined ? parseOwnerValue(txtValue(rr))?.uid : undefined;
}

/** The fields `keys` of `status` that are set. Pure. */
function pick<S extends object, K extends keyof S>(
  status: S | undefined,
  keys: readonly K[],
): Partial<Pick<S, K>> {
  const out: Partial<Pick<S, K>> = {};
  for (const k of keys) if (status?.[k] !== undefined) out[k] = status[k];
  return out;
}
