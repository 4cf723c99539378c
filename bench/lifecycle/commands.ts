// The operations of a lifecycle run, as fast-check model-based commands: each
// changes the real system the way a user (or AWS, or an outage) would, updates
// the model, and waits until the system has settled with every invariant
// holding (see runner.ts). Names are assigned from the model's counter, so a
// seed replays the same run.
import fc from 'fast-check';
import { dbIdentifier } from '../../src/kinds/manageddb/identity.ts';
import { KubeApiError } from '../../src/runtime/kube/client.ts';
import { normalizeName } from '../../src/providers/route53/names.ts';
import {
  groupMembers,
  hostClaimed,
  hosts,
  liveOf,
  pick,
  standaloneIngresses,
  standaloneObjects,
  secretClaimed,
  secretNames,
  type Host,
  type LifecycleKind,
  type LifecycleModel,
  type ModelGateway,
  type ModelGroup,
  type ModelObject,
} from './model.ts';
import type { LifecycleRunner } from './runner.ts';
import { skyliftGatewayClassName } from '../../src/apis/gatewayApi.ts';

/** One lifecycle operation. */
export type LifecycleCommand = fc.AsyncCommand<LifecycleModel, LifecycleRunner>;

const instanceClasses = ['db.t3.micro', 'db.t3.small'] as const;

/** Creates a DNSRecord for a host, sometimes adopting a hand-made record there through spec.externalName. */
class CreateDnsRecord implements LifecycleCommand {
  readonly hostIndex: number;
  readonly value: number;
  readonly orphan: boolean;
  readonly adopt: boolean;

  constructor(hostIndex: number, value: number, orphan: boolean, adopt: boolean) {
    this.hostIndex = hostIndex;
    this.value = value;
    this.orphan = orphan;
    this.adopt = adopt;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'DNSRecord').length < 4;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const host = pick(hosts, this.hostIndex);
    const adopt = this.adopt && m.foreignRecords.has(host);
    await r.createDnsRecord(m, {
      host,
      values: [`10.0.${this.value}.1`],
      deletionPolicy: this.orphan ? 'Orphan' : 'Delete',
      adopt,
    });
    // Naming the record in externalName is the explicit permission to take it over.
    if (adopt) m.foreignRecords.delete(host);
    await r.settle(m, this.toString());
  }
  toString(): string {
    return `create DNSRecord ${pick(hosts, this.hostIndex)} → 10.0.${this.value}.1${this.orphan ? ' (Orphan)' : ''}${this.adopt ? ' adopting a hand-made record if there is one' : ''}`;
  }
}

/** Changes a DNSRecord's values (a mutable field). */
class ChangeDnsValues implements LifecycleCommand {
  readonly index: number;
  readonly value: number;

  constructor(index: number, value: number) {
    this.index = index;
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'DNSRecord').length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const rec = pick(liveOf(m, 'DNSRecord'), this.index);
    rec.values = [`10.0.${this.value}.2`, `10.0.${this.value}.3`];
    await r.patch('DNSRecord', rec.name, { spec: { records: rec.values } });
    await r.settle(m, `${this.toString()} (${rec.name})`);
  }
  toString(): string {
    return `change a DNSRecord's records to 10.0.${this.value}.2,3`;
  }
}

/** Tries to change what an object stands for after create: the apiserver must refuse it, and nothing changes. */
class ChangeIdentity implements LifecycleCommand {
  readonly index: number;
  readonly field: 'name' | 'externalName';

  constructor(index: number, field: 'name' | 'externalName') {
    this.index = index;
    this.field = field;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return standaloneObjects(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const obj = pick(standaloneObjects(m), this.index);
    const named =
      (obj.kind === 'DNSRecord' && obj.adopt) || (obj.kind === 'ManagedDB' && obj.externalOf !== undefined);
    const spec: Record<string, unknown> =
      this.field === 'externalName'
        ? named
          ? { externalName: null } // clearing it
          : {
              externalName:
                obj.kind === 'DNSRecord'
                  ? `${r.world.fqdn(obj.host === 'b' ? 'a' : 'b')}/A`
                  : 'someone-elses',
            }
        : obj.kind === 'DNSRecord'
          ? { name: obj.host === 'a' ? 'b' : 'a' }
          : obj.kind === 'ManagedDB'
            ? { engine: 'mysql' }
            : { scheme: 'internal' };
    let refusal: string | undefined;
    try {
      await r.patch(obj.kind, obj.name, { spec });
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.statusCode !== 422) throw err;
      refusal = err.message;
    }
    if (refusal === undefined)
      throw r.violation(
        m,
        `${obj.kind} ${obj.name}: changing spec ${JSON.stringify(spec)} after create was admitted`,
      );
    if (!/immutable|fixed at create|cannot be changed|after create/i.test(refusal))
      throw r.violation(m, `${obj.kind} ${obj.name}: the refusal does not say why: ${refusal}`);
    await r.settle(m, `${this.toString()} (${obj.kind} ${obj.name}: refused)`);
  }
  toString(): string {
    return `change an object's ${this.field === 'name' ? 'identity field' : 'spec.externalName (set, change or clear)'} after create`;
  }
}

/** Deletes an object. */
class DeleteObject implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return m.live.size > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const obj = pick([...m.live.values()], this.index);
    const policy = await r.deleteObject(m, obj);
    await r.settle(m, `delete ${obj.kind} ${obj.name} (${policy})`);
  }
  toString(): string {
    return 'delete an object';
  }
}

/** Switches an object to ObserveOnly and, once it has let go, back to Manage. */
class ObserveOnlyAndBack implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return standaloneObjects(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const obj = pick(standaloneObjects(m), this.index);
    await r.patch(obj.kind, obj.name, { spec: { managementPolicy: 'ObserveOnly' } });
    await r.waitForObserveOnly(obj.kind, obj.name);
    await r.patch(obj.kind, obj.name, { spec: { managementPolicy: 'Manage' } });
    await r.settle(m, `${this.toString()} (${obj.kind} ${obj.name})`);
  }
  toString(): string {
    return 'switch an object to ObserveOnly and back to Manage';
  }
}

/**
 * Replaces a DNSRecord keeping its record, as docs/product.md says to: deletionPolicy Orphan,
 * delete, and a new object naming the record in spec.externalName.
 */
class ReplaceKeepingRecord implements LifecycleCommand {
  readonly index: number;
  readonly value: number;

  constructor(index: number, value: number) {
    this.index = index;
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'DNSRecord').length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const old = pick(liveOf(m, 'DNSRecord'), this.index);
    await r.patch('DNSRecord', old.name, { spec: { deletionPolicy: 'Orphan' } });
    await r.deleteObject(m, old, 'Orphan');
    await r.settle(m, `delete DNSRecord ${old.name} with deletionPolicy Orphan`);
    const name = await r.createDnsRecord(m, {
      host: old.host,
      values: [`10.0.${this.value}.7`],
      adopt: true,
    });
    if (m.foreignRecords.delete(old.host))
      m.steps.push(`(${name} names the hand-made record at ${old.host})`);
    await r.settle(m, `${this.toString()}: ${old.name} → ${name}`);
  }
  toString(): string {
    return 'replace a DNSRecord keeping its record (Orphan, then a new object with externalName)';
  }
}

/** Makes an A record by hand at a host no object claims. */
class HandMakeRecord implements LifecycleCommand {
  readonly hostIndex: number;
  readonly value: number;

  constructor(hostIndex: number, value: number) {
    this.hostIndex = hostIndex;
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    const host = pick(hosts, this.hostIndex);
    return !hostClaimed(m, host) && !m.foreignRecords.has(host);
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const host: Host = pick(hosts, this.hostIndex);
    if (await r.recordExists(host)) {
      m.steps.push(`(skipped: ${r.world.fqdn(host)} A already exists, left by an Orphan deletion)`);
      return;
    }
    const value = `192.0.2.${this.value}`;
    await r.world.handMakeRecord(host, value);
    m.foreignRecords.set(host, value);
    await r.settle(m, this.toString());
  }
  toString(): string {
    return `make ${pick(hosts, this.hostIndex)} A 192.0.2.${this.value} by hand`;
  }
}

/** Creates a ManagedDB; sometimes with spec.externalName naming another live ManagedDB's instance. */
class CreateManagedDb implements LifecycleCommand {
  readonly secretIndex: number;
  readonly classIndex: number;
  readonly orphan: boolean;
  readonly claimOther: boolean;

  constructor(secretIndex: number, classIndex: number, orphan: boolean, claimOther: boolean) {
    this.secretIndex = secretIndex;
    this.classIndex = classIndex;
    this.orphan = orphan;
    this.claimOther = claimOther;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'ManagedDB').length < 3;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const others = liveOf(m, 'ManagedDB').filter((d) => d.externalOf === undefined);
    const other = this.claimOther && others.length > 0 ? pick(others, this.secretIndex) : undefined;
    const name = `db${++m.created}`;
    const secret = pick(secretNames, this.secretIndex);
    const instanceClass = pick(instanceClasses, this.classIndex);
    const external =
      other !== undefined ? dbIdentifier(r.world.ns, other.name, m.uids.get(other.name) ?? '') : undefined;
    await r.create(m, 'ManagedDB', name, {
      engine: 'postgres',
      engineVersion: '16',
      instanceClass,
      allocatedStorage: 20,
      masterUsername: 'app',
      writeConnectionSecretToRef: { name: secret },
      finalSnapshot: { enabled: false },
      deletionPolicy: this.orphan ? 'Orphan' : 'Delete',
      ...(external !== undefined ? { externalName: external } : {}),
    });
    m.live.set(name, {
      kind: 'ManagedDB',
      name,
      secret,
      instanceClass,
      externalOf: other?.name,
      deletionPolicy: this.orphan ? 'Orphan' : 'Delete',
    });
    await r.settle(
      m,
      `${this.toString()} → ${name}${other !== undefined ? ` claiming ${other.name}'s instance` : ''}`,
    );
  }
  toString(): string {
    return `create ManagedDB writing Secret ${pick(secretNames, this.secretIndex)}${this.orphan ? ' (Orphan)' : ''}${this.claimOther ? ', externalName of another ManagedDB if there is one' : ''}`;
  }
}

/** Changes a ManagedDB's instance class (a mutable field). */
class ChangeDbClass implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'ManagedDB').length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const db = pick(liveOf(m, 'ManagedDB'), this.index);
    db.instanceClass = db.instanceClass === 'db.t3.micro' ? 'db.t3.small' : 'db.t3.micro';
    await r.patch('ManagedDB', db.name, {
      spec: { instanceClass: db.instanceClass, applyImmediately: true },
    });
    await r.settle(m, `change ManagedDB ${db.name} to ${db.instanceClass}`);
  }
  toString(): string {
    return "change a ManagedDB's instance class";
  }
}

/**
 * Hand-makes an A record and at once (no settle between) creates a DNSRecord adopting it through
 * spec.externalName: the adoption must find a record made a moment ago (issue 27, item 14).
 */
class HandMakeAndAdopt implements LifecycleCommand {
  readonly hostIndex: number;
  readonly value: number;

  constructor(hostIndex: number, value: number) {
    this.hostIndex = hostIndex;
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    const host = pick(hosts, this.hostIndex);
    return !hostClaimed(m, host) && !m.foreignRecords.has(host) && liveOf(m, 'DNSRecord').length < 4;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const host: Host = pick(hosts, this.hostIndex);
    if (await r.recordExists(host)) {
      m.steps.push(`(skipped: ${r.world.fqdn(host)} A already exists, left by an Orphan deletion)`);
      return;
    }
    await r.world.handMakeRecord(host, `192.0.2.${this.value}`);
    const name = await r.createDnsRecord(m, { host, values: [`10.0.${this.value}.9`], adopt: true });
    await r.settle(m, `${this.toString()} → ${name}`);
  }
  toString(): string {
    return `make ${pick(hosts, this.hostIndex)} A by hand and adopt it at once`;
  }
}

/** A user deletes a ManagedDB's connection Secret: it must come back with a password RDS accepts. */
class DeleteConnectionSecret implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'ManagedDB').length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const db = pick(liveOf(m, 'ManagedDB'), this.index);
    // Another object's, or a hand-made one, is not this user's to delete here.
    if (
      m.foreignSecrets.has(db.secret) ||
      liveOf(m, 'ManagedDB').some((d) => d !== db && d.secret === db.secret)
    ) {
      m.steps.push(`(skipped: Secret ${db.secret} is shared with another claim)`);
      return;
    }
    await r.world.deleteSecret(db.secret);
    await r.settle(m, `delete ManagedDB ${db.name}'s connection Secret ${db.secret}`);
  }
  toString(): string {
    return "delete a ManagedDB's connection Secret";
  }
}

/** Renames a ManagedDB's connection Secret: the new one must hold a password RDS accepts. */
class RenameConnectionSecret implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'ManagedDB').length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const db = pick(liveOf(m, 'ManagedDB'), this.index);
    db.secret = `conn-r${++m.created}`;
    await r.patch('ManagedDB', db.name, { spec: { writeConnectionSecretToRef: { name: db.secret } } });
    await r.settle(m, `rename ManagedDB ${db.name}'s connection Secret to ${db.secret}`);
  }
  toString(): string {
    return "rename a ManagedDB's connection Secret";
  }
}

/**
 * Restores a new ManagedDB from a snapshot of a live one's instance (issue 27, item 5): it must end
 * Ready with a Secret that names the instance's user and database and holds the password RDS was
 * given after the restore (the snapshot carries the source's).
 */
class RestoreManagedDb implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return (
      liveOf(m, 'ManagedDB').some((d) => d.externalOf === undefined) && liveOf(m, 'ManagedDB').length < 3
    );
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const source = pick(
      liveOf(m, 'ManagedDB').filter((d) => d.externalOf === undefined),
      this.index,
    );
    const id = dbIdentifier(r.world.ns, source.name, m.uids.get(source.name) ?? '');
    const name = `db${++m.created}`;
    const snapshot = `${id}-lc-${m.created}`.slice(0, 255);
    try {
      await r.world.snapshot(id, snapshot);
    } catch (err) {
      m.steps.push(`(skipped: no snapshot of ${id}: ${err instanceof Error ? err.message : String(err)})`);
      return;
    }
    const secret = `conn-r${m.created}`;
    await r.create(m, 'ManagedDB', name, {
      engine: 'postgres',
      engineVersion: '16',
      instanceClass: source.instanceClass,
      allocatedStorage: 20,
      masterUsername: 'app',
      restoreFrom: { snapshotIdentifier: snapshot },
      writeConnectionSecretToRef: { name: secret },
      finalSnapshot: { enabled: false },
    });
    m.live.set(name, {
      kind: 'ManagedDB',
      name,
      secret,
      instanceClass: source.instanceClass,
      externalOf: undefined,
      deletionPolicy: 'Delete',
    });
    await r.settle(m, `${this.toString()}: ${source.name} → ${name}`);
  }
  toString(): string {
    return 'restore a new ManagedDB from a snapshot of another';
  }
}

/** The platform team applies the world's TeamPolicy (every name in the zone): from now on, teams are served. */
class ApplyPolicy implements LifecycleCommand {
  check(m: Readonly<LifecycleModel>): boolean {
    return m.policy === 'never';
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    await r.world.applyPolicy('open');
    m.policy = 'open';
    await r.settle(m, this.toString());
  }
  toString(): string {
    return 'apply a TeamPolicy for the namespace';
  }
}

/**
 * The TeamPolicy is deleted (a GitOps sync, a reinstall) and a DNSRecord is created in the gap, then
 * the policy comes back (issue 27, item 10): while none exists nothing is written for the new
 * object — it is refused, Forbidden — and once the policy is back it is served.
 */
class PolicyGap implements LifecycleCommand {
  readonly hostIndex: number;
  readonly value: number;

  constructor(hostIndex: number, value: number) {
    this.hostIndex = hostIndex;
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    const host = pick(hosts, this.hostIndex);
    return (
      m.policy === 'open' &&
      !hostClaimed(m, host) &&
      !m.foreignRecords.has(host) &&
      liveOf(m, 'DNSRecord').length < 4 &&
      // In the gap a live Gateway is refused by design (not Programmed, its load balancer kept:
      // docs/gateway.md, "TeamPolicies"), which the settled invariants do not model; that is
      // proven by test/integration/gatewayOwnTenancy.test.ts instead.
      liveOf(m, 'Gateway').length === 0
    );
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const host: Host = pick(hosts, this.hostIndex);
    if ((await r.recordValues(host)) !== undefined) {
      m.steps.push(`(skipped: ${r.world.fqdn(host)} A already exists, left by an Orphan deletion)`);
      return;
    }
    const since = Date.now();
    await r.world.deletePolicy();
    const name = await r.createDnsRecord(m, { host, values: [`10.0.${this.value}.7`] });
    await r.settle(m, `${this.toString()}: policy deleted, ${name} created in the gap`);
    const gapWrites = r.world.writes.filter(
      (w) =>
        w.at >= since && w.changes.some((c) => normalizeName(c.name) === normalizeName(r.world.fqdn(host))),
    );
    if (gapWrites.length > 0)
      throw r.violation(
        m,
        `invariant broken: no AWS write outside the guardrails of the policy in force: ${r.world.fqdn(host)} was written while no TeamPolicy existed (${gapWrites.map((w) => w.changes.map((c) => `${c.action} ${c.name} ${c.type}`).join(', ')).join('; ')})`,
      );
    const state = await r.objectState('DNSRecord', name);
    if (state.synced !== 'False/Forbidden')
      throw r.violation(
        m,
        `invariant broken: an object created while no TeamPolicy exists is refused: ${name} is ${state.synced ?? 'without Synced'}`,
      );
    await r.world.applyPolicy('open');
    await r.settle(m, `${this.toString()}: policy back`);
  }
  toString(): string {
    return `delete the TeamPolicy, create DNSRecord ${pick(hosts, this.hostIndex)} in the gap, then apply it again`;
  }
}

/**
 * The TeamPolicy is narrowed to the host `a` while a DNSRecord of another host changes, then widened
 * again: the change waits, refused, and nothing is written for it until the policy allows it.
 */
class NarrowAndBack implements LifecycleCommand {
  readonly index: number;
  readonly value: number;

  constructor(index: number, value: number) {
    this.index = index;
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return m.policy === 'open' && liveOf(m, 'DNSRecord').some((d) => d.host !== 'a');
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const rec = pick(
      liveOf(m, 'DNSRecord').filter((d) => d.host !== 'a'),
      this.index,
    );
    const before = await r.recordValues(rec.host);
    await r.world.applyPolicy('narrow');
    // The narrowed policy in force first: the object is refused (settled) before its spec changes.
    await r.settle(m, `${this.toString()}: policy narrowed to a.${r.world.zoneName}`);
    const since = Date.now();
    rec.values = [`10.0.${this.value}.5`];
    await r.patch('DNSRecord', rec.name, { spec: { records: rec.values } });
    await r.settle(m, `${this.toString()}: ${rec.name} (${rec.host}) changed under the narrowed policy`);
    const state = await r.objectState('DNSRecord', rec.name);
    const now = await r.recordValues(rec.host);
    const written = r.world.writes.filter(
      (w) =>
        w.at >= since &&
        w.changes.some(
          (c) => c.action !== 'DELETE' && normalizeName(c.name) === normalizeName(r.world.fqdn(rec.host)),
        ),
    );
    if (
      state.synced !== 'False/Forbidden' ||
      written.length > 0 ||
      JSON.stringify(now) !== JSON.stringify(before)
    )
      throw r.violation(
        m,
        `invariant broken: no AWS write outside the guardrails of the policy in force: under a policy allowing only a.${r.world.zoneName}, ${rec.name} is ${state.synced ?? 'without Synced'} and ${r.world.fqdn(rec.host)} was ${written.length > 0 ? 'written' : 'not written'} (values ${JSON.stringify(before)} → ${JSON.stringify(now)})`,
      );
    await r.world.applyPolicy('open');
    await r.settle(m, `${this.toString()}: policy widened again`);
  }
  toString(): string {
    return "narrow the TeamPolicy while a DNSRecord's records change, then widen it";
  }
}

/**
 * Someone with status rights writes a lie into an object's status (Ready=False Forged, a made-up
 * ARN and identifier): Skylift must put the truth back, and nothing may leak later because of it.
 */
class ForgeStatus implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return standaloneObjects(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const obj = pick(standaloneObjects(m), this.index);
    const { generation } = await r.objectState(obj.kind, obj.name);
    const at = new Date().toISOString();
    const forged = (type: string) => ({
      type,
      status: 'False',
      reason: 'Forged',
      message: 'written by someone else',
      lastTransitionTime: at,
      observedGeneration: generation,
    });
    await r.world.admin.patch(
      `${r.world.path(obj.kind, obj.name)}/status`,
      {
        status: {
          conditions: [forged('Ready'), forged('Synced')],
          ...(obj.kind === 'MyIngress'
            ? {
                arn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/forged/0123456789abcdef',
              }
            : {}),
          ...(obj.kind === 'ManagedDB' ? { identifier: 'forged-instance' } : {}),
        },
      },
      'merge',
    );
    await r.settle(m, `${this.toString()} (${obj.kind} ${obj.name})`);
  }
  toString(): string {
    return "forge an object's status (conditions, ARN, identifier)";
  }
}

/** Someone sets a create-pending marker a day in the future on an object: it must not hold anything back. */
class ForgeCreatePending implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return standaloneObjects(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const obj = pick(standaloneObjects(m), this.index);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    await r.patch(obj.kind, obj.name, {
      metadata: { annotations: { 'aws.skylift.dev/create-pending': future } },
    });
    await r.settle(m, `${this.toString()} (${obj.kind} ${obj.name})`);
  }
  toString(): string {
    return 'set a create-pending marker a day in the future';
  }
}

/** Makes a Secret by hand with a name a ManagedDB may later name. */
class HandMakeSecret implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    const name = pick(secretNames, this.index);
    return !secretClaimed(m, name) && !m.foreignSecrets.has(name);
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const name = pick(secretNames, this.index);
    const data = { password: 'made-by-hand', note: 'a user Secret' };
    if (!(await r.createSecretIfAbsent(name, data))) {
      m.steps.push(`(skipped: Secret ${name} already exists)`);
      return;
    }
    m.foreignSecrets.set(name, data);
    await r.settle(m, this.toString());
  }
  toString(): string {
    return `make Secret ${pick(secretNames, this.index)} by hand`;
  }
}

/** Creates a MyIngress forwarding to the Service `web`. */
class CreateMyIngress implements LifecycleCommand {
  readonly port: number;

  constructor(port: number) {
    this.port = port;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return standaloneIngresses(m).length < 2;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const name = `in${++m.created}`;
    await r.create(m, 'MyIngress', name, {
      scheme: 'internet-facing',
      subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
      listeners: [
        {
          port: this.port,
          protocol: 'HTTP',
          defaultAction: { forward: { service: { name: 'web', port: 80 } } },
        },
      ],
    });
    m.live.set(name, { kind: 'MyIngress', name, port: this.port, group: undefined, host: '' });
    await r.settle(m, `${this.toString()} → ${name}`);
  }
  toString(): string {
    return `create MyIngress listening on ${this.port}`;
  }
}

/** Changes a MyIngress's listener port. */
class ChangeListenerPort implements LifecycleCommand {
  readonly index: number;
  readonly port: number;

  constructor(index: number, port: number) {
    this.index = index;
    this.port = port;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return standaloneIngresses(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const ing = pick(standaloneIngresses(m), this.index);
    ing.port = ing.port === this.port ? this.port + 1 : this.port;
    await r.patch('MyIngress', ing.name, {
      spec: {
        listeners: [
          {
            port: ing.port,
            protocol: 'HTTP',
            defaultAction: { forward: { service: { name: 'web', port: 80 } } },
          },
        ],
      },
    });
    await r.settle(m, `change MyIngress ${ing.name} to listen on ${ing.port}`);
  }
  toString(): string {
    return `change a MyIngress's listener port to ${this.port}`;
  }
}

/** Makes an EndpointSlice for the Service `web` by hand (as a user pointing it at outside addresses would). */
class HandMakeEndpointSlice implements LifecycleCommand {
  readonly octet: number;

  constructor(octet: number) {
    this.octet = octet;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return m.foreignSlices.size < 2;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const name = `web-by-hand-${m.foreignSlices.size + 1}`;
    const address = `10.1.0.${this.octet}`;
    const resourceVersion = await r.createEndpointSlice(name, address);
    m.foreignSlices.set(name, { resourceVersion, address });
    await r.settle(m, `${this.toString()} (${name})`);
  }
  toString(): string {
    return `make an EndpointSlice for web → 10.1.0.${this.octet} by hand`;
  }
}

/** Deletes the hosted zone (and every record in it) outside Skylift and creates one of the same name. */
class RecreateZone implements LifecycleCommand {
  check(): boolean {
    return true;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    await r.world.recreateZone();
    // The test deleted the hand-made records itself, and whatever Orphan deletions left.
    m.foreignRecords.clear();
    m.orphanedHosts.clear();
    await r.settle(m, this.toString());
  }
  toString(): string {
    return 'recreate the hosted zone (same name, new ID)';
  }
}

/** AWS stops answering: an object changed meanwhile must say so (Synced=False AWSUnreachable); then AWS comes back. */
class AwsOutage implements LifecycleCommand {
  readonly value: number;

  constructor(value: number) {
    this.value = value;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'DNSRecord').length > 0 || hosts.some((h) => !hostClaimed(m, h));
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    r.world.stopAws();
    let subject: { kind: LifecycleKind; name: string };
    try {
      const free = hosts.find((h) => !hostClaimed(m, h) && !m.foreignRecords.has(h));
      if (free !== undefined && liveOf(m, 'DNSRecord').length < 4) {
        const name = await r.createDnsRecord(m, { host: free, values: [`10.0.${this.value}.9`] });
        subject = { kind: 'DNSRecord', name };
      } else {
        const rec = pick(liveOf(m, 'DNSRecord'), this.value);
        rec.values = [`10.0.${this.value}.8`];
        await r.patch('DNSRecord', rec.name, { spec: { records: rec.values } });
        subject = { kind: 'DNSRecord', name: rec.name };
      }
      await r.waitForUnreachable(m, subject.name, this.toString());
    } finally {
      r.world.resumeAws();
    }
    await r.settle(m, `${this.toString()} (${subject.kind} ${subject.name} said AWSUnreachable)`);
  }
  toString(): string {
    return 'AWS stops answering while a DNSRecord is created or changed, then comes back';
  }
}

/** Restarts the operator: SIGKILL (kill -9) or SIGTERM. */
class RestartOperator implements LifecycleCommand {
  readonly kill: boolean;

  constructor(kill: boolean) {
    this.kill = kill;
  }
  check(): boolean {
    return true;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    await r.world.restartOperator(this.kill);
    await r.settle(m, this.toString());
  }
  toString(): string {
    return this.kill ? 'kill -9 the operator and start it again' : 'restart the operator (SIGTERM)';
  }
}

/** Creates a MyIngressGroup (one HTTP listener on 80, admitting every namespace) and settles. */
async function createGroup(m: LifecycleModel, r: LifecycleRunner, why: string): Promise<ModelGroup> {
  const name = `${r.world.ns}-g${++m.created}`;
  await r.create(m, 'MyIngressGroup', name, {
    scheme: 'internet-facing',
    subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
    listeners: [{ port: 80, protocol: 'HTTP' }],
    allowedNamespaces: { from: 'All' },
  });
  const group: ModelGroup = { kind: 'MyIngressGroup', name };
  m.live.set(name, group);
  await r.settle(m, `create MyIngressGroup${why} → ${name}`);
  return group;
}

/** Creates a Gateway of Skylift's class (one HTTP listener on 80, routes of every namespace) and settles. */
async function createGateway(m: LifecycleModel, r: LifecycleRunner, why: string): Promise<ModelGateway> {
  const name = `gw${++m.created}`;
  await r.create(m, 'Gateway', name, {
    gatewayClassName: skyliftGatewayClassName,
    listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
  });
  const gateway: ModelGateway = { kind: 'Gateway', name };
  m.live.set(name, gateway);
  await r.settle(m, `create Gateway${why} → ${name}`);
  return gateway;
}

/** Creates a MyIngressGroup. */
class CreateGroup implements LifecycleCommand {
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'MyIngressGroup').length < 2;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    await createGroup(m, r, '');
  }
  toString(): string {
    return 'create MyIngressGroup';
  }
}

/**
 * Creates a MyIngress naming a live group in spec.group, with one rule for a host of its own
 * forwarding to the Service `web` (hosts never overlap: no member is refused as a Conflict).
 * With `kill`, the operator is killed (kill -9) right after, before anything settles.
 */
class CreateMember implements LifecycleCommand {
  readonly groupIndex: number;
  readonly kill: boolean;

  constructor(groupIndex: number, kill: boolean) {
    this.groupIndex = groupIndex;
    this.kill = kill;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return groupMembers(m).length < 4;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const groups = liveOf(m, 'MyIngressGroup');
    const group =
      groups.length > 0
        ? pick(groups, this.groupIndex)
        : await createGroup(m, r, ' for a member (none left)');
    const name = `in${++m.created}`;
    const host = `${name}.members.example.com`;
    await r.create(m, 'MyIngress', name, {
      group: { name: group.name },
      rules: [{ priority: 1, hosts: [host], action: { forward: { service: { name: 'web', port: 80 } } } }],
    });
    m.live.set(name, { kind: 'MyIngress', name, port: 80, group: group.name, host });
    if (this.kill) await r.world.restartOperator(true);
    await r.settle(m, `${this.toString()} → ${name} in ${group.name}`);
  }
  toString(): string {
    return `create a MyIngress member of a group${this.kill ? ', kill -9 the operator at once' : ''}`;
  }
}

/**
 * Moves a member to another live group by changing spec.group.name (docs/myingress.md: whether
 * spec.group is set is fixed at create, its name may change). A member whose group was deleted
 * moves too. With `kill`, the operator is killed (kill -9) right after the change.
 */
class MoveMember implements LifecycleCommand {
  readonly index: number;
  readonly groupIndex: number;
  readonly kill: boolean;

  constructor(index: number, groupIndex: number, kill: boolean) {
    this.index = index;
    this.groupIndex = groupIndex;
    this.kill = kill;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return groupMembers(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const ing = pick(groupMembers(m), this.index);
    const others = liveOf(m, 'MyIngressGroup').filter((g) => g.name !== ing.group);
    const to =
      others.length > 0 ? pick(others, this.groupIndex) : await createGroup(m, r, ' to move a member to');
    const from = ing.group ?? '';
    ing.group = to.name;
    await r.patch('MyIngress', ing.name, { spec: { group: { name: to.name } } });
    if (this.kill) await r.world.restartOperator(true);
    await r.settle(m, `${this.toString()} (${ing.name}: ${from} → ${to.name})`);
  }
  toString(): string {
    return `move a group member to another group${this.kill ? ', kill -9 the operator at once' : ''}`;
  }
}

/**
 * Deletes a MyIngressGroup, with or without members: its load balancer goes, and its members say
 * GroupNotFound. With `kill`, the operator is killed (kill -9) right after.
 */
class DeleteGroup implements LifecycleCommand {
  readonly index: number;
  readonly kill: boolean;

  constructor(index: number, kill: boolean) {
    this.index = index;
    this.kill = kill;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'MyIngressGroup').length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const group = pick(liveOf(m, 'MyIngressGroup'), this.index);
    const members = groupMembers(m).filter((i) => i.group === group.name).length;
    await r.deleteObject(m, group);
    if (this.kill) await r.world.restartOperator(true);
    await r.settle(
      m,
      `delete a MyIngressGroup with ${members} members${this.kill ? ', kill -9 the operator at once' : ''} (${group.name})`,
    );
  }
  toString(): string {
    return `delete a MyIngressGroup${this.kill ? ' and kill -9 the operator at once' : ''}`;
  }
}

/** Deletes a group member, an HTTPRoute or a Gateway (with or without routes attached). */
class DeleteSharedObject implements LifecycleCommand {
  readonly index: number;

  constructor(index: number) {
    this.index = index;
  }
  private candidates(m: Readonly<LifecycleModel>): ModelObject[] {
    return [...groupMembers(m), ...liveOf(m, 'Gateway'), ...liveOf(m, 'HTTPRoute')];
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return this.candidates(m).length > 0;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const obj = pick(this.candidates(m), this.index);
    const routes =
      obj.kind === 'Gateway'
        ? ` with ${liveOf(m, 'HTTPRoute').filter((x) => x.gateway === obj.name).length} routes`
        : '';
    await r.deleteObject(m, obj);
    await r.settle(m, `delete ${obj.kind}${routes} (${obj.name})`);
  }
  toString(): string {
    return 'delete a group member, an HTTPRoute or a Gateway';
  }
}

/** Creates a Gateway. */
class CreateGateway implements LifecycleCommand {
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'Gateway').length < 2;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    await createGateway(m, r, '');
  }
  toString(): string {
    return 'create Gateway';
  }
}

/**
 * Creates an HTTPRoute attached to a live Gateway for a host of its own, one backendRef to the
 * Service `web`. With `kill`, the operator is killed (kill -9) right after.
 */
class CreateRoute implements LifecycleCommand {
  readonly gatewayIndex: number;
  readonly kill: boolean;

  constructor(gatewayIndex: number, kill: boolean) {
    this.gatewayIndex = gatewayIndex;
    this.kill = kill;
  }
  check(m: Readonly<LifecycleModel>): boolean {
    return liveOf(m, 'HTTPRoute').length < 4;
  }
  async run(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
    const gateways = liveOf(m, 'Gateway');
    const gateway =
      gateways.length > 0
        ? pick(gateways, this.gatewayIndex)
        : await createGateway(m, r, ' for a route (none left)');
    const name = `rt${++m.created}`;
    const host = `${name}.routes.example.com`;
    await r.create(m, 'HTTPRoute', name, {
      parentRefs: [{ name: gateway.name }],
      hostnames: [host],
      rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
    });
    m.live.set(name, { kind: 'HTTPRoute', name, gateway: gateway.name, host });
    if (this.kill) await r.world.restartOperator(true);
    await r.settle(m, `${this.toString()} → ${name} on ${gateway.name}`);
  }
  toString(): string {
    return `create an HTTPRoute on a Gateway${this.kill ? ', kill -9 the operator at once' : ''}`;
  }
}

/** Every command, weighted towards what real users do most. */
export function lifecycleCommands(): fc.Arbitrary<LifecycleCommand>[] {
  const i = fc.nat({ max: 11 });
  const v = fc.integer({ min: 1, max: 250 });
  return [
    fc.tuple(i, v, fc.boolean(), fc.boolean()).map(([h, x, o, a]) => new CreateDnsRecord(h, x, o, a)),
    fc.tuple(i, v, fc.boolean(), fc.boolean()).map(([h, x, o, a]) => new CreateDnsRecord(h, x, o, a)),
    fc.tuple(i, v).map(([k, x]) => new ChangeDnsValues(k, x)),
    fc
      .tuple(i, fc.constantFrom('name' as const, 'externalName' as const))
      .map(([k, f]) => new ChangeIdentity(k, f)),
    i.map((k) => new DeleteObject(k)),
    i.map((k) => new DeleteObject(k)),
    fc.tuple(i, v).map(([h, x]) => new HandMakeRecord(h, x)),
    fc.tuple(i, i, fc.boolean(), fc.boolean()).map(([s, c, o, x]) => new CreateManagedDb(s, c, o, x)),
    i.map((k) => new ChangeDbClass(k)),
    i.map((k) => new HandMakeSecret(k)),
    fc.constantFrom(80, 8080).map((p) => new CreateMyIngress(p)),
    fc.tuple(i, fc.constantFrom(80, 8080, 9000)).map(([k, p]) => new ChangeListenerPort(k, p)),
    fc.integer({ min: 1, max: 250 }).map((o) => new HandMakeEndpointSlice(o)),
    fc.constant(new RecreateZone()),
    v.map((x) => new AwsOutage(x)),
    fc.boolean().map((k) => new RestartOperator(k)),
    i.map((k) => new ObserveOnlyAndBack(k)),
    fc.tuple(i, v).map(([k, x]) => new ReplaceKeepingRecord(k, x)),
    fc.tuple(i, v).map(([h, x]) => new HandMakeAndAdopt(h, x)),
    i.map((k) => new DeleteConnectionSecret(k)),
    i.map((k) => new RenameConnectionSecret(k)),
    i.map((k) => new RestoreManagedDb(k)),
    fc.constant(new ApplyPolicy()),
    fc.tuple(i, v).map(([h, x]) => new PolicyGap(h, x)),
    fc.tuple(i, v).map(([k, x]) => new NarrowAndBack(k, x)),
    i.map((k) => new ForgeStatus(k)),
    i.map((k) => new ForgeCreatePending(k)),
    ...groupAndGatewayCommands(),
  ];
}

/**
 * Shared load balancers only: the MyIngressGroup and Gateway API operations, with operator
 * restarts and deletions of any object among them (a short run that still covers them all).
 */
export function sharedLoadBalancerCommands(): fc.Arbitrary<LifecycleCommand>[] {
  return [
    ...groupAndGatewayCommands(),
    fc.boolean().map((k) => new RestartOperator(k)),
    fc.nat({ max: 11 }).map((k) => new DeleteObject(k)),
  ];
}

/** The MyIngressGroup and Gateway API operations (in {@link lifecycleCommands}). */
export function groupAndGatewayCommands(): fc.Arbitrary<LifecycleCommand>[] {
  const i = fc.nat({ max: 11 });
  const kill = fc.boolean();
  return [
    fc.constant(new CreateGroup()),
    fc.tuple(i, kill).map(([g, k]) => new CreateMember(g, k)),
    fc.tuple(i, kill).map(([g, k]) => new CreateMember(g, k)),
    fc.tuple(i, i, kill).map(([x, g, k]) => new MoveMember(x, g, k)),
    fc.tuple(i, kill).map(([g, k]) => new DeleteGroup(g, k)),
    i.map((k) => new DeleteSharedObject(k)),
    fc.constant(new CreateGateway()),
    fc.tuple(i, kill).map(([g, k]) => new CreateRoute(g, k)),
    fc.tuple(i, kill).map(([g, k]) => new CreateRoute(g, k)),
  ];
}
