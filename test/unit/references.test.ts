// Declarative references (src/runtime/references.ts): the reverse index a controller keeps from a
// referenced key to the primaries naming it, whom a referenced object's change enqueues, and the
// typed read-only view a kind's adapter reads its caches through.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/apis/meta.ts';
import { WatchEventType } from '../../src/runtime/kube/informer.ts';
import {
  everyIn,
  reference,
  refKey,
  ReferenceSet,
  ReverseIndex,
  type ObjectCache,
  type Reference,
} from '../../src/runtime/references.ts';

/** A primary: names the Targets it refers to, and may refer to every Gadget of its namespace. */
interface Doc extends KubeObject {
  spec: { targets?: string[]; allGadgets?: boolean; slicesOf?: string[] };
}
/** A referenced object with a field the typed reader returns. */
interface Target extends KubeObject {
  status?: { address?: string };
}

function doc(ns: string, name: string, spec: Doc['spec']): Doc {
  return { metadata: { namespace: ns, name }, spec };
}
function obj(ns: string, name: string, labels?: Record<string, string>): KubeObject {
  return { metadata: { namespace: ns, name, ...(labels !== undefined ? { labels } : {}) } };
}

const targetType = {
  group: 'test.skylift.dev',
  version: 'v1',
  plural: 'targets',
  kind: 'Target',
  namespaced: true,
};
const gadgetType = { ...targetType, plural: 'gadgets', kind: 'Gadget' };
const sliceType = { ...targetType, plural: 'slices', kind: 'Slice' };

/** Counts calls of `targets`, so a test sees that a referenced object's change scans no primary. */
const calls = { targets: 0 };

const targetRef = reference<Doc, Target>({
  name: 'spec.targets',
  type: targetType,
  targets: (d) => {
    calls.targets++;
    return (d.spec.targets ?? []).map((t) => refKey(d.metadata.namespace ?? '', t));
  },
});
const gadgetRef = reference<Doc, KubeObject>({
  name: 'every Gadget of the namespace',
  type: gadgetType,
  labelSelector: 'gadget=yes',
  targets: (d) => (d.spec.allGadgets === true ? [everyIn(d.metadata.namespace ?? '')] : []),
});
const sliceRef = reference<Doc, KubeObject>({
  name: 'slices of spec.slicesOf',
  type: sliceType,
  targets: (d) => (d.spec.slicesOf ?? []).map((s) => refKey(d.metadata.namespace ?? '', s)),
  filedUnder: (s) => {
    const owner = s.metadata.labels?.['owner'];
    return owner === undefined ? undefined : refKey(s.metadata.namespace ?? '', owner);
  },
});

/** A cache as an informer keeps it, by `namespace/name`. */
class FakeCache<O extends KubeObject> implements ObjectCache<O> {
  readonly objects = new Map<string, O>();
  hasSynced = false;
  constructor(objects: readonly O[] = []) {
    for (const o of objects) this.objects.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
  }
  get(key: string): O | undefined {
    return this.objects.get(key);
  }
  list(): O[] {
    return [...this.objects.values()];
  }
}

type Step = readonly [WatchEventType, Doc];
const { Added: add, Modified: mod, Deleted: del } = WatchEventType;

function set(steps: readonly Step[]): ReferenceSet<Doc> {
  const primaries = new Map<string, Doc>();
  const refs = new ReferenceSet<Doc>([targetRef, gadgetRef, sliceRef], () => [...primaries.values()]);
  for (const [type, d] of steps) {
    if (type === del) primaries.delete(`${d.metadata.namespace ?? ''}/${d.metadata.name}`);
    else primaries.set(`${d.metadata.namespace ?? ''}/${d.metadata.name}`, d);
    refs.primaryChanged(type, d);
  }
  return refs;
}

describe('ReverseIndex', () => {
  it.each<{ reason: string; steps: [string, string[] | 'delete'][]; want: Record<string, string[]> }>([
    {
      reason: 'a primary is filed under each key it refers to',
      steps: [
        ['ns/a', ['ns/x', 'ns/y']],
        ['ns/b', ['ns/y']],
      ],
      want: { 'ns/x': ['ns/a'], 'ns/y': ['ns/a', 'ns/b'] },
    },
    {
      reason: 'an update replaces what the primary referred to: the key it left loses it',
      steps: [
        ['ns/a', ['ns/x']],
        ['ns/a', ['ns/y']],
      ],
      want: { 'ns/x': [], 'ns/y': ['ns/a'] },
    },
    {
      reason: 'a deleted primary is filed nowhere; deleting twice is harmless',
      steps: [
        ['ns/a', ['ns/x']],
        ['ns/b', ['ns/x']],
        ['ns/a', 'delete'],
        ['ns/a', 'delete'],
      ],
      want: { 'ns/x': ['ns/b'] },
    },
    {
      reason: 'setting the same targets again changes nothing',
      steps: [
        ['ns/a', ['ns/x', 'ns/x']],
        ['ns/a', ['ns/x']],
      ],
      want: { 'ns/x': ['ns/a'] },
    },
  ])('$reason', ({ steps, want }) => {
    const index = new ReverseIndex();
    for (const [primary, targets] of steps)
      if (targets === 'delete') index.delete(primary);
      else index.set(primary, targets);
    for (const [key, referrers] of Object.entries(want)) expect([...index.referrers(key)]).toEqual(referrers);
    // No key is kept for nobody: the index holds only what is referred to.
    expect(index.size).toBe(Object.values(want).filter((r) => r.length > 0).length);
  });
});

describe('ReferenceSet: whom a referenced object’s change reconciles', () => {
  it.each<{
    reason: string;
    steps: readonly Step[];
    ref: Reference<Doc, KubeObject>;
    changed: KubeObject;
    old?: KubeObject;
    want: string[];
  }>([
    {
      reason: 'exactly the primaries naming it, not those naming another or in another namespace',
      steps: [
        [add, doc('ns', 'a', { targets: ['x'] })],
        [add, doc('ns', 'b', { targets: ['x', 'y'] })],
        [add, doc('ns', 'c', { targets: ['y'] })],
        [add, doc('other', 'd', { targets: ['x'] })],
      ],
      ref: targetRef,
      changed: obj('ns', 'x'),
      want: ['ns/a', 'ns/b'],
    },
    {
      reason: 'a primary that stops referring to it is no longer enqueued',
      steps: [
        [add, doc('ns', 'a', { targets: ['x'] })],
        [add, doc('ns', 'b', { targets: ['x'] })],
        [mod, doc('ns', 'a', { targets: ['z'] })],
      ],
      ref: targetRef,
      changed: obj('ns', 'x'),
      want: ['ns/b'],
    },
    {
      reason: 'a deleted primary is no longer enqueued',
      steps: [
        [add, doc('ns', 'a', { targets: ['x'] })],
        [del, doc('ns', 'a', { targets: ['x'] })],
      ],
      ref: targetRef,
      changed: obj('ns', 'x'),
      want: [],
    },
    {
      reason: 'a primary that starts referring to it is enqueued',
      steps: [
        [add, doc('ns', 'a', {})],
        [mod, doc('ns', 'a', { targets: ['x'] })],
      ],
      ref: targetRef,
      changed: obj('ns', 'x'),
      want: ['ns/a'],
    },
    {
      reason:
        'a reference to every object of a namespace (a label-selected watch) enqueues that namespace’s referrers',
      steps: [
        [add, doc('ns', 'a', { allGadgets: true })],
        [add, doc('ns', 'b', {})],
        [add, doc('other', 'c', { allGadgets: true })],
      ],
      ref: gadgetRef,
      changed: obj('ns', 'any-gadget', { gadget: 'yes' }),
      want: ['ns/a'],
    },
    {
      reason: 'an object filed under another key (a slice under its owner) reaches the owner’s referrers',
      steps: [
        [add, doc('ns', 'a', { slicesOf: ['web'] })],
        [add, doc('ns', 'b', { slicesOf: ['api'] })],
      ],
      ref: sliceRef,
      changed: obj('ns', 'web-x1y2', { owner: 'web' }),
      want: ['ns/a'],
    },
    {
      reason: 'an object filed under nothing (no owner label) reaches nobody',
      steps: [[add, doc('ns', 'a', { slicesOf: ['web'] })]],
      ref: sliceRef,
      changed: obj('ns', 'web'),
      want: [],
    },
    {
      reason: 'an object moved to another key reaches the referrers of both (the old key loses it)',
      steps: [
        [add, doc('ns', 'a', { slicesOf: ['web'] })],
        [add, doc('ns', 'b', { slicesOf: ['api'] })],
      ],
      ref: sliceRef,
      changed: obj('ns', 's1', { owner: 'api' }),
      old: obj('ns', 's1', { owner: 'web' }),
      want: ['ns/b', 'ns/a'],
    },
    {
      reason: 'one reference’s referrers are not another’s',
      steps: [[add, doc('ns', 'a', { targets: ['x'] })]],
      ref: gadgetRef,
      changed: obj('ns', 'x'),
      want: [],
    },
  ])('$reason', ({ steps, ref, changed, old, want }) => {
    const refs = set(steps);
    calls.targets = 0;
    expect(refs.referrers(ref, changed, old)).toEqual(want);
    // The change was answered from the index: no primary's targets were computed again.
    expect(calls.targets).toBe(0);
  });

  it('answers from the index whatever the number of primaries (O(referrers), not O(primaries))', () => {
    const steps: Step[] = [];
    for (let i = 0; i < 10_000; i++) steps.push([add, doc('ns', `d${i}`, { targets: [`t${i % 5_000}`] })]);
    const refs = set(steps);
    calls.targets = 0;
    expect(refs.referrers(targetRef, obj('ns', 't7'))).toEqual(['ns/d7', 'ns/d5007']);
    expect(calls.targets).toBe(0);
    expect(refs.index(targetRef)?.size).toBe(5_000);
    expect(refs.index(targetRef)?.referrers(refKey('ns', 't7')).size).toBe(2);
  });
});

describe('ReferenceSet: the typed reader', () => {
  function reader(): { refs: ReferenceSet<Doc>; targets: [FakeCache<Target>, FakeCache<Target>] } {
    const refs = set([
      [add, doc('ns', 'a', {})],
      [add, doc('other', 'b', {})],
    ]);
    // Two watched namespaces: one cache each.
    const targets: [FakeCache<Target>, FakeCache<Target>] = [
      new FakeCache<Target>([{ metadata: { namespace: 'ns', name: 'x' }, status: { address: '10.0.0.1' } }]),
      new FakeCache<Target>([{ metadata: { namespace: 'other', name: 'y' } }]),
    ];
    for (const c of targets) refs.attach(targetRef, c);
    refs.attach(
      sliceRef,
      new FakeCache([
        obj('ns', 's1', { owner: 'web' }),
        obj('ns', 's2', { owner: 'api' }),
        obj('other', 's3', { owner: 'web' }),
      ]),
    );
    return { refs, targets };
  }

  it('gets an object of any watched namespace, typed as the reference declares', () => {
    const { refs } = reader();
    const x: Target | undefined = refs.get(targetRef, 'ns', 'x');
    expect(x?.status?.address).toBe('10.0.0.1');
    expect(refs.get(targetRef, 'other', 'y')?.metadata.name).toBe('y');
    expect(refs.get(targetRef, 'ns', 'y')).toBeUndefined();
    expect(refs.get(gadgetRef, 'ns', 'x')).toBeUndefined();
  });

  it.each<{ reason: string; namespace: string; under?: string; want: string[] }>([
    { reason: 'every object of the namespace', namespace: 'ns', want: ['s1', 's2'] },
    { reason: 'those filed under one key', namespace: 'ns', under: 'web', want: ['s1'] },
    { reason: 'the key in its own namespace only', namespace: 'other', under: 'web', want: ['s3'] },
    { reason: 'nothing under a key no object is filed under', namespace: 'ns', under: 'db', want: [] },
  ])('lists $reason', ({ namespace, under, want }) => {
    const { refs } = reader();
    expect(refs.list(sliceRef, namespace, under).map((o) => o.metadata.name)).toEqual(want);
  });

  it('is synced once every cache of the reference has listed, and never for one with no cache', () => {
    const { refs, targets } = reader();
    expect(refs.synced(targetRef)).toBe(false);
    targets[0].hasSynced = true;
    expect(refs.synced(targetRef)).toBe(false);
    targets[1].hasSynced = true;
    expect(refs.synced(targetRef)).toBe(true);
    expect(refs.synced(gadgetRef)).toBe(false);
  });

  it('lists the primaries of a namespace', () => {
    const { refs } = reader();
    expect(refs.primaries('ns').map((d) => d.metadata.name)).toEqual(['a']);
    expect(refs.primaries('none')).toEqual([]);
  });

  it('refuses a cache for a reference it was not given', () => {
    const refs = new ReferenceSet<Doc>([targetRef], () => []);
    expect(() => refs.attach(gadgetRef, new FakeCache())).toThrow(/was not declared/);
  });
});

describe('a cluster-scoped primary whose members live in many namespaces (a MyIngressGroup)', () => {
  /** A group: cluster-scoped, named by its members; refers to the Targets its members name. */
  interface Group extends KubeObject {
    spec: Record<string, never>;
  }
  /** A member: names its group and the Targets (in its own namespace) it brings. */
  interface Member extends KubeObject {
    spec: { group?: string; targets?: string[] };
  }
  const memberType = { ...targetType, plural: 'members', kind: 'Member' };
  const memberRef = reference<Group, Member>({
    name: 'members',
    type: memberType,
    targets: (g) => [refKey('', g.metadata.name)],
    filedUnder: (m) => (m.spec.group !== undefined ? refKey('', m.spec.group) : undefined),
    refiles: true,
  });
  const memberTargetRef = reference<Group, Target>({
    name: "members' targets",
    type: targetType,
    targets: (g, refs) =>
      refs
        .filed(memberRef, refKey('', g.metadata.name))
        .flatMap((m) => (m.spec.targets ?? []).map((t) => refKey(m.metadata.namespace ?? '', t))),
  });
  const member = (ns: string, name: string, spec: Member['spec']): Member => ({
    metadata: { namespace: ns, name },
    spec,
  });

  function setup(): { refs: ReferenceSet<Group>; members: FakeCache<Member>; groups: Map<string, Group> } {
    const groups = new Map<string, Group>([
      ['g', { metadata: { name: 'g' }, spec: {} }],
      ['h', { metadata: { name: 'h' }, spec: {} }],
    ]);
    const refs = new ReferenceSet<Group>([memberRef, memberTargetRef], () => [...groups.values()]);
    const members = new FakeCache<Member>([
      member('a', 'one', { group: 'g', targets: ['web'] }),
      member('b', 'two', { group: 'g', targets: ['api'] }),
      member('b', 'three', { group: 'h', targets: ['db'] }),
    ]);
    refs.attach(memberRef, members);
    refs.attach(memberTargetRef, new FakeCache());
    for (const g of groups.values()) refs.primaryChanged(add, g);
    return { refs, members, groups };
  }

  it('reads the members filed under the group in every namespace', () => {
    const { refs } = setup();
    expect(refs.filed(memberRef, refKey('', 'g')).map((m) => objKey(m))).toEqual(['a/one', 'b/two']);
    expect(refs.filed(memberRef, refKey('', 'none'))).toEqual([]);
  });

  it("files the group under its members' targets, and again when a member changes", () => {
    const { refs, members, groups } = setup();
    expect(refs.referrers(memberTargetRef, obj('a', 'web'))).toEqual(['g']);
    expect(refs.referrers(memberTargetRef, obj('b', 'db'))).toEqual(['h']);
    // b/three moves from h to g and names another target: both groups are concerned, and g now
    // refers to its target while h no longer does.
    const before = members.objects.get('b/three');
    const moved = member('b', 'three', { group: 'g', targets: ['cache'] });
    members.objects.set('b/three', moved);
    const keys = refs.referrers(memberRef, moved, before);
    expect(keys.sort()).toEqual(['g', 'h']);
    refs.refile(memberRef, keys, (k) => groups.get(k));
    expect(refs.referrers(memberTargetRef, obj('b', 'cache'))).toEqual(['g']);
    expect(refs.referrers(memberTargetRef, obj('b', 'db'))).toEqual([]);
  });

  it('files a member naming several groups under each (an HTTPRoute naming two Gateways)', () => {
    interface Multi extends KubeObject {
      spec: { groups: string[] };
    }
    const multiRef = reference<Group, Multi>({
      name: 'multi',
      type: memberType,
      targets: (g) => [refKey('', g.metadata.name)],
      filedUnder: (m) => m.spec.groups.map((g) => refKey('', g)),
    });
    const groups = [
      { metadata: { name: 'g' }, spec: {} },
      { metadata: { name: 'h' }, spec: {} },
    ];
    const refs = new ReferenceSet<Group>([multiRef], () => groups);
    const both: Multi = { metadata: { namespace: 'a', name: 'both' }, spec: { groups: ['g', 'h'] } };
    const none: Multi = { metadata: { namespace: 'a', name: 'none' }, spec: { groups: [] } };
    refs.attach(multiRef, new FakeCache<Multi>([both, none]));
    for (const g of groups) refs.primaryChanged(add, g);
    expect(refs.filed(multiRef, refKey('', 'g')).map((m) => objKey(m))).toEqual(['a/both']);
    expect(refs.filed(multiRef, refKey('', 'h')).map((m) => objKey(m))).toEqual(['a/both']);
    expect(refs.referrers(multiRef, both).sort()).toEqual(['g', 'h']);
    // Leaving h: the change concerns both (h through the old object), and h no longer files it.
    const onlyG: Multi = { ...both, spec: { groups: ['g'] } };
    expect(refs.referrers(multiRef, onlyG, both).sort()).toEqual(['g', 'h']);
    expect(refs.referrers(multiRef, none)).toEqual([]);
  });

  it('files nothing again for a reference that does not refile', () => {
    const { refs, groups } = setup();
    let asked = 0;
    refs.refile(memberTargetRef, ['g'], (k) => {
      asked++;
      return groups.get(k);
    });
    expect(asked).toBe(0);
  });
});

function objKey(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}
