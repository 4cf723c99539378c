// MyIngressGroup objects and their members in integration tests: created as a cluster
// administrator and a team would, then waited for until the controllers have settled them.
import { randomBytes } from 'node:crypto';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress } from '../../src/kinds/myingress/api.ts';
import {
  myIngressGroupType,
  type MyIngressGroup,
  type MyIngressGroupSpec,
} from '../../src/kinds/myingress/group/api.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { readObject } from './kube.ts';

/** Creates a MyIngressGroup with a fresh name (`g-` and 6 hex digits) and `spec`; does not wait. */
export async function createMyIngressGroup(admin: KubeClient, spec: MyIngressGroupSpec): Promise<string> {
  const name = `g-${randomBytes(3).toString('hex')}`;
  await admin.create(resourcePath(myIngressGroupType, {}), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngressGroup',
    metadata: { name },
    spec,
  });
  return name;
}

/** The condition `type` of a MyIngress or MyIngressGroup, if it has one. */
export const conditionOf = (o: MyIngress | MyIngressGroup | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

/** Ready=True at the object's current generation. */
export const readyAtGeneration = (m: MyIngress | MyIngressGroup): boolean =>
  conditionOf(m, 'Ready')?.status === 'True' &&
  conditionOf(m, 'Ready')?.observedGeneration === m.metadata.generation;

/** Resolves with MyIngress `ns/name` once `ok` holds for it (30 s at most; `what` names the wait). */
export async function myIngressWhere(
  admin: KubeClient,
  ns: string,
  name: string,
  ok: (m: MyIngress) => boolean,
  what: string,
): Promise<MyIngress> {
  return waitFor(
    async () => {
      const m = await readObject<MyIngress>(admin, myIngressType, ns, name);
      return m !== undefined && ok(m) ? m : undefined;
    },
    { timeoutMs: 30_000, description: `${ns}/${name} ${what}` },
  );
}

/** Resolves once MyIngress `ns/name` no longer exists (30 s at most). */
export async function myIngressGone(admin: KubeClient, ns: string, name: string): Promise<void> {
  await waitFor(
    async () => ((await readObject(admin, myIngressType, ns, name)) === undefined ? true : undefined),
    { timeoutMs: 30_000, description: `${ns}/${name} gone` },
  );
}
