// Leader election against the real apiserver, for the case a graceful stop
// cannot cover: the leader dies without releasing the Lease (SIGKILL, or a
// force-deleted Pod whose ServiceAccount token no longer authenticates). The
// standby must take over one lease duration after the last renewal — it
// watches the Lease, with only the RBAC the chart grants (the Lease by name).
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { LeaderElector, type LeaseTiming } from '../../src/runtime/leaderElection.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo } from '../support/stack.ts';

const admin = kubeClient();
const leaseName = 'skylift-leader';
let ns: string;
const aborts: AbortController[] = [];

interface LeaseView {
  spec: {
    holderIdentity?: string | null;
    renewTime?: string;
    acquireTime?: string;
    leaseTransitions?: number;
  };
}

beforeAll(async () => {
  ns = await newNamespace(admin, 'leader-kill');
  // The chart's Role: create any Lease; get, update, list and watch only the named one.
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    metadata: { name: 'leader-election' },
    rules: [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [leaseName],
        verbs: ['get', 'update', 'list', 'watch'],
      },
    ],
  });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    metadata: { name: 'leader-election' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leader-election' },
    subjects: [{ kind: 'User', name: stackInfo().operatorUser }],
  });
});

afterAll(() => {
  for (const a of aborts) a.abort();
});

function elector(identity: string, timing: LeaseTiming): LeaderElector {
  return new LeaderElector({
    client: kubeClient('operator'),
    clock: realClock,
    logger: pino({ level: 'silent' }),
    namespace: ns,
    name: leaseName,
    identity,
    timing,
  });
}

describe('leader election when the leader dies without releasing', () => {
  it('hands over one lease duration after the last renewal, not at the standby’s next poll', async () => {
    // The dead leader's lease: 2 s. The standby polls only every 20 s, so a takeover within
    // a few seconds can only come from watching the Lease.
    const a = elector('replica-a', { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300 });
    const b = elector('replica-b', { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 20_000 });
    const aLife = new AbortController();
    const bLife = new AbortController();
    aborts.push(aLife, bLife);
    expect(await a.acquire(aLife.signal)).toBe(true);
    const holding = a.holdUntilLost(aLife.signal);
    const bAcquired = b.acquire(bLife.signal);
    // Let the standby see a few renewals, then "kill" the leader: it stops renewing and releases nothing.
    const lease = (): Promise<LeaseView> =>
      admin.get<LeaseView>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${leaseName}`);
    const firstRenew = (await lease()).spec.renewTime;
    await waitFor(async () => ((await lease()).spec.renewTime !== firstRenew ? true : undefined), {
      timeoutMs: 10_000,
      description: 'the leader renewing',
      intervalMs: 50,
    });
    aLife.abort();
    expect(await holding).toBe('stopped');
    const dead = await lease();
    expect(dead.spec.holderIdentity).toBe('replica-a');

    expect(await bAcquired).toBe(true);
    const taken = await lease();
    expect(taken.spec.holderIdentity).toBe('replica-b');
    expect(taken.spec.leaseTransitions).toBe((dead.spec.leaseTransitions ?? 0) + 1);
    const gapMs = Date.parse(taken.spec.acquireTime ?? '') - Date.parse(dead.spec.renewTime ?? '');
    // Not before the dead leader's lease ran out; well before the standby's next poll (20 s).
    expect(gapMs).toBeGreaterThanOrEqual(2000);
    expect(gapMs).toBeLessThan(3000);
  });
});
