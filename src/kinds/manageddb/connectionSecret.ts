// The connection Secret a ManagedDB's application mounts: what it holds and
// how the adapter asks the engine to write it.
import type { DBInstance } from '@aws-sdk/client-rds';
import { secretType } from '../../apis/core.ts';
import type { CompanionWrite } from '../../runtime/adapter.ts';
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
  const username = mr.spec.masterUsername;
  const dbname = mr.spec.dbName ?? '';
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

/** The write that puts `data` into the connection Secret (the engine applies it, owned by the ManagedDB). Pure. */
export function connectionSecretWrite(mr: ManagedDB, data: Record<string, string>): CompanionWrite {
  return {
    op: 'apply',
    type: secretType,
    object: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: connectionSecretName(mr) },
      type: 'Opaque',
      stringData: data,
    },
  };
}

/** The write that lets the connection Secret outlive its ManagedDB. Pure. */
export function connectionSecretRelease(mr: ManagedDB): CompanionWrite {
  return { op: 'disown', type: secretType, name: connectionSecretName(mr) };
}

/** Reads the connection Secret's data, decoded; undefined when there is none. Read-only. */
export async function readConnectionSecret(
  kube: KubeClient,
  mr: ManagedDB,
): Promise<Record<string, string> | undefined> {
  try {
    const s = await kube.get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${mr.metadata.namespace ?? ''}/secrets/${connectionSecretName(mr)}`,
    );
    return Object.fromEntries(
      Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
    throw err;
  }
}
