// The pure core of shared resources: precedence, exclusive claims, the shared resource's own
// lifecycle, when a leaving member is let go, and its children planned by attribution.
import { describe, expect, it } from 'vitest';
import {
  attributedMembers,
  memberPrecedence,
  planSharedChildren,
  releasableMembers,
  settleClaims,
  sharedResourceStep,
  type SharedMember,
} from '../../src/runtime/sharedResource.ts';

type Routes = readonly string[];

const member = (
  key: string,
  createdAt: string,
  contribution: Routes,
  leaving = false,
): SharedMember<Routes> => ({ key, uid: `uid-${key}`, createdAt, leaving, contribution });

const claims = (c: Routes): Routes => c;

describe('memberPrecedence', () => {
  it('orders the older first, then by key; an unreadable time last', () => {
    const ms = [
      member('b/x', '2026-11-27T10:00:01Z', []),
      member('a/z', '2026-11-27T10:00:00Z', []),
      member('a/y', '2026-11-27T10:00:01Z', []),
      member('a/w', 'not a time', []),
    ];
    expect([...ms].sort(memberPrecedence).map((m) => m.key)).toEqual(['a/z', 'a/y', 'b/x', 'a/w']);
  });
});

describe('settleClaims', () => {
  const older = member('team-a/shop', '2026-11-27T10:00:00Z', [
    '443 shop.example.com /',
    '443 shop.example.com /api',
  ]);
  const newer = member('team-b/api', '2026-11-27T10:05:00Z', [
    '443 shop.example.com /api',
    '443 api.example.com /',
  ]);
  const other = member('team-b/docs', '2026-11-27T10:06:00Z', ['443 docs.example.com /']);

  it('grants the older member, refuses the later one whole, whatever the order given', () => {
    for (const order of [
      [older, newer, other],
      [other, newer, older],
    ]) {
      const s = settleClaims(order, claims);
      expect(s.granted.map((m) => m.key)).toEqual(['team-a/shop', 'team-b/docs']);
      expect(s.refused).toEqual([
        { member: 'team-b/api', claim: '443 shop.example.com /api', heldBy: 'team-a/shop' },
      ]);
    }
  });

  it('frees a leaving member’s claims for the next in line', () => {
    const s = settleClaims([{ ...older, leaving: true }, newer], claims);
    expect(s.granted.map((m) => m.key)).toEqual(['team-b/api']);
    expect(s.refused).toEqual([]);
  });

  it('does not refuse a member that claims one thing twice', () => {
    const twice = member('a/twice', '2026-11-27T10:00:00Z', ['80 x /', '80 x /']);
    expect(settleClaims([twice], claims).granted).toHaveLength(1);
  });
});

describe('sharedResourceStep and releasableMembers', () => {
  const staying = member('a/stay', '2026-11-27T10:00:00Z', []);
  const leaving = member('a/go', '2026-11-27T10:00:01Z', [], true);

  it('keeps the resource while a member stays, deletes it when none does', () => {
    expect(sharedResourceStep([staying, leaving], true)).toBe('ensure');
    expect(sharedResourceStep([staying], false)).toBe('ensure');
    expect(sharedResourceStep([leaving], true)).toBe('delete');
    expect(sharedResourceStep([leaving], false)).toBe('none');
    expect(sharedResourceStep([], false)).toBe('none');
  });

  it('lets a leaving member go once no child is attributed to it', () => {
    expect(releasableMembers([staying, leaving], new Set([leaving.uid]), true)).toEqual([]);
    expect(releasableMembers([staying, leaving], new Set([staying.uid]), true)).toEqual([leaving]);
  });

  it('holds the last one out until the shared resource is gone', () => {
    expect(releasableMembers([leaving], new Set(), true)).toEqual([]);
    expect(releasableMembers([leaving], new Set(), false)).toEqual([leaving]);
  });
});

describe('planSharedChildren', () => {
  const group = 'MyIngressGroup/shared';

  it('deletes the children of a member that left, replaces one that changed member, leaves a foreign one', () => {
    const r = planSharedChildren(
      group,
      [
        [10, { member: 'uid-b', value: 'rule-10' }],
        [20, { member: 'uid-a', value: 'rule-20' }],
        [30, { member: 'uid-a', value: 'rule-30' }],
      ],
      [
        [10, { value: 'rule-10', member: 'uid-gone', group }],
        [20, { value: 'rule-20', member: 'uid-a', group }],
        [40, { value: 'rule-40', member: 'uid-gone', group }],
        [50, { value: 'by hand', member: undefined, group: undefined }],
        [30, { value: 'another group', member: 'uid-x', group: 'MyIngressGroup/other' }],
      ],
    );
    if (!r.ok) throw new Error(r.error.message);
    expect(r.plan.creates).toEqual([]);
    expect(r.plan.updates.map((u) => [u.key, u.value.member, u.from.member])).toEqual([
      [10, 'uid-b', 'uid-gone'],
    ]);
    expect(r.plan.deletes.map((d) => d.key)).toEqual([40]);
    expect(r.plan.conflicts.map((c) => c.key)).toEqual([30]);
  });

  it('finds the members the group’s observed children are attributed to', () => {
    expect(
      attributedMembers(group, [
        { value: 1, member: 'uid-a', group },
        { value: 2, member: 'uid-b', group: 'MyIngressGroup/other' },
        { value: 3, member: undefined, group },
      ]),
    ).toEqual(new Set(['uid-a']));
  });
});
