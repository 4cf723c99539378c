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

/** What spec.restoreFrom.snapshotIdentifier names: an identifier, or an ARN with the account and region it is in. */
export interface SnapshotReference {
  /** The snapshot's identifier (the ARN's last part). */
  readonly identifier: string;
  /** Set when the field is an ARN. */
  readonly arn: { readonly region: string; readonly account: string } | undefined;
}

/**
 * Reads spec.restoreFrom.snapshotIdentifier: `arn:<partition>:rds:<region>:<account>:snapshot:<id>`
 * or a bare identifier. Undefined for an ARN of anything else (a cluster snapshot, another
 * service), which a DB instance cannot be restored from. Pure.
 */
export function snapshotReference(text: string): SnapshotReference | undefined {
  if (!text.startsWith('arn:')) return { identifier: text, arn: undefined };
  const [, , service, region = '', account = '', kind, ...rest] = text.split(':');
  const identifier = rest.join(':');
  if (service !== 'rds' || kind !== 'snapshot' || identifier === '' || region === '' || account === '')
    return undefined;
  return { identifier, arn: { region, account } };
}

/**
 * Why a snapshot named by spec.restoreFrom.snapshotIdentifier cannot be checked, so is not
 * restored: the field is not a DB snapshot ARN, or no snapshot of that name is in this object's
 * account and region (a snapshot of another account, shared or public, is never Skylift's for
 * this namespace; one that does not exist could be made by someone else before the restore). The
 * restore goes ahead only for a snapshot that was found and whose ownership was read. Pure.
 */
export function uncheckableSnapshot(snapshotId: string, reason: 'not-a-snapshot-arn' | 'not-found'): string {
  const why =
    reason === 'not-a-snapshot-arn'
      ? 'is not the ARN of a DB snapshot (arn:aws:rds:<region>:<account>:snapshot:<id>)'
      : 'names no DB snapshot in the account and region this namespace is served in';
  return `spec.restoreFrom.snapshotIdentifier ${JSON.stringify(snapshotId)} ${why}: Skylift restores only a snapshot it can find and check was made for this namespace; name one of them (skylift trace mdb/<name> lists an instance's snapshots), then delete this ManagedDB and create it again (the field is fixed at create)`;
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

/**
 * Why a snapshot whose master user is `snapshotUser` cannot be restored into an object whose spec
 * names `specUser` (a restored instance keeps the snapshot's user, so the Secret would name the
 * wrong one), or undefined when they agree or the snapshot does not say. Pure.
 */
export function restoredUserMismatch(
  snapshotId: string,
  snapshotUser: string | undefined,
  specUser: string,
): string | undefined {
  if (snapshotUser === undefined || snapshotUser === specUser) return undefined;
  return `spec.masterUsername ${JSON.stringify(specUser)} is not the master user of snapshot ${JSON.stringify(snapshotId)} (${JSON.stringify(snapshotUser)}), and a restored instance keeps the snapshot's: create the ManagedDB again with spec.masterUsername: ${snapshotUser} (it cannot be changed after create); nothing was created`;
}
