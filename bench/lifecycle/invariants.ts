// What must hold between the model and the real system. Pure: the model and
// one observation in, two lists of sentences out.
//
// - `broken`: safety — must hold at every moment (nothing made by hand is
//   changed, no two objects are Ready on one thing, no Secret carries another
//   object's database host, nothing Skylift owns belongs to no object).
// - `waiting`: liveness — may be false for a while after a step, and must hold
//   once the step has settled (every object Ready, or refused with a message
//   naming what to do; deleted objects gone with what they owned; Ready=True
//   only where AWS matches the spec).
import type { ResourceRecordSet } from '@aws-sdk/client-route-53';
import { normalizeName } from '../../src/providers/route53/names.ts';
import { hosts, type Host, type LifecycleModel, type ModelObject } from './model.ts';
import type { Observed, ObservedCr } from './world.ts';

/** The outcome of comparing the model with one observation. */
export interface Verdict {
  readonly broken: string[];
  readonly waiting: string[];
}

/** Facts about the world the checks need. */
export interface JudgeContext {
  readonly zoneName: string;
}

/** Ready=False reasons that mean "a human must act", with Synced=True: settled. */
const actionRequiredReasons = new Set([
  'ServiceNotFound',
  'ServicePortNotFound',
  'NotFound',
  'PasswordUnknown',
]);
/** Synced=False reasons that end a pass until the spec (or something outside) changes: settled. */
const refusedReasons = new Set(['Terminal', 'Conflict', 'Forbidden']);

/** Compares the model with an observation. Pure. */
export function judge(m: LifecycleModel, o: Observed, ctx: JudgeContext): Verdict {
  const broken: string[] = [];
  const waiting: string[] = [];
  const crByName = new Map(o.crs.map((c) => [c.name, c]));
  const fqdn = (host: string): string => `${host}.${ctx.zoneName}.`;
  // Names as Route 53 compares them (`*` or `\052`, case, trailing dot).
  const record = (name: string, type: string): ResourceRecordSet | undefined =>
    o.records.find((r) => normalizeName(r.Name ?? '') === normalizeName(name) && r.Type === type);
  const txtUid = (host: string): string | undefined =>
    o.inventory.records.find((r) => normalizeName(r.fqdn) === normalizeName(fqdn(host)) && r.type === 'A')
      ?.owner.uid;

  // Made by hand: untouched.
  for (const [host, value] of m.foreignRecords) {
    const r = record(fqdn(host), 'A');
    const values = (r?.ResourceRecords ?? []).map((x) => x.Value ?? '');
    if (r === undefined) broken.push(`hand-made record ${fqdn(host)} A was deleted`);
    else if (values.length !== 1 || values[0] !== value)
      broken.push(`hand-made record ${fqdn(host)} A was changed to ${values.join(',')} (was ${value})`);
    const uid = txtUid(host);
    if (uid !== undefined) broken.push(`hand-made record ${fqdn(host)} A got an ownership TXT (uid ${uid})`);
  }
  for (const [name, data] of m.foreignSecrets) {
    const s = o.secrets.get(name);
    if (s === undefined) broken.push(`hand-made Secret ${name} was deleted`);
    else {
      if (JSON.stringify(sorted(s.data)) !== JSON.stringify(sorted(data)))
        broken.push(`hand-made Secret ${name} was changed: keys ${Object.keys(s.data).join(',')}`);
      if (s.ownerUids.length > 0)
        broken.push(`hand-made Secret ${name} got owner references ${s.ownerUids.join(',')}`);
    }
  }
  for (const [name, made] of m.foreignSlices) {
    const now = o.endpointSlices.get(name);
    if (now === undefined) broken.push(`hand-made EndpointSlice ${name} was deleted`);
    else if (now !== made.resourceVersion)
      broken.push(
        `hand-made EndpointSlice ${name} was changed (resourceVersion ${made.resourceVersion} → ${now})`,
      );
    // Only the EndpointSlice controller's addresses go behind a load balancer.
    for (const [tg, targets] of o.targets)
      if (targets.some((t) => t.startsWith(`${made.address}:`)))
        broken.push(`the address ${made.address} of hand-made EndpointSlice ${name} is a target of ${tg}`);
  }

  // No two objects Ready on one thing.
  // Ready and Synced: a Ready beside Synced=False is, by the condition rules, as last observed (it
  // may be stale while a retry is under way, e.g. after the zone was recreated).
  const readyLive = o.crs.filter((c) => !c.deleting && isReady(c) && c.synced?.status === 'True');
  exclusive(
    broken,
    'record',
    readyLive.filter((c) => c.kind === 'DNSRecord').map((c) => [c.name, str(c.spec.name)]),
  );
  exclusive(
    broken,
    'connection Secret',
    readyLive
      .filter((c) => c.kind === 'ManagedDB')
      .map((c) => [c.name, str((c.spec.writeConnectionSecretToRef as { name?: unknown } | undefined)?.name)]),
  );
  exclusive(
    broken,
    'DB instance',
    readyLive.filter((c) => c.kind === 'ManagedDB').map((c) => [c.name, str(c.status.identifier)]),
  );

  // A connection Secret carries its own object's database, never another's.
  const dbOwnerByAddress = new Map<string, string>();
  for (const inv of o.inventory.dbInstances) {
    const addr = o.dbs.get(inv.identifier)?.address;
    if (addr !== undefined && addr !== '') dbOwnerByAddress.set(addr, inv.owner.uid);
  }
  for (const [name, s] of o.secrets) {
    if (s.controllerUid === undefined || s.data.host === undefined || s.data.host === '') continue;
    const owner = dbOwnerByAddress.get(s.data.host);
    if (owner !== undefined && owner !== s.controllerUid)
      broken.push(
        `Secret ${name} of uid ${s.controllerUid} carries the host of another object's instance (uid ${owner})`,
      );
  }

  // Nothing Skylift owns belongs to no object.
  const liveUids = new Set(o.crs.map((c) => c.uid));
  const orphanUids = new Set(m.deleted.filter((d) => d.deletionPolicy === 'Orphan').map((d) => d.uid));
  const deletedUids = new Set(m.deleted.filter((d) => d.deletionPolicy === 'Delete').map((d) => d.uid));
  const owned: { what: string; uid: string }[] = [
    ...o.inventory.loadBalancers.map((x) => ({ what: `load balancer ${x.name}`, uid: x.owner.uid })),
    ...o.inventory.targetGroups.map((x) => ({ what: `target group ${x.name}`, uid: x.owner.uid })),
    ...o.inventory.dbInstances.map((x) => ({ what: `DB instance ${x.identifier}`, uid: x.owner.uid })),
    ...o.inventory.records.map((x) => ({ what: `record ${x.fqdn} ${x.type}`, uid: x.owner.uid })),
  ];
  const modelUids = new Set(m.uids.values());
  for (const x of owned) {
    if (liveUids.has(x.uid) || orphanUids.has(x.uid)) continue;
    if (deletedUids.has(x.uid)) waiting.push(`${x.what} of a deleted object (uid ${x.uid}) is still in AWS`);
    else if (!modelUids.has(x.uid))
      broken.push(`${x.what} is owned by uid ${x.uid}, which no object of this run had`);
    else waiting.push(`${x.what} is owned by uid ${x.uid}, whose object is gone`);
  }
  for (const host of hosts) {
    const uid = txtUid(host);
    if (uid !== undefined && record(fqdn(host), 'A') === undefined && !orphanUids.has(uid))
      waiting.push(`ownership TXT for ${fqdn(host)} (uid ${uid}) guards no record`);
  }

  // Deleted objects are gone.
  for (const d of m.deleted) {
    const cr = crByName.get(d.name);
    if (cr !== undefined && cr.uid === d.uid)
      waiting.push(
        `${d.kind} ${d.name} was deleted but is still there (finalizers ${cr.finalizers.join(',') || 'none'}, Ready ${describe(cr)})`,
      );
  }

  // Every live object settles, and Ready=True means AWS matches.
  for (const obj of m.live.values()) {
    const cr = crByName.get(obj.name);
    if (cr === undefined) {
      broken.push(`${obj.kind} ${obj.name} is missing from the apiserver`);
      continue;
    }
    const unsettled = settledProblem(cr);
    if (unsettled !== undefined) {
      waiting.push(`${obj.kind} ${obj.name}: ${unsettled}`);
      continue;
    }
    if (isReady(cr)) {
      const mismatch = readyMismatch(obj, cr, o, { fqdn, record, txtUid });
      if (mismatch !== undefined) waiting.push(`${obj.kind} ${obj.name} is Ready but ${mismatch}`);
    }
  }
  return { broken, waiting };
}

/** The invariant a step that stops AWS answering checks (see {@link outageProblem}). */
export const outageInvariant =
  'an object whose AWS calls get no answer says so: Synced=False reason=AWSUnreachable';

/**
 * Why `cr` does not (yet) report an AWS outage as {@link outageInvariant} asks, or undefined when
 * it does. Pure.
 */
export function outageProblem(cr: ObservedCr | undefined): string | undefined {
  if (cr === undefined) return 'the object is missing from the apiserver';
  if (cr.synced?.status === 'False' && cr.synced.reason === 'AWSUnreachable') return undefined;
  return describe(cr);
}

/**
 * The state of the world, one line per object, record set and tagged AWS resource, for a failure
 * report: where every object stood, and what AWS held, when the invariant broke. Pure.
 */
export function describeState(o: Observed): string[] {
  const lines = o.crs.map(
    (c) =>
      `${c.kind} ${c.name} (uid ${c.uid}): generation ${c.generation}, observed ${c.observedGeneration ?? 'none'}${c.deleting ? ', being deleted' : ''}, finalizers ${c.finalizers.join(',') || 'none'}; ${describe(c)}`,
  );
  if (lines.length === 0) lines.push('no Skylift objects');
  for (const r of o.records)
    if (r.Type !== 'NS' && r.Type !== 'SOA')
      lines.push(
        `record ${r.Name ?? ''} ${r.Type ?? ''}: ${(r.ResourceRecords ?? []).map((x) => x.Value ?? '').join(',') || (r.AliasTarget?.DNSName ?? '')}`,
      );
  for (const x of o.inventory.loadBalancers) lines.push(`load balancer ${x.name} of uid ${x.owner.uid}`);
  for (const x of o.inventory.targetGroups) lines.push(`target group ${x.name} of uid ${x.owner.uid}`);
  for (const x of o.inventory.dbInstances) lines.push(`DB instance ${x.identifier} of uid ${x.owner.uid}`);
  return lines;
}

/** Why an object has not settled at its generation, or undefined when it has. Pure. */
export function settledProblem(cr: ObservedCr): string | undefined {
  const { ready, synced } = cr;
  if (ready === undefined || synced === undefined) return 'no Ready/Synced conditions yet';
  if (cr.observedGeneration !== cr.generation || synced.observedGeneration !== cr.generation)
    return `generation ${cr.generation} not observed yet (status at ${cr.observedGeneration ?? 'none'})`;
  if (ready.status === 'True' && synced.status === 'True') return undefined;
  if (synced.status === 'False' && refusedReasons.has(synced.reason)) {
    return synced.message.length >= 20
      ? undefined
      : `refused (${synced.reason}) without a usable message: "${synced.message}"`;
  }
  if (ready.status === 'False' && synced.status === 'True' && actionRequiredReasons.has(ready.reason))
    return ready.message.length >= 20 ? undefined : `${ready.reason} without a usable message`;
  return `in progress: ${describe(cr)}`;
}

function isReady(cr: ObservedCr): boolean {
  return cr.ready?.status === 'True' && cr.ready.observedGeneration === cr.generation;
}

function describe(cr: ObservedCr): string {
  const c = (x: ObservedCr['ready']): string =>
    x === undefined ? '-' : `${x.status}/${x.reason} "${x.message.slice(0, 160)}"`;
  return `Ready ${c(cr.ready)}, Synced ${c(cr.synced)}`;
}

interface RecordLookup {
  fqdn(host: string): string;
  record(name: string, type: string): ResourceRecordSet | undefined;
  txtUid(host: Host): string | undefined;
}

/** What differs between a Ready object's spec and AWS, or undefined. Pure. */
function readyMismatch(obj: ModelObject, cr: ObservedCr, o: Observed, r: RecordLookup): string | undefined {
  switch (obj.kind) {
    case 'DNSRecord': {
      const rec = r.record(r.fqdn(obj.host), 'A');
      if (rec === undefined) return `${r.fqdn(obj.host)} A is not in the zone`;
      const values = (rec.ResourceRecords ?? []).map((x) => x.Value ?? '').sort();
      if (values.join(',') !== [...obj.values].sort().join(','))
        return `${r.fqdn(obj.host)} A holds ${values.join(',')}, the spec says ${[...obj.values].sort().join(',')}`;
      const uid = r.txtUid(obj.host);
      if (uid !== cr.uid)
        return `the ownership TXT of ${r.fqdn(obj.host)} names uid ${uid ?? 'none'}, not ${cr.uid}`;
      return undefined;
    }
    case 'ManagedDB': {
      const id = str(cr.status.identifier);
      const db = o.dbs.get(id);
      if (db === undefined) return `its DB instance ${JSON.stringify(id)} does not exist`;
      if (db.instanceClass !== obj.instanceClass)
        return `${id} is a ${db.instanceClass}, the spec says ${obj.instanceClass}`;
      const tagged = o.inventory.dbInstances.find((x) => x.identifier === id);
      if (tagged?.owner.uid !== cr.uid) return `${id} is tagged for uid ${tagged?.owner.uid ?? 'none'}`;
      const s = o.secrets.get(obj.secret);
      if (s === undefined) return `its connection Secret ${obj.secret} does not exist`;
      if (s.controllerUid !== cr.uid)
        return `its connection Secret ${obj.secret} is controlled by ${s.controllerUid ?? 'nobody'}`;
      if (s.data.host !== db.address)
        return `its connection Secret's host is ${s.data.host ?? 'missing'}, not ${db.address}`;
      if (s.data.username !== 'app')
        return `its connection Secret names user ${s.data.username ?? 'none'}, not app`;
      // The Secret's password is the one RDS was last given (issue 27: renamed, deleted, claimed, restored).
      const given = o.passwords.get(id);
      if (given === undefined) return `RDS was never given a master password for ${id} through the proxy`;
      if (s.data.password !== given)
        return `its connection Secret ${obj.secret} holds ${s.data.password === undefined ? 'no password' : 'another password'} than the one RDS was last given for ${id}`;
      return undefined;
    }
    case 'MyIngress': {
      const lb = o.inventory.loadBalancers.find((x) => x.owner.uid === cr.uid);
      if (lb === undefined) return 'no load balancer is tagged for it';
      const ports = lb.listeners.map((l) => l.port).sort((a, b) => a - b);
      if (ports.join(',') !== String(obj.port))
        return `its load balancer listens on ${ports.join(',') || 'nothing'}, the spec says ${obj.port}`;
      return undefined;
    }
  }
}

function exclusive(broken: string[], what: string, claims: readonly (readonly [string, string])[]): void {
  const by = new Map<string, string[]>();
  for (const [name, key] of claims) {
    if (key === '') continue;
    by.set(key, [...(by.get(key) ?? []), name]);
  }
  for (const [key, names] of by)
    if (names.length > 1) broken.push(`${names.join(' and ')} are all Ready on ${what} ${key}`);
}

function sorted(o: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => a.localeCompare(b));
}

/** A string field of a loosely typed object, or ''. Pure. */
function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
