// RDS calls on a ManagedDB's manual DB snapshots: taken by name (scheduled, on request), listed,
// pruned, and described to check one before a restore. Knows no schedule (snapshots.ts plans it).
import {
  CreateDBSnapshotCommand,
  DeleteDBSnapshotCommand,
  DescribeDBSnapshotsCommand,
  type DBInstance,
  type DBSnapshot,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { awsCall, lookup } from '../../providers/aws/calls.ts';
import { hasErrorCode } from '../../providers/aws/errors.ts';
import { rdsErrorTable } from '../../providers/rds/states.ts';

/**
 * One set of RDS clients' snapshot calls. Every method may block on RDS and throws typed errors
 * (rdsErrorTable); none keeps state.
 */
export class DBSnapshots {
  private readonly rds: RDSClient;

  constructor(rds: RDSClient) {
    this.rds = rds;
  }

  /** Takes a manual snapshot of `instanceId` named `name`; one that exists already counts as taken. Idempotent. */
  async take(instanceId: string, name: string, what: string): Promise<void> {
    await lookup(
      what,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBSnapshotAlreadyExists'),
      () =>
        this.rds.send(
          new CreateDBSnapshotCommand({ DBInstanceIdentifier: instanceId, DBSnapshotIdentifier: name }),
        ),
    );
  }

  /** The instance's manual snapshots (first page). Read-only. */
  async manualOf(db: DBInstance): Promise<DBSnapshot[]> {
    const out = await awsCall('list snapshots', rdsErrorTable, () =>
      this.rds.send(
        new DescribeDBSnapshotsCommand({
          DBInstanceIdentifier: db.DBInstanceIdentifier ?? '',
          SnapshotType: 'manual',
        }),
      ),
    );
    return out.DBSnapshots ?? [];
  }

  /** Deletes snapshot `name`; one already gone counts as deleted. Idempotent. */
  async delete(name: string): Promise<void> {
    await lookup(
      `delete snapshot ${name}`,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBSnapshotNotFound'),
      () => this.rds.send(new DeleteDBSnapshotCommand({ DBSnapshotIdentifier: name })),
    );
  }

  /** The snapshot named `identifier`, or undefined when RDS has none. Read-only. */
  describe(identifier: string, what: string): Promise<DBSnapshot | undefined> {
    return lookup(
      what,
      rdsErrorTable,
      (err) => hasErrorCode(err, 'DBSnapshotNotFound'),
      async () =>
        (await this.rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: identifier })))
          .DBSnapshots?.[0],
    );
  }
}
