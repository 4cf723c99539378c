// The check before a ManagedDB restores spec.restoreFrom: the snapshot read from RDS and judged by
// restore.ts's rules (whose it is, its master user). Read-only.
import { tagMap } from '../../providers/aws/tags.ts';
import type { OwnershipTags } from '../../apis/managed.ts';
import { TerminalError } from '../../runtime/errors.ts';
import type { ManagedDB } from './api.ts';
import { restoreRefusal, restoredUserMismatch, snapshotReference, uncheckableSnapshot } from './restore.ts';
import type { DBSnapshots } from './snapshotCalls.ts';

/**
 * Refuses (Terminal, nothing created) a snapshot that Skylift did not make for this namespace of
 * this cluster (or one of `alsoFrom`), one whose master user is not spec.masterUsername, and one it
 * cannot check: fails closed, so a refusal never depends on a lookup succeeding. An ARN is looked
 * up by its identifier, and must be the ARN of what was found (an ARN of another account or region
 * is never this namespace's). Read-only; may block on RDS.
 */
export async function checkRestorable(
  snapshots: DBSnapshots,
  mr: ManagedDB,
  snapshotId: string,
  ownership: OwnershipTags,
  alsoFrom: readonly string[],
): Promise<void> {
  const ref = snapshotReference(snapshotId);
  if (ref === undefined) throw new TerminalError(uncheckableSnapshot(snapshotId, 'not-a-snapshot-arn'));
  const found = await snapshots.describe(ref.identifier, `describe DB snapshot ${snapshotId}`);
  if (found === undefined || (ref.arn !== undefined && found.DBSnapshotArn !== snapshotId))
    throw new TerminalError(uncheckableSnapshot(snapshotId, 'not-found'));
  const refusal = restoreRefusal(
    snapshotId,
    tagMap(found.TagList),
    mr.metadata.namespace ?? '',
    ownership.cluster,
    alsoFrom,
  );
  if (refusal !== undefined) throw new TerminalError(refusal);
  const mismatch = restoredUserMismatch(snapshotId, found.MasterUsername, mr.spec.masterUsername);
  if (mismatch !== undefined) throw new TerminalError(mismatch);
}
