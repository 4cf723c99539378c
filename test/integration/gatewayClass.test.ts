// The Gateway API front end's GatewayClass controller (src/gatewayapi/) on a real kube-apiserver
// with the real v1.6.3 CRDs. A control plane of its own: first without the Gateway API (the
// operator runs on and says the front end is off), then with it; and no other operator of the
// shared stack can accept the classes made here.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../dev/controlplane.ts';
import { emulatorEnv } from '../../dev/emulator.ts';
import { installCrds, installGatewayApiCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  gatewayClassType,
  skyliftGatewayControllerName,
  type GatewayClass,
} from '../../src/apis/gatewayApi.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { supportedFeaturesStatus } from '../../src/gatewayapi/features.ts';
import { GatewayApiFrontEnd } from '../../src/gatewayapi/frontEnd.ts';
import type { GatewayClassOutcome } from '../../src/gatewayapi/gatewayClassController.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { scratchDir } from '../support/scratch.ts';
import { spawnSkyliftRun } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';

let cp: ControlPlane;
let admin: KubeClient;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ dir: await scratchDir('gatewayclass') });
  cleanups.push(() => cp.stop());
  admin = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
  await installCrds(admin);
}, 120_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const path = (name?: string, subresource?: string): string =>
  resourcePath(gatewayClassType, { name, subresource });

function classBody(name: string, spec: Partial<GatewayClass['spec']> = {}): GatewayClass {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name },
    spec: { controllerName: skyliftGatewayControllerName, ...spec },
  };
}

/** Polls the class until `ok` holds for it (bounded). */
function classWhere(name: string, what: string, ok: (gc: GatewayClass) => boolean): Promise<GatewayClass> {
  return waitFor(
    async () => {
      const gc = await admin.get<GatewayClass>(path(name));
      return ok(gc) ? gc : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, description: `GatewayClass ${name} ${what}` },
  );
}

const accepted = (gc: GatewayClass) => gc.status?.conditions?.find((c) => c.type === 'Accepted');

describe('without the Gateway API CRDs', () => {
  it('the operator starts, serves its kinds and says the Gateway API front end is off', async () => {
    const op = spawnSkyliftRun({
      args: ['--leader-elect=false', '--leader-election-namespace', 'default', '--region', 'us-east-1'],
      kubeconfig: cp.kubeconfigPath('admin'),
      env: emulatorEnv(stackInfo().awsEndpoint),
    });
    cleanups.push(() => op.stop());
    await waitFor(() => (/controllers started/.test(op.output()) ? true : undefined), {
      timeoutMs: 30_000,
      description: `the operator to start its controllers; output:\n${op.output()}`,
    });
    expect(op.output()).toMatch(
      /Gateway API front end off: the cluster does not serve gateway\.networking\.k8s\.io\/v1 \(the Gateway API CRDs are not installed\)/,
    );
    expect(op.child.exitCode).toBeNull();
    await op.stop();
    expect(op.output()).not.toMatch(/gatewayclasses/);
  });
});

describe('with the Gateway API CRDs', () => {
  const counts = { statusWrites: new Map<string, number>(), gatewayClassRequests: 0 };
  const outcomes: { key: string; outcome: GatewayClassOutcome }[] = [];
  let frontEnd: GatewayApiFrontEnd;

  /** A front end with its own client, counting its requests to GatewayClasses. */
  async function startFrontEnd(mode: 'auto' | 'off'): Promise<GatewayApiFrontEnd> {
    const client = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
    client.observe((method, p) => {
      if (!p.startsWith(path())) return;
      counts.gatewayClassRequests++;
      const m = /^\/apis\/gateway\.networking\.k8s\.io\/v1\/gatewayclasses\/([^/?]+)\/status/.exec(p);
      if (method === 'PATCH' && m?.[1] !== undefined)
        counts.statusWrites.set(m[1], (counts.statusWrites.get(m[1]) ?? 0) + 1);
    });
    const fe = new GatewayApiFrontEnd({
      client,
      clock: realClock,
      logger: pino({ level: 'silent' }),
      metrics: new Metrics(),
      mode,
      onReconciled: (key, outcome) => outcomes.push({ key, outcome }),
    });
    cleanups.push(() => fe.stop(5000));
    await fe.start();
    return fe;
  }
  const writes = (name: string): number => counts.statusWrites.get(name) ?? 0;
  /**
   * Waits until, since outcome number `from`, the controller wrote `name` and then saw its own
   * write (an `unchanged` pass after the `written` one): the apiserver shows a write before the
   * writer's own count of it.
   */
  const wroteAndSettled = (name: string, from: number): Promise<true> =>
    waitFor(
      () => {
        const mine = outcomes.slice(from).filter((o) => o.key === name);
        const w = mine.findIndex((o) => o.outcome === 'written');
        return w >= 0 && mine.slice(w + 1).some((o) => o.outcome === 'unchanged') ? true : undefined;
      },
      { timeoutMs: 10_000, description: `the controller to write ${name} and see its write` },
    );

  beforeAll(async () => {
    await installGatewayApiCrds(admin);
    // Another controller's class, there before Skylift's controller starts.
    await admin.create(path(), classBody('other', { controllerName: 'example.net/gateway-controller' }));
    frontEnd = await startFrontEnd('auto');
  }, 60_000);

  it('is on once discovery finds GatewayClasses', () => {
    expect(frontEnd.state).toBe('on');
    expect(frontEnd.synced).toBe(true);
  });

  it('accepts Skylift’s class at its generation and lists the supported features', async () => {
    await admin.create(path(), classBody('skylift'));
    const gc = await classWhere('skylift', 'Accepted', (g) => accepted(g)?.status === 'True');
    expect(accepted(gc)).toMatchObject({
      status: 'True',
      reason: 'Accepted',
      observedGeneration: gc.metadata.generation,
    });
    expect(gc.status?.supportedFeatures).toEqual([
      { name: 'GRPCRoute' },
      { name: 'Gateway' },
      { name: 'HTTPRoute' },
      { name: 'ReferenceGrant' },
    ]);
    expect(gc.status?.supportedFeatures).toEqual(supportedFeaturesStatus());
    // One write; its own watch event after it wrote nothing more.
    await wroteAndSettled('skylift', 0);
    expect(writes('skylift')).toBe(1);
    expect(outcomes.filter((o) => o.key === 'skylift').map((o) => o.outcome)).toEqual([
      'written',
      'unchanged',
    ]);
    // Written by field manager skylift, on the status subresource.
    const full = await admin.get<{
      metadata: { managedFields?: { manager: string; subresource?: string }[] };
    }>(`${path('skylift')}?showManagedFields=true`);
    expect(full.metadata.managedFields).toEqual(
      expect.arrayContaining([expect.objectContaining({ manager: 'skylift', subresource: 'status' })]),
    );
  });

  it('never writes another controller’s class', async () => {
    const before = await admin.get<GatewayClass>(path('other'));
    // Skylift's class was written since: the controller has seen both.
    await classWhere('skylift', 'Accepted', (g) => accepted(g)?.status === 'True');
    const after = await admin.get<GatewayClass>(path('other'));
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(accepted(after)).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(writes('other')).toBe(0);
    expect(outcomes.map((o) => o.key)).not.toContain('other');
  });

  it('refuses a class with parametersRef: Accepted=False, InvalidParameters', async () => {
    await admin.create(
      path(),
      classBody('with-params', {
        parametersRef: { group: '', kind: 'ConfigMap', name: 'p', namespace: 'default' },
      }),
    );
    const gc = await classWhere('with-params', 'refused', (g) => accepted(g)?.status === 'False');
    expect(accepted(gc)).toMatchObject({
      reason: 'InvalidParameters',
      observedGeneration: gc.metadata.generation,
    });
    expect(accepted(gc)?.message).toMatch(
      /Skylift takes no parameters: spec\.parametersRef \(core\/ConfigMap default\/p\)/,
    );
    // Without it, the class is accepted.
    await admin.patch(path('with-params'), [{ op: 'remove', path: '/spec/parametersRef' }], 'json');
    const fixed = await classWhere('with-params', 'Accepted', (g) => accepted(g)?.status === 'True');
    expect(accepted(fixed)?.observedGeneration).toBe(fixed.metadata.generation);
    expect(fixed.metadata.generation).toBe(2);
  });

  it('follows a generation bump with observedGeneration', async () => {
    const seen = outcomes.length;
    const changed = await admin.patch<GatewayClass>(
      path('skylift'),
      { spec: { description: 'ALBs for everyone' } },
      'merge',
    );
    const generation = changed.metadata.generation ?? 0;
    expect(generation).toBeGreaterThan(1);
    const gc = await classWhere(
      'skylift',
      `at generation ${generation}`,
      (g) => accepted(g)?.observedGeneration === generation,
    );
    expect(accepted(gc)).toMatchObject({ status: 'True', reason: 'Accepted' });
    await wroteAndSettled('skylift', seen);
    expect(writes('skylift')).toBe(2);
  });

  it('writes nothing when nothing changed: a metadata change, a restart (relist)', async () => {
    const settled = new Map(counts.statusWrites);
    const seen = outcomes.length;
    await admin.patch(
      path('skylift'),
      { metadata: { annotations: { 'example.com/touched': 'yes' } } },
      'merge',
    );
    await waitFor(() => (outcomes.slice(seen).some((o) => o.key === 'skylift') ? true : undefined), {
      timeoutMs: 10_000,
      description: 'the controller to look at the annotated class',
    });
    expect(outcomes.slice(seen).map((o) => o.outcome)).toEqual(['unchanged']);
    // A second front end (a restarted operator) lists every class: none is written.
    const seenBefore = outcomes.length;
    const second = await startFrontEnd('auto');
    await waitFor(
      () => (outcomes.slice(seenBefore).filter((o) => o.key !== 'other').length >= 2 ? true : undefined),
      { timeoutMs: 10_000, description: 'the restarted controller to look at both of its classes' },
    );
    await second.stop(5000);
    expect(outcomes.slice(seenBefore).map((o) => o.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(counts.statusWrites).toEqual(settled);
  });

  it('puts its status back when another writer changes it', async () => {
    const before = writes('skylift');
    const seen = outcomes.length;
    const gc = await admin.get<GatewayClass>(path('skylift'));
    await admin.patch(
      path('skylift', 'status'),
      {
        status: {
          conditions: (gc.status?.conditions ?? []).map((c) =>
            c.type === 'Accepted' ? { ...c, status: 'Unknown', reason: 'Pending', message: 'forged' } : c,
          ),
        },
      },
      'merge',
    );
    await classWhere('skylift', 'Accepted again', (g) => accepted(g)?.status === 'True');
    await wroteAndSettled('skylift', seen);
    expect(writes('skylift')).toBe(before + 1);
  });

  it('is off, saying why, for an identity that may not list GatewayClasses (the operator starts)', async () => {
    let logged = '';
    const logger = pino({ level: 'info' }, { write: (line: string) => (logged += line) });
    const fe = new GatewayApiFrontEnd({
      client: new KubeClient(loadKubeconfig(cp.kubeconfigPath('operator'))),
      clock: realClock,
      logger,
      metrics: new Metrics(),
      mode: 'auto',
    });
    cleanups.push(() => fe.stop(5000));
    await fe.start();
    expect(fe.state).toBe('off');
    expect(fe.synced).toBe(true);
    expect(logged).toMatch(
      /Gateway API front end off: the operator may not list gatewayclasses\.gateway\.networking\.k8s\.io \(RBAC/,
    );
  });

  it('with --gateway-api=off starts nothing and never asks for GatewayClasses', async () => {
    const requests = counts.gatewayClassRequests;
    const off = await startFrontEnd('off');
    expect(off.state).toBe('off');
    expect(off.synced).toBe(true);
    expect(off.gatewayClasses).toBeUndefined();
    expect(counts.gatewayClassRequests).toBe(requests);
  });
});
