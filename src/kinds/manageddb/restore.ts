// Which snapshots a ManagedDB may restore: by default only those Skylift made for the same
// namespace of this cluster (its final, scheduled and on-request snapshots carry the instance's
// ownership tags), never another team's data.
import { ownershipFromTags } from '../../apis/managed.ts';

/**
 * Why `snapshotId` may not be restored into an object of `namespace`, or
 * undefined when it may: its ownership tags must name an object of the same
 * namespace and this cluster. `tags` are the snapshot's. Pure.
 */
export function restoreRefusal(
  snapshotId: string,
  tags: Readonly<Record<string, string>>,
  namespace: string,
  cluster: string,
  alsoFrom: readonly string[] = [],
): string | undefined {
  const owner = ownershipFromTags(tags);
  const ownerNamespace = owner?.owner.split('/')[0];
  const allowed = [namespace, ...alsoFrom];
  if (
    owner !== undefined &&
    ownerNamespace !== undefined &&
    allowed.includes(ownerNamespace) &&
    owner.cluster === cluster
  )
    return undefined;
  const whose =
    owner === undefined
      ? 'was not made by Skylift'
      : owner.cluster !== cluster
        ? `was made by Skylift in another cluster (${owner.cluster || 'unnamed'})`
        : `belongs to namespace ${ownerNamespace ?? '?'}`;
  const where =
    alsoFrom.length === 0
      ? `its own namespace (${namespace})`
      : `its own namespace (${namespace}) or those its TeamPolicy names (${alsoFrom.join(', ')})`;
  return `spec.restoreFrom.snapshotIdentifier ${JSON.stringify(snapshotId)} ${whose}: a ManagedDB restores only snapshots Skylift made for ${where}; name one of them (skylift trace mdb/<name> lists an instance's snapshots), or copy the data in another way`;
}

/**
 * The tag marking that a restored instance's master password was set to this object's (value: the
 * object's uid, so a mark copied from the source instance through its snapshot does not count).
 */
export const restoredPasswordTag = 'skylift.dev/restored-password';

/**
 * Whether an instance restored from a snapshot still has the snapshot's master password — the
 * source's, which the connection Secret does not hold — rather than this object's. Pure.
 */
export function needsPasswordAfterRestore(
  restoreFrom: { snapshotIdentifier: string } | undefined,
  tags: Readonly<Record<string, string>>,
  uid: string,
): boolean {
  return restoreFrom !== undefined && tags[restoredPasswordTag] !== uid;
}
