// The engine's companion writes (src/runtime/companions.ts) against the real apiserver: a claim
// (expect absent) is atomic, a write under a uid precondition never lands on a replacement, and a
// key an apply leaves out is removed, also from a claimed object.
import { beforeAll, describe, expect, it } from 'vitest';
import { secretType } from '../../src/apis/core.ts';
import type { ManagedObject } from '../../src/apis/managed.ts';
import type { ResourceType } from '../../src/apis/meta.ts';
import { writeCompanion } from '../../src/runtime/companions.ts';
import { OwnershipConflictError } from '../../src/runtime/errors.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { managedDbType } from '../../src/kinds/manageddb/api.ts';

const ownerType: ResourceType = managedDbType;

let admin: KubeClient;
let ns: string;
/**
 * A real owner object (a ManagedDB no controller serves): the stack runs Kubernetes' garbage
 * collector, which deletes a dependent whose owner does not exist.
 */
const owners = new Map<string, ManagedObject>();
async function owner(key: string): Promise<ManagedObject> {
  const known = owners.get(key);
  if (known !== undefined) return known;
  const made = await admin.create<ManagedObject>(resourcePath(managedDbType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'ManagedDB',
    metadata: { name: `owner-${key}` },
    spec: { engine: 'postgres', instanceClass: 'db.t3.micro', allocatedStorage: 20, masterUsername: 'app' },
  });
  owners.set(key, made);
  return made;
}
const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  type: 'Opaque',
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});
const read = async (name: string): Promise<{ uid: string; keys: string[]; owners: string[] }> => {
  const s = await admin.get<{
    metadata: { uid: string; ownerReferences?: { uid: string }[] };
    data?: Record<string, string>;
  }>(`/api/v1/namespaces/${ns}/secrets/${name}`);
  return {
    uid: s.metadata.uid,
    keys: Object.keys(s.data ?? {}).sort(),
    owners: (s.metadata.ownerReferences ?? []).map((r) => r.uid),
  };
};

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'companions');
});

describe('companion writes', () => {
  it('lets exactly one of many simultaneous claims on a name win; the others are a Conflict with the given message', async () => {
    for (const uid of ['u1', 'u2', 'u3', 'u4']) await owner(uid);
    const results = await Promise.allSettled(
      ['u1', 'u2', 'u3', 'u4'].map(async (uid) =>
        writeCompanion(admin, ownerType, await owner(uid), {
          op: 'apply',
          type: secretType,
          object: secret('claimed', { password: uid }),
          expect: { absent: true, taken: `taken (${uid})` },
        }),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected') {
        expect(r.reason).toBeInstanceOf(OwnershipConflictError);
        expect(String(r.reason)).toMatch(/taken \(u[1-4]\)/);
      }
    expect((await read('claimed')).owners).toHaveLength(1);
  });

  it('removes a key a later apply leaves out, from a claimed Secret too', async () => {
    await writeCompanion(admin, ownerType, await owner('k1'), {
      op: 'apply',
      type: secretType,
      object: secret('keys', { password: 'p', secretArn: 'arn' }),
      expect: { absent: true, taken: 'taken' },
    });
    const { uid } = await read('keys');
    await writeCompanion(admin, ownerType, await owner('k1'), {
      op: 'apply',
      type: secretType,
      object: secret('keys', { password: 'p' }),
      expect: { uid },
    });
    expect((await read('keys')).keys).toEqual(['password']);
  });

  it('never writes to a Secret that replaced the one read (uid precondition)', async () => {
    await writeCompanion(admin, ownerType, await owner('r1'), {
      op: 'apply',
      type: secretType,
      object: secret('replaced', { password: 'mine' }),
      expect: { absent: true, taken: 'taken' },
    });
    const { uid } = await read('replaced');
    await admin.delete(`/api/v1/namespaces/${ns}/secrets/replaced`);
    await admin.create(`/api/v1/namespaces/${ns}/secrets`, secret('replaced', { password: 'someone-elses' }));
    const err = await writeCompanion(admin, ownerType, await owner('r1'), {
      op: 'apply',
      type: secretType,
      object: secret('replaced', { password: 'mine' }),
      expect: { uid },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    // Refused as Invalid: the uid of the object is immutable (it is not the one the write names).
    expect((err as KubeApiError).statusCode).toBe(422);
    const s = await admin.get<{ data: Record<string, string> }>(`/api/v1/namespaces/${ns}/secrets/replaced`);
    expect(Buffer.from(s.data.password ?? '', 'base64').toString()).toBe('someone-elses');
  });
});
