// The engine's writes to a managed object itself: its status (a minimal merge
// patch through the status subresource), its finalizer and create-pending
// marker (compare-and-swap on resourceVersion), and its annotations. Each
// returns the object as it now stands, with the new resourceVersion.
import {
  createPendingAnnotation,
  finalizerName,
  type ManagedObject,
  type ManagedStatus,
} from '../apis/managed.ts';
import { resourcePath, type ResourceType } from '../apis/meta.ts';
import { createHash } from 'node:crypto';
import type { KubeClient } from './kube/client.ts';
import { mergePatchForAny } from './mergePatch.ts';

/** True when the object carries Skylift's finalizer. Pure. */
export function hasFinalizer(obj: ManagedObject): boolean {
  return obj.metadata.finalizers?.includes(finalizerName) === true;
}

/** When a create was marked pending (ms since the epoch; 0 for an unreadable mark), or undefined. Pure. */
export function pendingCreate(obj: ManagedObject): number | undefined {
  const v = obj.metadata.annotations?.[createPendingAnnotation];
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? 0 : t;
}

/**
 * A digest of a status as the apiserver holds it: key order, and keys that are undefined or null
 * (absent once merge-patched), make no difference. Pure.
 */
export function statusDigest(status: object | undefined): string {
  return createHash('sha256')
    .update(canonicalJson(status ?? {}))
    .digest('base64');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x ?? null)).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined && o[k] !== null)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Writes to one kind's objects. Every method may block on the apiserver and throws its errors (409 on a lost race). */
export class ObjectWrites<T extends ManagedObject> {
  private readonly client: KubeClient;
  private readonly type: ResourceType;
  /**
   * The last status written to each object (by uid), see {@link wroteStatus}: the digest of the
   * status sent, and of the status the apiserver answered it stored (fields its schema does not
   * know are pruned).
   */
  private readonly statuses = new Map<string, { readonly sent: string; stored?: string }>();

  constructor(client: KubeClient, type: ResourceType) {
    this.client = client;
    this.type = type;
  }

  /**
   * True when `obj`'s status is the one these writes last wrote to it: a status that changed to
   * anything else was written by someone else (a user with status rights, another process).
   */
  wroteStatus(obj: T): boolean {
    const last = this.statuses.get(uidOf(obj));
    if (last === undefined) return false;
    const now = statusDigest(obj.status);
    return now === last.sent || now === last.stored;
  }

  /** Forgets what was written to `obj` (it is gone, or let go). */
  forget(obj: T): void {
    this.statuses.delete(uidOf(obj));
  }

  /**
   * Patches the status to `status` when it differs from `written` (what the apiserver holds; default
   * `obj.status`), or from `alsoWritten` (what it may hold instead: a status written after `obj` was
   * read); writes nothing (and returns the object) when it differs from neither.
   */
  async status(
    obj: T,
    status: ManagedStatus,
    written: ManagedStatus = obj.status ?? {},
    alsoWritten?: ManagedStatus,
  ): Promise<T> {
    const patch = mergePatchForAny(alsoWritten !== undefined ? [written, alsoWritten] : [written], status);
    if (patch === undefined) return obj;
    // Recorded before the write, as its watch event may come before its answer; the status stored
    // is recorded from the answer.
    const last: { readonly sent: string; stored?: string } = { sent: statusDigest(status) };
    this.statuses.set(uidOf(obj), last);
    const updated = await this.client.patch<T>(this.path(obj, 'status'), { status: patch }, 'merge');
    last.stored = statusDigest(updated.status);
    return {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: updated.metadata.resourceVersion },
      status: structuredClone(status),
    };
  }

  /** Adds or removes the finalizer, as a compare-and-swap: a concurrent change gives 409. */
  async finalizer(obj: T, present: boolean): Promise<T> {
    const current = obj.metadata.finalizers ?? [];
    const next = present
      ? [...current.filter((f) => f !== finalizerName), finalizerName]
      : current.filter((f) => f !== finalizerName);
    const updated = await this.client.patch<T>(
      this.path(obj),
      { metadata: { finalizers: next, resourceVersion: obj.metadata.resourceVersion } },
      'merge',
    );
    return {
      ...obj,
      metadata: { ...obj.metadata, finalizers: next, resourceVersion: updated.metadata.resourceVersion },
    };
  }

  /** Adds the finalizer (if missing) and the create-pending marker (`at`) in one compare-and-swap patch. */
  async markCreatePending(obj: T, at: number): Promise<T> {
    const marker = new Date(at).toISOString();
    const finalizers = [...(obj.metadata.finalizers ?? []).filter((f) => f !== finalizerName), finalizerName];
    const updated = await this.client.patch<T>(
      this.path(obj),
      {
        metadata: {
          finalizers,
          annotations: { [createPendingAnnotation]: marker },
          resourceVersion: obj.metadata.resourceVersion,
        },
      },
      'merge',
    );
    return {
      ...obj,
      metadata: {
        ...obj.metadata,
        finalizers,
        annotations: { ...(obj.metadata.annotations ?? {}), [createPendingAnnotation]: marker },
        resourceVersion: updated.metadata.resourceVersion,
      },
    };
  }

  /** Sets an annotation, or removes it (`undefined`). */
  async annotation(obj: T, key: string, value: string | undefined): Promise<T> {
    const updated = await this.client.patch<T>(
      this.path(obj),
      { metadata: { annotations: { [key]: value ?? null } } },
      'merge',
    );
    const annotations = Object.fromEntries(
      Object.entries({ ...(obj.metadata.annotations ?? {}), [key]: value }).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    );
    return {
      ...obj,
      metadata: { ...obj.metadata, annotations, resourceVersion: updated.metadata.resourceVersion },
    };
  }

  private path(obj: T, subresource?: string): string {
    return resourcePath(this.type, {
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      ...(subresource !== undefined ? { subresource } : {}),
    });
  }
}

function uidOf(obj: ManagedObject): string {
  return obj.metadata.uid ?? `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}
