// Carrying out a ManagedDB's on-demand request (the request annotation: snapshot, reboot,
// failover) on its instance. requests.ts says which request is pending and how results read.
import { RebootDBInstanceCommand, type DBInstance, type RDSClient } from '@aws-sdk/client-rds';
import { awsCall } from '../../providers/aws/calls.ts';
import { rdsErrorTable } from '../../providers/rds/states.ts';
import { refusedResult, type OnDemandAction } from './requests.ts';
import type { DBSnapshots } from './snapshotCalls.ts';

/**
 * Carries out an on-demand request on `db`: snapshots are named after the request and a reboot is
 * skipped while the instance is already rebooting, so a repeat does nothing twice (idempotent); a
 * failover of an instance that is not Multi-AZ is refused without a call. Returns the result to
 * record. May block on RDS; throws typed errors.
 */
export async function carryOutRequest(
  rds: RDSClient,
  snapshots: DBSnapshots,
  db: DBInstance,
  req: { readonly action: OnDemandAction; readonly id: string },
): Promise<string> {
  const id = db.DBInstanceIdentifier ?? '';
  if (req.action === 'snapshot') {
    const name = `${id}-req-${req.id}`.slice(0, 255);
    await snapshots.take(id, name, `snapshot ${id}`);
    return `snapshot ${name} started`;
  }
  if (req.action === 'failover' && db.MultiAZ !== true)
    return refusedResult('failover', 'the instance is not Multi-AZ (set spec.multiAZ: true first)');
  if (db.DBInstanceStatus === 'rebooting') return `${req.action} already in progress`;
  await awsCall(`${req.action} ${id}`, rdsErrorTable, () =>
    rds.send(
      new RebootDBInstanceCommand({
        DBInstanceIdentifier: id,
        ...(req.action === 'failover' ? { ForceFailover: true } : {}),
      }),
    ),
  );
  return `${req.action} started`;
}
