import { describe, expect, it } from 'vitest';
import { ownerAsSeenBy } from '../../src/apis/managed.ts';
import { ownershipStanding, type OwnershipFacts } from '../../src/runtime/ownership.ts';

const ours = { uid: 'u-ours', owner: 'shop/www', cluster: 'c1' };
const theirs = { uid: 'u-theirs', owner: 'shop/old', cluster: 'c1' };
const base: OwnershipFacts = {
  owner: undefined,
  ours,
  externalName: undefined,
  observeOnly: false,
  identity: 'www.example.com/A',
  ownerGone: false,
};

describe('ownershipStanding', () => {
  it('its own resource is owned, whatever else holds', () => {
    expect(ownershipStanding({ ...base, owner: ours })).toEqual({ kind: 'owned' });
  });

  it("an existing object's resource is a Conflict, named or observed", () => {
    for (const facts of [
      { ...base, owner: theirs },
      { ...base, owner: theirs, externalName: 'www.example.com/A' },
      { ...base, owner: theirs, externalName: 'www.example.com/A', observeOnly: true },
    ]) {
      const s = ownershipStanding(facts);
      expect(s.kind).toBe('conflict');
      expect(s.kind === 'conflict' && s.message).toContain('is owned by shop/old (uid u-theirs);');
    }
  });

  // Issue 27, item 18: a Conflict named another namespace's object, its uid and the cluster.
  it("names an owner only within the object's own namespace and cluster", () => {
    const elsewhere = { uid: 'u-else', owner: 'billing/ledger', cluster: 'c1' };
    const otherCluster = { uid: 'u-far', owner: 'shop/www', cluster: 'c2' };
    const message = (owner: typeof theirs): string => {
      const s = ownershipStanding({ ...base, owner });
      return s.kind === 'conflict' ? s.message : '';
    };
    expect(message(elsewhere)).toContain('is owned by a Skylift object in another namespace;');
    expect(message(elsewhere)).not.toMatch(/billing|ledger|u-else/);
    expect(message(otherCluster)).toContain('is owned by a Skylift object of another cluster;');
    expect(message(otherCluster)).not.toMatch(/c2|u-far/);
    expect(ownerAsSeenBy(theirs, ours)).toBe('shop/old (uid u-theirs)');
  });

  it('a resource whose owner no longer exists is adopted when spec.externalName names it', () => {
    expect(
      ownershipStanding({ ...base, owner: theirs, ownerGone: true, externalName: 'www.example.com/A' }),
    ).toEqual({
      kind: 'adopting',
    });
  });

  it('without spec.externalName it is a Conflict saying the owner is gone and how to adopt', () => {
    const s = ownershipStanding({ ...base, owner: theirs, ownerGone: true });
    expect(s.kind === 'conflict' && s.message).toMatch(
      /owned by shop\/old \(uid u-theirs\), which no longer exists in this cluster .* delete this object and create it again with spec\.externalName "www\.example\.com\/A"/,
    );
  });

  it('untagged: adopted when named, observed under ObserveOnly, else a Conflict asking for externalName', () => {
    expect(ownershipStanding({ ...base, externalName: 'www.example.com/A' })).toEqual({ kind: 'adopting' });
    expect(ownershipStanding({ ...base, observeOnly: true })).toEqual({ kind: 'observing' });
    const s = ownershipStanding(base);
    expect(s.kind === 'conflict' && s.message).toContain(
      '(www.example.com/A) already exists and is not managed by Skylift; set spec.externalName to adopt it',
    );
  });
});
