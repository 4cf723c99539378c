import { describe, expect, it } from 'vitest';
import { ownershipTagMap } from '../../src/apis/managed.ts';
import {
  needsPasswordAfterRestore,
  restoreRefusal,
  snapshotReference,
  uncheckableSnapshot,
} from '../../src/kinds/manageddb/restore.ts';

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

describe('snapshotReference', () => {
  it('reads a bare identifier, and a DB snapshot ARN with its account and region', () => {
    expect(snapshotReference('orders-final')).toEqual({ identifier: 'orders-final', arn: undefined });
    expect(snapshotReference('arn:aws:rds:eu-west-1:111122223333:snapshot:orders-final')).toEqual({
      identifier: 'orders-final',
      arn: { region: 'eu-west-1', account: '111122223333' },
    });
    expect(snapshotReference('arn:aws:rds:eu-west-1:111122223333:snapshot:rds:orders-2026-11-26')).toEqual({
      identifier: 'rds:orders-2026-11-26',
      arn: { region: 'eu-west-1', account: '111122223333' },
    });
  });

  it('is undefined for an ARN of anything a DB instance cannot be restored from', () => {
    expect(snapshotReference('arn:aws:rds:eu-west-1:111122223333:cluster-snapshot:c1')).toBeUndefined();
    expect(snapshotReference('arn:aws:s3:::bucket/key')).toBeUndefined();
    expect(snapshotReference('arn:aws:rds:eu-west-1:111122223333:snapshot:')).toBeUndefined();
    expect(snapshotReference('arn:aws:rds::111122223333:snapshot:s1')).toBeUndefined();
  });

  it('an uncheckable snapshot is refused naming the field, why, and a fix', () => {
    expect(uncheckableSnapshot('s1', 'not-found')).toMatch(
      /^spec\.restoreFrom\.snapshotIdentifier "s1" names no DB snapshot in the account and region this namespace is served in: .*delete this ManagedDB and create it again/,
    );
    expect(uncheckableSnapshot('arn:aws:rds:x', 'not-a-snapshot-arn')).toContain(
      'is not the ARN of a DB snapshot',
    );
  });
});
