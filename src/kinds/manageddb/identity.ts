// How a ManagedDB names its DB instance and its connection Secret.
import { createHash } from 'node:crypto';
import type { ManagedDB } from './api.ts';

/** The deterministic DB instance identifier of a ManagedDB (≤ 63, letters, digits, single hyphens). Pure. */
export function dbIdentifier(namespace: string, name: string, uid: string): string {
  const slug = `${namespace}-${name}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `sky-${slug.slice(0, 50).replace(/-+$/, '')}-${createHash('sha256').update(uid).digest('hex').slice(0, 6)}`;
}

/** The DB instance a ManagedDB stands for: `spec.externalName` when adopting, else its deterministic identifier. Pure. */
export function instanceIdentifier(mr: ManagedDB): string {
  const ext = mr.spec.externalName;
  return ext !== undefined && ext !== ''
    ? ext
    : dbIdentifier(mr.metadata.namespace ?? '', mr.metadata.name, mr.metadata.uid ?? '');
}

/** The connection Secret's name. Pure. */
export function connectionSecretName(mr: ManagedDB): string {
  return mr.spec.writeConnectionSecretToRef?.name ?? `${mr.metadata.name}-connection`;
}
