import { describe, expect, it } from 'vitest';
import { ownershipTagMap } from '../../src/apis/managed.ts';
import { needsPasswordAfterRestore, restoreRefusal } from '../../src/kinds/manageddb/restore.ts';

const tags = (owner: string, cluster = 'prod'): Record<string, string> =>
  ownershipTagMap({ uid: 'u1', owner, cluster });

describe('restoreRefusal', () => {
  it("allows a snapshot Skylift made for the same namespace of this cluster (another object's too)", () => {
    expect(restoreRefusal('s1', tags('shop/orders'), 'shop', 'prod')).toBeUndefined();
    expect(restoreRefusal('s1', { ...tags('shop/old-orders'), team: 'x' }, 'shop', 'prod')).toBeUndefined();
  });

  it("refuses another namespace's, another cluster's and an untagged snapshot, naming the field and why", () => {
    expect(restoreRefusal('s1', tags('billing/ledger'), 'shop', 'prod')).toMatch(
      /^spec\.restoreFrom\.snapshotIdentifier "s1" belongs to namespace billing: a ManagedDB restores only snapshots Skylift made for its own namespace \(shop\)/,
    );
    expect(restoreRefusal('s1', tags('shop/orders', 'staging'), 'shop', 'prod')).toContain(
      'was made by Skylift in another cluster (staging)',
    );
    expect(restoreRefusal('s1', { team: 'shop' }, 'shop', 'prod')).toContain('"s1" was not made by Skylift');
  });

  it('takes the namespaces a TeamPolicy adds (same cluster only), and names them when refusing', () => {
    expect(restoreRefusal('s1', tags('prod-shop/orders'), 'shop', 'prod', ['prod-shop'])).toBeUndefined();
    expect(
      restoreRefusal('s1', tags('prod-shop/orders', 'staging'), 'shop', 'prod', ['prod-shop']),
    ).toContain('another cluster');
    expect(restoreRefusal('s1', tags('billing/ledger'), 'shop', 'prod', ['prod-shop'])).toContain(
      'a ManagedDB restores only snapshots Skylift made for its own namespace (shop) or those its TeamPolicy names (prod-shop)',
    );
  });

  it('does not take a namespace that only begins like this one', () => {
    expect(restoreRefusal('s1', tags('shop-staging/orders'), 'shop', 'prod')).toContain(
      'belongs to namespace shop-staging',
    );
  });
});

describe('needsPasswordAfterRestore', () => {
  const from = { snapshotIdentifier: 's1' };
  it('only for a restored instance not yet marked with this object’s uid', () => {
    expect(needsPasswordAfterRestore(undefined, {}, 'u1')).toBe(false);
    expect(needsPasswordAfterRestore(from, {}, 'u1')).toBe(true);
    expect(needsPasswordAfterRestore(from, { 'skylift.dev/restored-password': 'u1' }, 'u1')).toBe(false);
    // A mark copied from the source instance through its snapshot does not count.
    expect(needsPasswordAfterRestore(from, { 'skylift.dev/restored-password': 'u0' }, 'u1')).toBe(true);
  });
});
