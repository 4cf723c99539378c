// The custom resource's own node: its readiness, age and conditions.
import type { Condition, ManagedObject } from '../apis/managed.ts';
import { formatAge, node, type TraceNode } from './tree.ts';

/** Condition types shown for every resource, whether present or not. */
const shownConditions = ['Ready', 'Synced'] as const;

/** One condition as a node: status, reason, message, age. A missing condition is Unknown and not ready. Pure. */
export function conditionNode(type: string, c: Condition | undefined, now: number): TraceNode {
  if (c === undefined) return node('Condition', type, 'Unknown', false, ['not reported yet']);
  const reason = c.message !== '' ? `${c.reason}: ${c.message}` : c.reason;
  return node('Condition', type, c.status, c.status === 'True', [
    reason,
    `age=${formatAge(c.lastTransitionTime, now)}`,
  ]);
}

/**
 * The root node for a custom resource: status Ready when its Ready
 * condition is True (else NotReady, or Deleting), its namespace (if it has one) and age, the
 * Ready and Synced conditions, then `aws` (the nodes a collector built). Pure.
 */
export function resourceNode(
  kind: string,
  obj: ManagedObject,
  now: number,
  aws: readonly TraceNode[],
): TraceNode {
  const conditions = shownConditions.map((t) =>
    conditionNode(
      t,
      obj.status?.conditions?.find((c) => c.type === t),
      now,
    ),
  );
  const ready = conditions[0]?.ready === true;
  const deleting = obj.metadata.deletionTimestamp !== undefined;
  const status = deleting ? 'Deleting' : ready ? 'Ready' : 'NotReady';
  const details = [
    // A cluster-scoped object (a MyIngressGroup) has none.
    ...(obj.metadata.namespace !== undefined ? [`namespace=${obj.metadata.namespace}`] : []),
    `age=${formatAge(obj.metadata.creationTimestamp, now)}`,
    ...(obj.metadata.generation !== undefined && obj.status?.observedGeneration !== obj.metadata.generation
      ? [`generation ${obj.metadata.generation} not observed yet`]
      : []),
  ];
  return node(kind, obj.metadata.name, status, ready && !deleting, details, [...conditions, ...aws]);
}
