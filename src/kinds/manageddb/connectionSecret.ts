// The connection Secret a ManagedDB's application mounts: what it holds and
// how the adapter asks the engine to write it.
import type { DBInstance } from '@aws-sdk/client-rds';
import { secretType } from '../../apis/core.ts';
import type { CompanionWrite } from '../../runtime/adapter.ts';
import type { KubeObject } from '../../apis/meta.ts';
import { OwnershipConflictError, TerminalError } from '../../runtime/errors.ts';
import { KubeApiError, type KubeClient } from '../../runtime/kube/client.ts';
import type { ManagedDB } from './api.ts';
import { connectionSecretName } from './identity.ts';

/** Default ports per engine. */
const defaultPort = { postgres: 5432, mysql: 3306, mariadb: 3306 } as const;

/** What the connection Secret should hold for an instance, keeping the password it has. Pure. */
export function connectionData(
  mr: ManagedDB,
  db: DBInstance,
  password: string | undefined,
): Record<string, string> {
  const host = db.Endpoint?.Address ?? '';
  const port = String(db.Endpoint?.Port ?? defaultPort[mr.spec.engine]);
  // What the instance has: a restored one keeps its snapshot's user and database.
  const username = db.MasterUsername ?? mr.spec.masterUsername;
  const dbname = db.DBName ?? mr.spec.dbName ?? '';
  const scheme = mr.spec.engine === 'postgres' ? 'postgresql' : 'mysql';
  return {
    host,
    port,
    username,
    dbname,
    engine: mr.spec.engine,
    ...(db.MasterUserSecret?.SecretArn !== undefined ? { secretArn: db.MasterUserSecret.SecretArn } : {}),
    ...(password !== undefined ? { password } : {}),
    uri:
      password !== undefined
        ? `${scheme}://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${host}:${port}/${dbname}`
        : `${scheme}://${encodeURIComponent(username)}@${host}:${port}/${dbname}`,
  };
}

/**
 * The annotation on a connection Secret whose password RDS has not been given yet: written with a
 * new password, before the ModifyDBInstance that sets it, and removed after; a reconcile that finds
 * it sets the instance's password to the Secret's (again), so a crash in between loses nothing.
 */
export const passwordPendingAnnotation = 'skylift.dev/password-pending';

/** What the Secret is as the adapter last read it: its uid, or absent (undefined). */
export type SecretSeen = { readonly uid: string } | undefined;

/**
 * The write that puts `data` into the connection Secret (the engine applies it, owned by the
 * ManagedDB), marked `pending` when its password is not yet the instance's. Atomic against the
 * Secret as `seen`: absent, it is claimed (created; another object's claim first makes this one a
 * Conflict, before any AWS call); read, only that very Secret is written. Pure.
 */
export function connectionSecretWrite(
  mr: ManagedDB,
  data: Record<string, string>,
  seen: SecretSeen,
  opts: { readonly pending?: boolean } = {},
): CompanionWrite {
  const name = connectionSecretName(mr);
  return {
    op: 'apply',
    type: secretType,
    expect:
      seen === undefined
        ? {
            absent: true,
            taken: `the connection Secret ${name} was just created by someone else (another ManagedDB naming it, or a person); Skylift will not take it over: set spec.writeConnectionSecretToRef.name to a Secret name that is not in use`,
          }
        : { uid: seen.uid },
    object: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: connectionSecretName(mr),
        ...(opts.pending === true ? { annotations: { [passwordPendingAnnotation]: 'true' } } : {}),
      },
      type: 'Opaque',
      // data, not stringData: server-side apply then owns each key, so a key left out (secretArn once
      // AWS no longer manages the password) is removed.
      data: Object.fromEntries(
        Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
      ),
    },
  };
}

/** The write that lets the connection Secret outlive its ManagedDB. Pure. */
export function connectionSecretRelease(mr: ManagedDB): CompanionWrite {
  return { op: 'disown', type: secretType, name: connectionSecretName(mr) };
}

/**
 * Reads the connection Secret's data, decoded; undefined when there is none.
 * Read-only. Throws OwnershipConflictError when a Secret of that name exists
 * but is not this ManagedDB's (made by hand, another object's, another type):
 * Skylift never takes over a Secret it did not create for this object.
 * Throws TerminalError when the name is not a valid Secret name.
 */
export async function readConnectionSecret(
  kube: KubeClient,
  mr: ManagedDB,
): Promise<Record<string, string> | undefined> {
  return (await readConnectionSecretState(kube, mr))?.data;
}

/** As {@link readConnectionSecret}, with whether its password is still to be given to RDS. Read-only. */
export async function readConnectionSecretState(
  kube: KubeClient,
  mr: ManagedDB,
): Promise<
  { readonly data: Record<string, string>; readonly pending: boolean; readonly uid: string } | undefined
> {
  const name = connectionSecretName(mr);
  if (name.length > 253 || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
    throw new TerminalError(
      `the connection Secret name ${JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name)} is not a valid Secret name (at most 253 lower-case letters, digits, '-' and '.'): set spec.writeConnectionSecretToRef.name to one`,
    );
  }
  let s: KubeObject & { type?: string; data?: Record<string, string> };
  try {
    s = await kube.get(`/api/v1/namespaces/${mr.metadata.namespace ?? ''}/secrets/${name}`);
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
    throw err;
  }
  const ours = (s.metadata.ownerReferences ?? []).some(
    (r) => r.controller === true && r.uid === mr.metadata.uid,
  );
  if (!ours || (s.type ?? 'Opaque') !== 'Opaque') {
    const owner = s.metadata.ownerReferences?.find((r) => r.controller === true);
    throw new OwnershipConflictError(
      `the connection Secret ${name} already exists and is ${owner !== undefined ? `${owner.kind} ${owner.name}'s` : 'not managed by Skylift'}${(s.type ?? 'Opaque') !== 'Opaque' ? ` (type ${s.type ?? ''})` : ''}; Skylift will not take it over: set spec.writeConnectionSecretToRef.name to a Secret name that is not in use`,
    );
  }
  return {
    data: Object.fromEntries(
      Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    ),
    pending: s.metadata.annotations?.[passwordPendingAnnotation] === 'true',
    uid: s.metadata.uid ?? '',
  };
}
