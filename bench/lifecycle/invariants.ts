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
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { groupMembers, hosts, liveOf, type Host, type LifecycleModel, type ModelObject } from './model.ts';
import type { Observed, ObservedCr } from './world.ts';

/** The outcome of comparing the model with one observation. */
export interface Verdict {
  readonly broken: string[];
  readonly waiting: string[];
}

/** Facts about the world the checks need. */
export interface JudgeContext {
  readonly zoneName: string;
  /** The world's namespace (its Gateways' groups are `gateway.<ns>.<name>`). */
  readonly ns: string;
}

/** Ready=False reasons that mean "a human must act", with Synced=True: settled. */
const actionRequiredReasons = new Set([
  'ServiceNotFound',
  'ServicePortNotFound',
  'NotFound',
  'PasswordUnknown',
  // A group no MyIngress names (it has no load balancer), a member naming a group that is gone.
  'NoMembers',
  'GroupNotFound',
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
    ...(o.inventory.securityGroups ?? []).map((x) => ({ what: `security group ${x.id}`, uid: x.owner.uid })),
  ];
  const modelUids = new Set(m.uids.values());
  const gatewayGroupPrefix = `/${gatewayGroupName(ctx.ns, '')}`;
  const ownerOf = new Map(
    [...o.inventory.loadBalancers, ...o.inventory.targetGroups, ...(o.inventory.securityGroups ?? [])].map(
      (x) => [x.owner.uid, x.owner.owner],
    ),
  );
  for (const x of owned) {
    if (liveUids.has(x.uid) || orphanUids.has(x.uid)) continue;
    if (deletedUids.has(x.uid)) waiting.push(`${x.what} of a deleted object (uid ${x.uid}) is still in AWS`);
    else if (m.gatewayGroupUids.has(x.uid))
      waiting.push(
        `${x.what} is owned by MyIngressGroup ${m.gatewayGroupUids.get(x.uid) ?? ''} (uid ${x.uid}) of a Gateway, which is gone`,
      );
    // A Gateway's group is the operator's: made between this observation's object list and its AWS reads.
    else if (ownerOf.get(x.uid)?.startsWith(gatewayGroupPrefix) === true)
      waiting.push(`${x.what} is owned by ${ownerOf.get(x.uid) ?? ''} (uid ${x.uid}), not listed yet`);
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
    // Not Skylift's objects: judged by judgeGroups from what Skylift wrote in their status.
    if (obj.kind === 'Gateway' || obj.kind === 'HTTPRoute') continue;
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
  const groups = judgeGroups(m, o, ctx);
  return { broken: [...broken, ...groups.broken], waiting: [...waiting, ...groups.waiting] };
}

/**
 * The invariants of shared load balancers (MyIngressGroups, and the groups Skylift makes for
 * Gateways). Safety: every listener rule and target group tagged `skylift.dev/member` names a
 * MyIngress or HTTPRoute this run created. Settled: each group's load balancer carries exactly its
 * members' rules and target groups (a model group's members: the live MyIngresses naming it; a
 * Gateway's: the live HTTPRoutes attached to it), a group without members has none, a deleted
 * Gateway's group is gone, a live Gateway is Programmed with its load balancer's DNS name as
 * `status.addresses[0].value`, and a route on a live Gateway is Accepted with its refs resolved.
 * Pure.
 */
export function judgeGroups(m: LifecycleModel, o: Observed, ctx: JudgeContext): Verdict {
  const broken: string[] = [];
  const waiting: string[] = [];
  const crByName = new Map(o.crs.map((c) => [c.name, c]));
  const groupByUid = new Map(o.crs.filter((c) => c.kind === 'MyIngressGroup').map((c) => [c.uid, c]));
  const modelUids = new Set(m.uids.values());
  const nameOf = new Map([...m.uids].map(([name, uid]) => [uid, name]));
  const names = (uids: Iterable<string>): string =>
    [...uids]
      .map((u) => nameOf.get(u) ?? u)
      .sort()
      .join(', ') || 'none';
  const gatewayGroup = (gateway: string): string => gatewayGroupName(ctx.ns, gateway);

  // Who should be on each group: group name → member uids.
  const want = new Map<string, Set<string>>();
  const wanted = (group: string): Set<string> => {
    const set = want.get(group) ?? new Set<string>();
    want.set(group, set);
    return set;
  };
  for (const g of liveOf(m, 'MyIngressGroup')) wanted(g.name);
  for (const i of groupMembers(m)) if (i.group !== undefined) wanted(i.group).add(m.uids.get(i.name) ?? '');
  for (const g of liveOf(m, 'Gateway')) wanted(gatewayGroup(g.name));
  for (const r of liveOf(m, 'HTTPRoute'))
    if (m.live.get(r.gateway)?.kind === 'Gateway')
      wanted(gatewayGroup(r.gateway)).add(m.uids.get(r.name) ?? '');

  // Safety, and settled: every member-tagged rule and target group is a current member's.
  const tagged = [
    ...o.inventory.loadBalancers.flatMap((lb) =>
      lb.listeners.flatMap((l) =>
        [...(l.ruleMembers ?? new Map<string, string | undefined>())].map(([arn, member]) => ({
          what: `rule ${arn.split('/').slice(-1)[0] ?? arn} on ${lb.name}:${l.port}`,
          owner: lb.owner.uid,
          member,
        })),
      ),
    ),
    ...o.inventory.targetGroups.map((tg) => ({
      what: `target group ${tg.name}`,
      owner: tg.owner.uid,
      member: tg.member,
    })),
  ];
  for (const t of tagged) {
    if (t.member === undefined) continue;
    const group = groupByUid.get(t.owner);
    if (!modelUids.has(t.member))
      broken.push(
        `${t.what} is tagged for member uid ${t.member}, which no MyIngress or HTTPRoute of this run had`,
      );
    else if (group !== undefined && want.get(group.name)?.has(t.member) !== true)
      waiting.push(
        `${t.what} is ${nameOf.get(t.member) ?? t.member}'s, which is not a member of ${group.name}`,
      );
  }

  for (const [name, members] of want) {
    const cr = crByName.get(name);
    const isGateways = name.startsWith(gatewayGroup(''));
    if (cr === undefined) {
      // A model group missing is the main judge's; a member of a deleted group is refused (GroupNotFound).
      if (isGateways) waiting.push(`MyIngressGroup ${name} of a live Gateway does not exist`);
      continue;
    }
    const lbs = o.inventory.loadBalancers.filter((lb) => lb.owner.uid === cr.uid);
    // A Gateway's load balancer exists before any route attaches; a group's only with members.
    if (members.size === 0 && !isGateways) {
      if (lbs.length > 0)
        waiting.push(
          `MyIngressGroup ${name} has no members but load balancer ${lbs.map((l) => l.name).join(', ')}`,
        );
      continue;
    }
    const lb = lbs[0];
    if (lb === undefined || lbs.length > 1) {
      waiting.push(`MyIngressGroup ${name} has ${lbs.length} load balancers (want 1)`);
      continue;
    }
    const ports = lb.listeners.map((l) => l.port).sort((a, b) => a - b);
    if (ports.join(',') !== '80')
      waiting.push(
        `MyIngressGroup ${name}'s load balancer listens on ${ports.join(',') || 'nothing'}, not 80`,
      );
    const ruled = new Set(
      lb.listeners.flatMap((l) => [...(l.ruleMembers ?? new Map<string, string | undefined>()).values()]),
    );
    const ruleMembers = [...ruled].filter((u): u is string => u !== undefined);
    if (ruled.has(undefined))
      waiting.push(`MyIngressGroup ${name}'s load balancer has a rule without a member tag`);
    if (!sameSet(ruleMembers, members))
      waiting.push(
        `MyIngressGroup ${name}'s rules are for ${names(ruleMembers)}, its members are ${names(members)}`,
      );
    const tgMembers = o.inventory.targetGroups
      .filter((tg) => tg.owner.uid === cr.uid)
      .map((tg) => tg.member ?? '');
    if (!sameSet(tgMembers, members) || tgMembers.length !== members.size)
      waiting.push(
        `MyIngressGroup ${name}'s target groups are for ${names(tgMembers)}, its members are ${names(members)}`,
      );
  }

  for (const d of m.deleted)
    if (d.kind === 'Gateway') {
      const g = crByName.get(gatewayGroup(d.name));
      if (g !== undefined)
        waiting.push(`Gateway ${d.name} was deleted but its MyIngressGroup ${g.name} is still there`);
    }
  for (const g of liveOf(m, 'Gateway')) {
    const seen = o.gateways.find((x) => x.name === g.name);
    if (seen === undefined) {
      broken.push(`Gateway ${g.name} is missing from the apiserver`);
      continue;
    }
    if (!seen.programmed) {
      waiting.push(`Gateway ${g.name} is not Programmed at its generation`);
      continue;
    }
    const cr = crByName.get(gatewayGroup(g.name));
    const lb = o.inventory.loadBalancers.find((x) => x.owner.uid === cr?.uid);
    if (lb === undefined) waiting.push(`Gateway ${g.name} is Programmed but its group has no load balancer`);
    else if (seen.address !== lb.dnsName)
      waiting.push(
        `Gateway ${g.name} is Programmed with address ${seen.address ?? 'none'}, but its load balancer's DNS name is ${lb.dnsName ?? '?'}`,
      );
  }
  for (const r of liveOf(m, 'HTTPRoute')) {
    if (m.live.get(r.gateway)?.kind !== 'Gateway') continue;
    const seen = o.routes.find((x) => x.name === r.name);
    const parent = seen?.parents.get(r.gateway);
    if (seen === undefined) broken.push(`HTTPRoute ${r.name} is missing from the apiserver`);
    else if (parent?.accepted !== true || !parent.resolvedRefs)
      waiting.push(
        `HTTPRoute ${r.name} on Gateway ${r.gateway}: Accepted ${String(parent?.accepted ?? '-')}, ResolvedRefs ${String(parent?.resolvedRefs ?? '-')} at its generation`,
      );
  }
  return { broken, waiting };
}

/** Whether two lists hold the same values (as sets). Pure. */
function sameSet(a: Iterable<string>, b: Iterable<string>): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
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
  for (const c of o.crs) {
    const members = (c.status.members ?? []) as {
      name?: string;
      state?: string;
      observedGeneration?: number;
      rules?: number;
    }[];
    if (c.kind === 'MyIngressGroup' && Array.isArray(members) && members.length > 0)
      lines.push(
        `MyIngressGroup ${c.name} lists ${members.map((x) => `${x.name ?? '?'} ${x.state ?? '?'} at ${x.observedGeneration ?? '?'} (${x.rules ?? '?'} rules)`).join(', ')}`,
      );
  }
  for (const g of o.gateways)
    lines.push(
      `Gateway ${g.name}: ${g.programmed ? 'Programmed' : 'not Programmed'}, address ${g.address ?? 'none'}`,
    );
  for (const x of o.inventory.loadBalancers) {
    const rules = x.listeners.flatMap((l) =>
      [...(l.ruleMembers ?? new Map<string, string | undefined>())].map(
        ([arn, member]) => `${l.port}:${arn.split('/').at(-1) ?? arn}→${member ?? 'no member'}`,
      ),
    );
    lines.push(
      `load balancer ${x.name} of uid ${x.owner.uid}${x.dnsName !== undefined ? ` (${x.dnsName})` : ''}${rules.length > 0 ? `, rules ${rules.join(' ')}` : ''}`,
    );
  }
  for (const x of o.inventory.targetGroups)
    lines.push(
      `target group ${x.name} of uid ${x.owner.uid}${x.member !== undefined ? ` for member ${x.member}` : ''}`,
    );
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
    case 'MyIngressGroup':
    case 'Gateway':
    case 'HTTPRoute':
      return undefined; // judgeGroups
    case 'MyIngress': {
      if (obj.group !== undefined) {
        // A member is Ready on its group's load balancer, with a rule of its own there.
        const group = o.crs.find((c) => c.kind === 'MyIngressGroup' && c.name === obj.group);
        const lb = o.inventory.loadBalancers.find((x) => x.owner.uid === group?.uid);
        if (lb === undefined) return `its group ${obj.group} has no load balancer`;
        const rules = lb.listeners.flatMap((l) => [
          ...(l.ruleMembers ?? new Map<string, string | undefined>()).values(),
        ]);
        if (!rules.includes(cr.uid)) return `its group ${obj.group}'s load balancer has no rule of it`;
        return undefined;
      }
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
