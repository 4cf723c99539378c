// The ManagedDB API in the real apiserver: admission.
import { beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { managedDbType } from '../../src/kinds/manageddb/api.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';

let client: KubeClient;
let ns: string;
let n = 0;
beforeAll(async () => {
  client = kubeClient();
  await installCrds(client);
  ns = await newNamespace(client, 'mdbapi');
});

async function tryCreate(spec: Record<string, unknown>, name = `d${++n}`): Promise<string | undefined> {
  try {
    // Strict field validation, as kubectl uses: unknown fields are errors, not silently pruned.
    await client.create(
      resourcePath(managedDbType, { namespace: ns }),
      { apiVersion: 'aws.skylift.dev/v1alpha1', kind: 'ManagedDB', metadata: { name }, spec },
      { fieldValidation: 'Strict' },
    );
    return undefined;
  } catch (err) {
    if (err instanceof KubeApiError && (err.statusCode === 422 || err.statusCode === 400)) return err.message;
    throw err;
  }
}

const base = {
  engine: 'postgres',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  masterUsername: 'app',
  dbName: 'app',
};

describe('ManagedDB admission', () => {
  it('accepts a minimal instance and applies safe defaults', async () => {
    expect(await tryCreate(base, 'defaults')).toBeUndefined();
    const got = await client.get<{ spec: Record<string, unknown> }>(
      resourcePath(managedDbType, { namespace: ns, name: 'defaults' }),
    );
    expect(got.spec).toMatchObject({
      publiclyAccessible: false,
      storageEncrypted: true,
      multiAZ: false,
      deletionPolicy: 'Delete',
      managementPolicy: 'Manage',
    });
  });

  it.each([
    {
      reason: 'an unknown engine',
      spec: { ...base, engine: 'oracle' },
      message: 'Unsupported value: "oracle"',
    },
    {
      reason: 'too little storage',
      spec: { ...base, allocatedStorage: 5 },
      message: 'spec.allocatedStorage',
    },
    {
      reason: 'a malformed class',
      spec: { ...base, instanceClass: 'm5.large' },
      message: 'spec.instanceClass',
    },
    {
      reason: 'max storage below storage',
      spec: { ...base, maxAllocatedStorage: 20 },
      message: 'maxAllocatedStorage must exceed allocatedStorage',
    },
    {
      reason: 'io1 without iops',
      spec: { ...base, storageType: 'io1' },
      message: 'storageType io1 and io2 need iops',
    },
    {
      reason: 'a bad backup window',
      spec: { ...base, backup: { window: '3am' } },
      message: 'spec.backup.window',
    },
    {
      reason: 'a bad user name',
      spec: { ...base, masterUsername: '1admin' },
      message: 'spec.masterUsername',
    },
    {
      reason: 'a plain-text password field',
      spec: { ...base, password: { value: 'hunter2' } },
      message: 'unknown field "spec.password.value"',
    },
  ])('rejects $reason', async ({ spec, message }) => {
    const err = await tryCreate(spec);
    expect(err).toBeDefined();
    expect(err).toContain(message);
  });

  it('keeps create-only fields immutable', async () => {
    expect(await tryCreate(base, 'fixed')).toBeUndefined();
    const path = resourcePath(managedDbType, { namespace: ns, name: 'fixed' });
    const change = (spec: Record<string, unknown>): Promise<string> =>
      client.patch(path, { spec }, 'merge').then(
        () => 'accepted',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
    expect(await change({ engine: 'mysql' })).toContain('engine is immutable');
    expect(await change({ dbName: 'other' })).toContain('dbName is immutable');
    expect(await change({ masterUsername: 'root' })).toContain('masterUsername is immutable');
    expect(await change({ storageEncrypted: false })).toContain('storageEncrypted is immutable');
    expect(await change({ instanceClass: 'db.t3.small' })).toBe('accepted');
  });

  // Issue 14, items 2 and 12: these were admitted after create and then ignored or orphaned the instance.
  it('refuses setting, changing or removing externalName, restoreFrom and subnetGroupName after create', async () => {
    const change = async (name: string, spec: Record<string, unknown>): Promise<string> =>
      client.patch(resourcePath(managedDbType, { namespace: ns, name }), { spec }, 'merge').then(
        () => 'accepted',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
    expect(await tryCreate(base, 'plain')).toBeUndefined();
    expect(await change('plain', { externalName: 'someone-elses-db' })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
    expect(await change('plain', { restoreFrom: { snapshotIdentifier: 'snap-1' } })).toContain(
      'spec.restoreFrom cannot be set, changed or removed after create',
    );
    expect(await change('plain', { subnetGroupName: 'other-group' })).toContain(
      'spec.subnetGroupName cannot be set, changed or removed after create',
    );
    expect(
      await tryCreate({ ...base, externalName: 'legacy-db', subnetGroupName: 'g1' }, 'adopting'),
    ).toBeUndefined();
    expect(await change('adopting', { externalName: 'other-db' })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
    expect(await change('adopting', { externalName: null })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
    expect(await change('adopting', { subnetGroupName: null })).toContain(
      'spec.subnetGroupName cannot be set, changed or removed after create',
    );
    expect(await change('adopting', { instanceClass: 'db.t3.small' })).toBe('accepted');
  });
});
