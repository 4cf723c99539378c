// What must hold after any amount of chaos: the Skylift-owned AWS resources
// (an inventory taken directly from AWS, see awsInventory.ts) compared with
// the custom resources in the apiserver (crStates.ts). Pure: both sides are
// plain data, so the rules are unit-tested on hand-built inventories.
import type { OwnershipTags } from '../../src/apis/managed.ts';

/** The Skylift kinds. */
export type SkyliftKind = 'DNSRecord' | 'MyIngress' | 'ManagedDB';

/** A load balancer carrying a `skylift.dev/uid` tag, with its listeners and their non-default rules. */
export interface InventoryLoadBalancer {
  readonly arn: string;
  readonly name: string;
  /** Its DNS name, when the inventory read it. */
  readonly dnsName?: string;
  readonly owner: OwnershipTags;
  readonly listeners: readonly {
    readonly arn: string;
    readonly port: number;
    readonly ruleArns: readonly string[];
    /**
     * The non-default rules' `skylift.dev/member` tags (a group member's or a Gateway route's uid;
     * undefined for a rule without one), by rule ARN, when the inventory read them.
     */
    readonly ruleMembers?: ReadonlyMap<string, string | undefined>;
  }[];
}

/** A target group carrying a `skylift.dev/uid` tag. */
/** Something Skylift owns that the leak invariant counts: an identifier and its owner. */
export interface InventoryOwned {
  readonly id: string;
  readonly owner: OwnershipTags;
}

export interface InventoryTargetGroup {
  readonly arn: string;
  readonly name: string;
  readonly owner: OwnershipTags;
  /** Its `skylift.dev/member` tag: the group member (or Gateway route) it was made for. */
  readonly member?: string;
}

/** A DB instance carrying a `skylift.dev/uid` tag. */
export interface InventoryDbInstance {
  readonly identifier: string;
  readonly status: string;
  readonly owner: OwnershipTags;
}

/** A Route 53 ownership TXT record and whether the record it guards exists beside it. */
export interface InventoryRecord {
  readonly zoneId: string;
  /** The guarded record's name, lower case with a trailing dot. */
  readonly fqdn: string;
  readonly type: string;
  readonly owner: OwnershipTags;
  readonly recordExists: boolean;
}

/** A record without an ownership TXT in a zone only Skylift writes to (apex SOA/NS excluded). */
export interface InventoryUnownedRecord {
  readonly zoneId: string;
  readonly fqdn: string;
  readonly type: string;
}

/** Everything in AWS that carries Skylift's ownership marks. */
export interface SkyliftInventory {
  /**
   * Security groups carrying a `skylift.dev/uid` tag (a MyIngress's managed group); absent when the
   * inventory was taken without EC2.
   */
  readonly securityGroups?: readonly InventoryOwned[];
  /** SNI (non-default) certificates on listeners of Skylift's load balancers, owned as the load balancer. */
  readonly listenerCertificates?: readonly InventoryOwned[];
  /** WAF web ACL associations of Skylift's load balancers, owned as the load balancer; absent without WAFv2. */
  readonly webAclAssociations?: readonly InventoryOwned[];
  readonly loadBalancers: readonly InventoryLoadBalancer[];
  readonly targetGroups: readonly InventoryTargetGroup[];
  readonly dbInstances: readonly InventoryDbInstance[];
  readonly records: readonly InventoryRecord[];
  readonly unownedRecords: readonly InventoryUnownedRecord[];
}

/** What the checks need to know about one custom resource as the apiserver has it. */
export interface CrState {
  readonly kind: SkyliftKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly ready: boolean;
  /** Ready's reason and message, for reports. */
  readonly readyDetail: string;
  /** metadata.deletionTimestamp is set. */
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  /** MyIngress: distinct backends (Service, port), i.e. target groups the spec asks for. */
  readonly expectedTargetGroups?: number;
  /** MyIngress: listener ports the spec asks for. */
  readonly expectedListenerPorts?: readonly number[];
  /** MyIngress: how many rules the spec asks for (beyond the listeners' default actions). */
  readonly expectedRules?: number;
  /** DNSRecord: the record it manages. */
  readonly record?: { readonly fqdn: string; readonly type: string };
}

/** A custom resource the run deleted, as it was before deletion. */
export interface DeletedCr {
  readonly kind: SkyliftKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly record?: { readonly fqdn: string; readonly type: string };
}

/** The invariants, in the order they are reported. */
export const invariantNames = [
  'every-cr-ready',
  'one-aws-resource-per-cr',
  'no-leaks',
  'deleted-leave-no-trace',
  'no-stuck-finalizer',
  'in-own-account',
] as const;
/** One invariant's name. */
export type InvariantName = (typeof invariantNames)[number];

/** One broken invariant instance: which object and what is wrong. */
export interface Violation {
  readonly invariant: InvariantName;
  /** `Kind namespace/name`, or the AWS identifier for leaks. */
  readonly subject: string;
  readonly detail: string;
}

/** The outcome of one invariant over everything it looked at. */
export interface InvariantResult {
  readonly name: InvariantName;
  readonly ok: boolean;
  /** How many objects (CRs or AWS resources) the invariant was checked on. */
  readonly checked: number;
  readonly violations: readonly Violation[];
}

/** The AWS account an inventory was read from, and the namespaces whose objects belong in it. */
export interface InventoryAccount {
  /** The 12-digit account ID. */
  readonly id: string;
  /**
   * The namespaces this account serves (through their TeamPolicy's role; none for the operator's
   * own account when every namespace has a role). A resource owned by an object of any other
   * namespace is in the wrong account.
   */
  readonly namespaces: readonly string[];
}

/** Everything {@link checkInvariants} compares. */
export interface InvariantInput {
  readonly inventory: SkyliftInventory;
  /**
   * Every Skylift custom resource the apiserver lists in the namespaces under test (with `account`,
   * only those of its namespaces are expected in the inventory; the others are ignored).
   */
  readonly crs: readonly CrState[];
  /** The account the inventory was read from; absent: the only one, serving every namespace. */
  readonly account?: InventoryAccount;
  /** The value Skylift writes into `skylift.dev/cluster`. */
  readonly clusterId: string;
  /** CRs deleted by the run (empty or absent before any deletion). */
  readonly deleted?: readonly DeletedCr[];
  /** Listener and rule ARNs of deleted CRs' load balancers that AWS still describes. */
  readonly lingeringChildren?: readonly string[];
}

/** A tagged AWS resource, whatever its type, for the ownership checks. */
interface Owned {
  readonly what: string;
  readonly id: string;
  readonly owner: OwnershipTags;
}

function subjectOf(cr: { kind: string; namespace: string; name: string }): string {
  return `${cr.kind} ${cr.namespace}/${cr.name}`;
}

function ownedResources(inv: SkyliftInventory): Owned[] {
  return [
    ...inv.loadBalancers.map((lb) => ({ what: 'load balancer', id: lb.name, owner: lb.owner })),
    ...inv.targetGroups.map((tg) => ({ what: 'target group', id: tg.name, owner: tg.owner })),
    ...inv.dbInstances.map((db) => ({ what: 'DB instance', id: db.identifier, owner: db.owner })),
    ...inv.records.map((r) => ({ what: `${r.type} record`, id: `${r.fqdn} (${r.zoneId})`, owner: r.owner })),
    ...(inv.securityGroups ?? []).map((g) => ({ what: 'security group', id: g.id, owner: g.owner })),
    ...(inv.listenerCertificates ?? []).map((c) => ({
      what: 'listener certificate',
      id: c.id,
      owner: c.owner,
    })),
    ...(inv.webAclAssociations ?? []).map((a) => ({ what: 'web ACL association', id: a.id, owner: a.owner })),
  ];
}

function groupByUid<T extends { owner: OwnershipTags }>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.owner.uid) ?? [];
    list.push(item);
    out.set(item.owner.uid, list);
  }
  return out;
}

function result(name: InvariantName, checked: number, violations: readonly Violation[]): InvariantResult {
  return { name, ok: violations.length === 0, checked, violations };
}

/** Count mismatch as a human sentence, e.g. "2 load balancers (want 1): a, b". */
function countDetail(what: string, ids: readonly string[], want: number): string {
  return `${ids.length} ${what} (want ${want})${ids.length > 0 ? `: ${ids.join(', ')}` : ''}`;
}

function checkReady(live: readonly CrState[]): InvariantResult {
  const violations = live
    .filter((cr) => !cr.ready)
    .map((cr) => ({
      invariant: 'every-cr-ready' as const,
      subject: subjectOf(cr),
      detail: `not Ready: ${cr.readyDetail}`,
    }));
  return result('every-cr-ready', live.length, violations);
}

function checkOnePerCr(inv: SkyliftInventory, live: readonly CrState[], clusterId: string): InvariantResult {
  const lbs = groupByUid(inv.loadBalancers);
  const tgs = groupByUid(inv.targetGroups);
  const dbs = groupByUid(inv.dbInstances);
  const records = groupByUid(inv.records);
  const violations: Violation[] = [];
  const add = (cr: CrState, detail: string): void => {
    violations.push({ invariant: 'one-aws-resource-per-cr', subject: subjectOf(cr), detail });
  };
  for (const cr of live) {
    const mine: Owned[] = [];
    switch (cr.kind) {
      case 'MyIngress': {
        const myLbs = lbs.get(cr.uid) ?? [];
        const myTgs = tgs.get(cr.uid) ?? [];
        if (myLbs.length !== 1)
          add(
            cr,
            countDetail(
              'load balancers',
              myLbs.map((l) => l.name),
              1,
            ),
          );
        const wantTgs = cr.expectedTargetGroups ?? 1;
        if (myTgs.length !== wantTgs)
          add(
            cr,
            countDetail(
              'target groups',
              myTgs.map((t) => t.name),
              wantTgs,
            ),
          );
        const lb = myLbs.length === 1 ? myLbs[0] : undefined;
        if (lb !== undefined && cr.expectedListenerPorts !== undefined) {
          const got = lb.listeners.map((l) => l.port).sort((a, b) => a - b);
          const want = [...cr.expectedListenerPorts].sort((a, b) => a - b);
          if (got.join(',') !== want.join(','))
            add(cr, `listeners on ports [${got.join(', ')}] (want [${want.join(', ')}])`);
        }
        if (lb !== undefined && cr.expectedRules !== undefined) {
          const rules = lb.listeners.reduce((n, l) => n + l.ruleArns.length, 0);
          if (rules !== cr.expectedRules) add(cr, `${rules} listener rules (want ${cr.expectedRules})`);
        }
        mine.push(
          ...myLbs.map((l) => ({ what: 'load balancer', id: l.name, owner: l.owner })),
          ...myTgs.map((t) => ({ what: 'target group', id: t.name, owner: t.owner })),
        );
        break;
      }
      case 'ManagedDB': {
        const myDbs = dbs.get(cr.uid) ?? [];
        if (myDbs.length !== 1)
          add(
            cr,
            countDetail(
              'DB instances',
              myDbs.map((d) => d.identifier),
              1,
            ),
          );
        mine.push(...myDbs.map((d) => ({ what: 'DB instance', id: d.identifier, owner: d.owner })));
        break;
      }
      case 'DNSRecord': {
        const mineTxt = records.get(cr.uid) ?? [];
        if (mineTxt.length !== 1)
          add(
            cr,
            countDetail(
              'ownership TXT records',
              mineTxt.map((r) => `${r.type} ${r.fqdn}`),
              1,
            ),
          );
        for (const r of mineTxt) {
          if (!r.recordExists) add(cr, `ownership TXT for ${r.type} ${r.fqdn} but no such record`);
          if (cr.record !== undefined && (r.fqdn !== cr.record.fqdn || r.type !== cr.record.type))
            add(cr, `owns ${r.type} ${r.fqdn}, but its spec is ${cr.record.type} ${cr.record.fqdn}`);
        }
        mine.push(...mineTxt.map((r) => ({ what: `${r.type} record`, id: r.fqdn, owner: r.owner })));
        break;
      }
    }
    for (const o of mine) {
      const wantOwner = `${cr.namespace}/${cr.name}`;
      if (o.owner.owner !== wantOwner)
        add(cr, `${o.what} ${o.id} is tagged owner ${o.owner.owner} (want ${wantOwner})`);
      if (o.owner.cluster !== clusterId)
        add(cr, `${o.what} ${o.id} is tagged cluster ${o.owner.cluster} (want ${clusterId})`);
    }
  }
  return result('one-aws-resource-per-cr', live.length, violations);
}

/** The namespace of an ownership tag's `namespace/name` ('' when it has no slash). Pure. */
function ownerNamespace(owner: string): string {
  const slash = owner.indexOf('/');
  return slash < 0 ? '' : owner.slice(0, slash);
}

function checkLeaks(
  inv: SkyliftInventory,
  live: readonly CrState[],
  deletedUids: Set<string>,
  belongsHere: (o: Owned) => boolean,
): InvariantResult {
  const liveUids = new Set(live.map((cr) => cr.uid));
  const owned = ownedResources(inv);
  const violations: Violation[] = [];
  for (const o of owned) {
    // Resources of CRs the run deleted are reported by deleted-leave-no-trace, with the CR's name;
    // those of another account's namespaces by in-own-account.
    if (liveUids.has(o.owner.uid) || deletedUids.has(o.owner.uid) || !belongsHere(o)) continue;
    violations.push({
      invariant: 'no-leaks',
      subject: `${o.what} ${o.id}`,
      detail: `tagged owner ${o.owner.owner} uid ${o.owner.uid}, which no custom resource has`,
    });
  }
  for (const u of inv.unownedRecords) {
    violations.push({
      invariant: 'no-leaks',
      subject: `${u.type} record ${u.fqdn} (${u.zoneId})`,
      detail: 'no ownership TXT record beside it, in a zone only Skylift writes to',
    });
  }
  return result('no-leaks', owned.length + inv.unownedRecords.length, violations);
}

function checkDeletedGone(
  inv: SkyliftInventory,
  deleted: readonly DeletedCr[],
  lingering: readonly string[],
): InvariantResult {
  const owned = groupByUid(ownedResources(inv));
  const violations: Violation[] = [];
  for (const cr of deleted) {
    for (const o of owned.get(cr.uid) ?? [])
      violations.push({
        invariant: 'deleted-leave-no-trace',
        subject: subjectOf(cr),
        detail: `${o.what} ${o.id} still exists`,
      });
    const rec = cr.record;
    if (rec !== undefined) {
      const unowned = inv.unownedRecords.find((u) => u.fqdn === rec.fqdn && u.type === rec.type);
      if (unowned !== undefined)
        violations.push({
          invariant: 'deleted-leave-no-trace',
          subject: subjectOf(cr),
          detail: `${rec.type} record ${rec.fqdn} still exists (without ownership TXT)`,
        });
    }
  }
  for (const arn of lingering)
    violations.push({
      invariant: 'deleted-leave-no-trace',
      subject: arn,
      detail: 'listener or rule of a deleted MyIngress is still described by AWS',
    });
  return result('deleted-leave-no-trace', deleted.length, violations);
}

function checkNotStuck(crs: readonly CrState[], deleted: readonly DeletedCr[]): InvariantResult {
  const present = new Map(crs.map((cr) => [cr.uid, cr]));
  const violations: Violation[] = [];
  for (const d of deleted) {
    const cr = present.get(d.uid);
    if (cr === undefined) continue;
    violations.push({
      invariant: 'no-stuck-finalizer',
      subject: subjectOf(d),
      detail: `still present${cr.deleting ? ' (deleting)' : ''} with finalizers [${cr.finalizers.join(', ')}]: ${cr.readyDetail}`,
    });
  }
  return result('no-stuck-finalizer', deleted.length, violations);
}

function checkAccount(inv: SkyliftInventory, account: InventoryAccount | undefined): InvariantResult {
  const owned = ownedResources(inv);
  if (account === undefined) return result('in-own-account', owned.length, []);
  const mine = new Set(account.namespaces);
  const serves = account.namespaces.length > 0 ? account.namespaces.join(', ') : 'no namespace';
  const violations = owned
    .filter((o) => !mine.has(ownerNamespace(o.owner.owner)))
    .map((o) => ({
      invariant: 'in-own-account' as const,
      subject: `${o.what} ${o.id}`,
      detail: `tagged owner ${o.owner.owner} uid ${o.owner.uid}, but it is in account ${account.id}, which serves ${serves}`,
    }));
  return result('in-own-account', owned.length, violations);
}

/**
 * Compares the Skylift-owned AWS inventory with the custom resources and
 * returns one result per invariant, in {@link invariantNames} order:
 * every live CR is Ready; each live CR owns exactly one load balancer (with
 * the listeners and rules its spec asks for) and its target groups / one DB
 * instance / one record with its ownership TXT, tagged with its own
 * `namespace/name` and the cluster id; nothing Skylift-tagged belongs to a
 * uid no CR has, and no record in a Skylift-only zone lacks its TXT; the
 * deleted CRs left nothing behind (by uid, by record name, by remembered
 * listener/rule ARN); none of them is still in the apiserver; and (with
 * `account`) nothing in the account is owned by an object of a namespace
 * the account does not serve. With `account`, the other checks look only at
 * the objects of its namespaces (and a misplaced resource is reported only
 * as such, not as a leak). A CR being deleted that the run deleted counts
 * only as stuck, not as live. Pure.
 */
export function checkInvariants(input: InvariantInput): InvariantResult[] {
  const account = input.account;
  const here = (namespace: string): boolean =>
    account === undefined || account.namespaces.includes(namespace);
  const deleted = (input.deleted ?? []).filter((d) => here(d.namespace));
  const crs = input.crs.filter((cr) => here(cr.namespace));
  const deletedUids = new Set(deleted.map((d) => d.uid));
  const live = crs.filter((cr) => !deletedUids.has(cr.uid));
  return [
    checkReady(live),
    checkOnePerCr(input.inventory, live, input.clusterId),
    checkLeaks(input.inventory, live, deletedUids, (o) => here(ownerNamespace(o.owner.owner))),
    checkDeletedGone(input.inventory, deleted, input.lingeringChildren ?? []),
    checkNotStuck(crs, deleted),
    checkAccount(input.inventory, account),
  ];
}

/**
 * One result per invariant over several accounts' results (each in {@link invariantNames} order):
 * the counts added up, every violation kept with ` [account <id>]` after its subject. Pure.
 */
export function mergeAccountResults(
  perAccount: readonly { readonly account: string; readonly results: readonly InvariantResult[] }[],
): InvariantResult[] {
  return invariantNames.map((name) => {
    let checked = 0;
    const violations: Violation[] = [];
    for (const a of perAccount)
      for (const r of a.results) {
        if (r.name !== name) continue;
        checked += r.checked;
        violations.push(
          ...r.violations.map((v) => ({ ...v, subject: `${v.subject} [account ${a.account}]` })),
        );
      }
    return result(name, checked, violations);
  });
}

/** True when every result holds. Pure. */
export function allHold(results: readonly InvariantResult[]): boolean {
  return results.every((r) => r.ok);
}

/** One line per invariant (`✓ name (checked N)` / `✗ name: K violations`) plus up to `maxDetails` violations each. Pure. */
export function formatResults(results: readonly InvariantResult[], maxDetails = 5): string[] {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      r.ok
        ? `  ok    ${r.name} (checked ${r.checked})`
        : `  FAIL  ${r.name}: ${r.violations.length} violation(s) over ${r.checked}`,
    );
    for (const v of r.violations.slice(0, maxDetails)) lines.push(`          ${v.subject}: ${v.detail}`);
    if (r.violations.length > maxDetails) lines.push(`          … ${r.violations.length - maxDetails} more`);
  }
  return lines;
}
