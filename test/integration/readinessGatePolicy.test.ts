// The target-health gate's MutatingAdmissionPolicy against the real apiserver: a Pod created in a
// labelled namespace, or labelled itself, gets the readiness gate (beside its own) and the label the
// operator's Pod cache selects on; any other Pod gets neither. Installed as `make dev` and the node tests do
// (dev/installCrds.ts), from the manifests the chart renders (tools/generatedFiles.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import { installTargetHealthGate } from '../../dev/installCrds.ts';
import { targetHealthGate, type PodLike } from '../../src/kinds/myingress/readinessGate.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';

const admin = kubeClient();
const policyName = 'skylift-test-target-health-gate';
let gated: string;
let plain: string;

const pod = (name: string, gates: string[] = [], labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(labels !== undefined ? { labels } : {}) },
  spec: {
    containers: [{ name: 'c', image: 'example.invalid/none:1' }],
    ...(gates.length > 0 ? { readinessGates: gates.map((conditionType) => ({ conditionType })) } : {}),
  },
});

async function create(ns: string, body: ReturnType<typeof pod>): Promise<PodLike> {
  return admin.create<PodLike>(`/api/v1/namespaces/${ns}/pods`, body);
}

beforeAll(async () => {
  await installTargetHealthGate(admin, policyName);
  gated = await newNamespace(admin, 'gate-on');
  await admin.patch(
    `/api/v1/namespaces/${gated}`,
    { metadata: { labels: { [targetHealthGate.label]: targetHealthGate.enabled } } },
    'merge',
  );
  plain = await newNamespace(admin, 'gate-off');
  // The apiserver loads a new policy asynchronously: probe Pods until one is gated.
  let n = 0;
  await waitFor(
    async () => {
      const p = await create(gated, pod(`probe-${n++}`));
      return (p.spec?.readinessGates ?? []).length > 0 ? true : undefined;
    },
    { timeoutMs: 30_000, description: 'the policy gates new Pods', intervalMs: 200 },
  );
});

afterAll(async () => {
  for (const path of [
    `mutatingadmissionpolicybindings/${policyName}`,
    `mutatingadmissionpolicybindings/${policyName}-pods`,
    `mutatingadmissionpolicies/${policyName}`,
  ])
    await admin.delete(`/apis/admissionregistration.k8s.io/v1/${path}`).catch(() => undefined);
});

describe('the target-health gate policy', () => {
  it('gates a Pod of a labelled namespace and labels it for the operator’s cache', async () => {
    const p = await create(gated, pod('web-1', [], { app: 'web' }));
    expect(p.spec?.readinessGates).toEqual([{ conditionType: targetHealthGate.conditionType }]);
    expect(p.metadata.labels).toEqual({ app: 'web', [targetHealthGate.label]: targetHealthGate.enabled });
  });

  it('keeps the Pod’s own readiness gates, and adds labels to a Pod that has none', async () => {
    const p = await create(gated, pod('web-2', ['example.com/other']));
    expect(p.spec?.readinessGates).toEqual([
      { conditionType: 'example.com/other' },
      { conditionType: targetHealthGate.conditionType },
    ]);
    expect(p.metadata.labels).toEqual({ [targetHealthGate.label]: targetHealthGate.enabled });
  });

  it('does not gate a Pod twice', async () => {
    const p = await create(gated, pod('web-3', [targetHealthGate.conditionType], { app: 'web' }));
    expect(p.spec?.readinessGates).toEqual([{ conditionType: targetHealthGate.conditionType }]);
    expect(p.metadata.labels).toEqual({ app: 'web' });
  });

  it('gates a Pod that asks for it with its own label, in a namespace that does not', async () => {
    const p = await create(
      plain,
      pod('api-1', [], { app: 'api', [targetHealthGate.label]: targetHealthGate.enabled }),
    );
    expect(p.spec?.readinessGates).toEqual([{ conditionType: targetHealthGate.conditionType }]);
  });

  it('leaves other Pods of other namespaces alone', async () => {
    const p = await create(plain, pod('web-1', [], { app: 'web' }));
    expect(p.spec?.readinessGates).toBeUndefined();
    expect(p.metadata.labels).toEqual({ app: 'web' });
  });
});
