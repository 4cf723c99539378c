// ManagedDB → DB instance (status, endpoint, pending modifications), its connection Secret, and
// on-demand requests (pending, and the last one carried out).
import { DescribeDBInstancesCommand } from '@aws-sdk/client-rds';
import type { ManagedDB } from './api.ts';
import { connectionSecretName } from './identity.ts';
import { lastRequest, pendingRequest, requestAnnotation } from './requests.ts';
import { awsErrorCode } from '../../providers/aws/errors.ts';
import { rdsAvailableStates } from '../../providers/rds/states.ts';
import { KubeApiError } from '../../runtime/kube/client.ts';
import type { ManagedObject } from '../../apis/managed.ts';
import type { Collector, TraceContext } from '../../trace/context.ts';
import { describeSafely, errorNode, node, NotFoundInAws, type TraceNode } from '../../trace/tree.ts';

/** True for RDS's "no such DB instance". Pure. */
function isDbNotFound(err: unknown): boolean {
  return awsErrorCode(err) === 'DBInstanceNotFound' || awsErrorCode(err) === 'DBInstanceNotFoundFault';
}

/** The ManagedDB collector: the DB instance recorded in status, described live, and the connection Secret. */
export const traceManagedDb: Collector = async (obj: ManagedObject, ctx: TraceContext) => {
  const mr = obj as ManagedDB;
  const id = typeof mr.status?.identifier === 'string' ? mr.status.identifier : undefined;
  const instance =
    id === undefined || id === ''
      ? node('DBInstance', '-', 'NotCreated', false, ['no DB instance recorded in status yet'])
      : await describeSafely(
          'DBInstance',
          id,
          async () => {
            const db = (
              await (await ctx.aws.rds()).send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))
            ).DBInstances?.[0];
            if (db === undefined) throw new NotFoundInAws(id);
            const state = db.DBInstanceStatus ?? 'unknown';
            const pending = Object.entries(db.PendingModifiedValues ?? {})
              .filter(([, v]) => v !== undefined && v !== null)
              .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
            return node('DBInstance', id, state, rdsAvailableStates.includes(state), [
              `endpoint=${db.Endpoint?.Address ?? '-'}:${db.Endpoint?.Port ?? '-'}`,
              `engine=${db.Engine ?? '?'} ${db.EngineVersion ?? ''}`.trim(),
              `class=${db.DBInstanceClass ?? '?'}`,
              pending.length > 0 ? `pending: ${pending.join(', ')}` : 'no pending modifications',
            ]);
          },
          isDbNotFound,
        );
  return [instance, await secretNode(ctx, mr), ...requestNodes(mr)];
};

/**
 * The on-demand requests on the object, as informational nodes (they never
 * fail the trace): one the annotation holds that no operator has carried
 * out yet (Pending), then the last one carried out (Done, with its result). Pure.
 */
export function requestNodes(mr: ManagedDB): TraceNode[] {
  const nodes: TraceNode[] = [];
  const pending = pendingRequest(mr);
  if (pending !== undefined)
    nodes.push(
      node('Request', pending.id, 'Pending', undefined, [
        pending.action,
        `annotation ${requestAnnotation}`,
        'no operator has acknowledged it yet',
      ]),
    );
  const last = lastRequest(mr);
  if (last !== undefined) nodes.push(node('Request', last.id, 'Done', undefined, [last.result]));
  return nodes;
}

/** The connection Secret: whether it exists and which keys it has (never the values). */
async function secretNode(ctx: TraceContext, mr: ManagedDB): Promise<TraceNode> {
  const name = connectionSecretName(mr);
  try {
    const secret = await ctx.kube.get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${encodeURIComponent(mr.metadata.namespace ?? '')}/secrets/${encodeURIComponent(name)}`,
    );
    const keys = Object.keys(secret.data ?? {}).sort();
    return node('Secret', name, 'exists', true, [`keys=${keys.join(',')}`]);
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404)
      return node('Secret', name, 'NotFound', false, ['the connection Secret does not exist']);
    return errorNode('Secret', name, err);
  }
}
