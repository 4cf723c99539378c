// What a look at a ManagedDB's instance says, from the instance as RDS described it: its status,
// how Ready it is, and what differs from the spec on the instance itself. Pure.
import type { DBInstance } from '@aws-sdk/client-rds';
import { ownershipFromTags, type KindStatusOf, type OwnershipTags } from '../../apis/managed.ts';
import { hasUserTagChanges, tagMap, userTagChanges } from '../../providers/aws/tags.ts';
import type { DeltaEntry, ReadyState } from '../../runtime/adapter.ts';
import { Reason } from '../../runtime/conditions.ts';
import type { ManagedDB, ManagedDBStatus } from './api.ts';
import { connectionSecretName } from './identity.ts';
import { acceptedEngineVersion, modificationsFor } from './modifications.ts';
import { PasswordReason } from './passwords.ts';
import { lastRequestStatus, pendingRequest } from './requests.ts';
import { needsPasswordAfterRestore } from './restore.ts';

/** What can differ between an RDS instance and its ManagedDB. */
export type ManagedDBField =
  'instance' | 'ownership' | 'tags' | 'password' | 'request' | 'snapshot' | 'prune';

/** `status.acceptedEngineVersion`, or nothing when no version was accepted. Pure. */
export function acceptedVersionStatus(
  version: string | undefined,
): Pick<ManagedDBStatus, 'acceptedEngineVersion'> {
  return version !== undefined ? { acceptedEngineVersion: version } : {};
}

/** The object's status from its instance `db` (identifier `id`): state, endpoint, pending changes, last request. Pure. */
export function instanceStatus(mr: ManagedDB, db: DBInstance, id: string): KindStatusOf<ManagedDB> {
  const pending = Object.entries(db.PendingModifiedValues ?? {})
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  return {
    arn: db.DBInstanceArn,
    identifier: id,
    dbInstanceStatus: db.DBInstanceStatus ?? 'unknown',
    engineVersion: db.EngineVersion,
    ...(db.Endpoint?.Address !== undefined
      ? { endpoint: { address: db.Endpoint.Address, port: db.Endpoint.Port } }
      : {}),
    ...(db.MasterUserSecret?.SecretArn !== undefined
      ? { masterUserSecretArn: db.MasterUserSecret.SecretArn }
      : {}),
    ...(pending.length > 0 ? { pendingModifications: pending } : {}),
    ...lastRequestStatus(mr),
    ...acceptedVersionStatus(acceptedEngineVersion(mr)),
  };
}

/**
 * What differs on the instance itself, for an available instance the object manages: the
 * modifications to make, ownership tags (adoption) or user tags, the master password a restored
 * instance must be given, and a pending on-demand request (an operation). Pure.
 */
export function instanceDelta(
  mr: ManagedDB,
  db: DBInstance,
  ownership: OwnershipTags,
): DeltaEntry<ManagedDBField>[] {
  const delta: DeltaEntry<ManagedDBField>[] = [];
  for (const change of modificationsFor(mr, db).changes) delta.push({ field: 'instance', change });
  const tags = tagMap(db.TagList);
  if (ownershipFromTags(tags)?.uid !== ownership.uid)
    delta.push({ field: 'ownership', change: 'ownership tags' });
  else if (hasUserTagChanges(userTagChanges(mr.spec.tags, tags)))
    delta.push({ field: 'tags', change: 'tags' });
  if (needsPasswordAfterRestore(mr.spec.restoreFrom, tags, ownership.uid))
    delta.push({
      field: 'password',
      change: "master password of the restored instance set to the connection Secret's",
    });
  const request = pendingRequest(mr);
  if (request !== undefined)
    delta.push({ field: 'request', change: `requested ${request.action} ${request.id}`, operation: true });
  return delta;
}

/**
 * How Ready the object is: not while Skylift cannot know an adopted instance's password (with the
 * fix), else as available as RDS says. Pure.
 */
export function readyOf(
  mr: ManagedDB,
  state: string,
  available: boolean,
  passwordUnknown: boolean,
): ReadyState {
  if (passwordUnknown)
    return {
      ready: false,
      reason: PasswordReason.PasswordUnknown,
      message: `the instance was adopted (spec.externalName) and Skylift does not know its master password, so the connection Secret ${connectionSecretName(mr)} has none: set spec.password.managedByAWS to true (RDS then keeps the password in Secrets Manager and the Secret gets its secretArn)`,
      actionRequired: true,
    };
  if (available) return { ready: true, reason: Reason.Available };
  return {
    ready: false,
    reason: state === 'creating' ? Reason.Creating : Reason.Unavailable,
    message: `RDS status is ${state}`,
  };
}
