// What a teams scenario needs before the operator starts, and after: each team account's zones
// (or subnets) made acting as its role, the namespaces with their policy labels, the TeamPolicies
// the operator honours (a label group of their own, --team-policy-selector), the namespace where
// the operator records that it serves teams, and the wait until every policy serves its
// namespaces. The spread without TeamPolicies (dns-namespaces) needs only the namespaces, and no
// TeamPolicy in the cluster. The plan itself is pure (bench/scenarios.ts, teamsPlan).
import { resourcePath } from '../../src/apis/meta.ts';
import { teamPolicyType, type TeamPolicy } from '../../src/apis/teampolicy.ts';
import { isKubeNotFound } from '../../src/runtime/errors.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { waitFor } from '../../dev/wait.ts';
import { applyTeamPolicy, deleteTeamPolicies, policySelector } from '../../dev/teamPolicies.ts';
import type { PlannedNamespace, TeamsPlan } from '../scenarios.ts';
import {
  assumedAccountClients,
  destroyAwsClients,
  ensureSubnets,
  ensureZones,
  type AccountClients,
} from './awsAccount.ts';
import { forEachLimit } from './concurrency.ts';

/** The leader-election id the teams scenarios' operator runs with; its teams record is `<id>-teams`. */
export const benchLeaderElectionId = 'skylift-bench';

/** A team account, ready: clients acting as its role (straight at moto) and its zones' IDs. */
export interface TeamAccountSetup {
  readonly account: string;
  readonly clients: AccountClients;
  /** The planned zones' IDs, in the plan's order. */
  readonly zoneIds: readonly string[];
}

/**
 * Makes each planned account's hosted zones (and, for MyIngress, tagged subnets) acting as the
 * account's role, as its platform team would; straight at the emulator, so the proxy counts none of
 * it. Destroy the clients with {@link destroyTeamAccounts}. Throws for an account without a role
 * (the operator's own: its zones are made with the emulator's credentials, as for `dns`).
 */
export async function prepareTeamAccounts(
  endpoint: string,
  plan: TeamsPlan,
  needsSubnets: boolean,
): Promise<TeamAccountSetup[]> {
  const out: TeamAccountSetup[] = [];
  try {
    for (const a of plan.accounts) {
      if (a.roleArn === undefined) throw new Error(`account ${a.id} has no role to act as`);
      const clients = await assumedAccountClients(endpoint, a.roleArn, `bench-setup-${a.id}`);
      let zoneIds: string[];
      try {
        zoneIds = await ensureZones(clients.aws, a.zoneNames);
        if (needsSubnets) await ensureSubnets(clients.aws);
      } catch (err) {
        destroyAwsClients(clients.aws);
        throw err;
      }
      out.push({ account: a.id, clients, zoneIds });
    }
    return out;
  } catch (err) {
    destroyTeamAccounts(out);
    throw err;
  }
}

/** Destroys the accounts' clients. */
export function destroyTeamAccounts(accounts: readonly TeamAccountSetup[]): void {
  for (const a of accounts) destroyAwsClients(a.clients.aws);
}

/** The `skylift run` flags of a teams scenario: its policies only, its teams record in `systemNamespace`. Pure. */
export function teamsOperatorFlags(group: string, systemNamespace: string): string[] {
  return [
    '--team-policy-selector',
    policySelector(group),
    '--leader-election-namespace',
    systemNamespace,
    '--leader-election-id',
    benchLeaderElectionId,
  ];
}

/** Creates the planned namespaces with their labels, `concurrency` at a time. */
export async function createNamespaces(
  admin: KubeClient,
  namespaces: readonly PlannedNamespace[],
  concurrency: number,
): Promise<void> {
  await forEachLimit(namespaces, concurrency, async (ns) => {
    await admin.create('/api/v1/namespaces', { metadata: { name: ns.name, labels: { ...ns.labels } } });
  });
}

/**
 * Creates `systemNamespace` (where the operator records that it serves teams) and the plan's
 * namespaces with their labels, `concurrency` at a time, then applies the TeamPolicies in label
 * group `group`.
 */
export async function applyTeams(
  admin: KubeClient,
  plan: TeamsPlan,
  group: string,
  systemNamespace: string,
  concurrency: number,
): Promise<void> {
  await admin.create('/api/v1/namespaces', { metadata: { name: systemNamespace } });
  await createNamespaces(admin, plan.namespaces, concurrency);
  for (const p of plan.policies) await applyTeamPolicy(admin, group, p.name, p.spec);
}

/**
 * Throws when any TeamPolicy exists: an operator run without `--team-policy-selector` honours every
 * policy in the cluster, and once it has seen one it refuses the namespaces none selects, so a
 * policy left behind by an earlier scenario would turn the spread without policies into tenancy.
 * Asks until the apiserver answers: right after the stack starts, the list can be refused while the
 * resource's storage initialises.
 */
export async function assertNoTeamPolicies(admin: KubeClient, timeoutMs = 30_000): Promise<void> {
  const list = await waitFor(() => admin.get<{ items: TeamPolicy[] }>(resourcePath(teamPolicyType)), {
    timeoutMs,
    intervalMs: 200,
    description: 'the list of TeamPolicies',
  });
  if (list.items.length > 0)
    throw new Error(
      `TeamPolicies exist (${list.items.map((p) => p.metadata.name).join(', ')}): the operator would serve under them`,
    );
}

/** Deletes the TeamPolicies of `group` (cluster-scoped: they must not outlive the scenario). */
export async function removeTeams(admin: KubeClient, group: string): Promise<void> {
  await deleteTeamPolicies(admin, group);
}

/**
 * Why the policies of `group` do not serve as planned yet, or undefined when each is Ready=True
 * with exactly its planned namespaces. Pure.
 */
export function policiesNotServing(plan: TeamsPlan, policies: readonly TeamPolicy[]): string | undefined {
  const byName = new Map(policies.map((p) => [p.metadata.name, p]));
  for (const want of plan.policies) {
    const p = byName.get(want.name);
    if (p === undefined) return `TeamPolicy ${want.name} does not exist`;
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True')
      return `TeamPolicy ${want.name} is not Ready (${ready?.reason ?? 'no condition'}: ${ready?.message ?? ''})`;
    const selected = p.status?.selectedNamespaces ?? [];
    const planned = [...want.namespaces].sort();
    if (selected.length !== planned.length || selected.some((n, i) => n !== planned[i]))
      return `TeamPolicy ${want.name} serves ${selected.length} namespaces, not the ${planned.length} planned`;
  }
  return undefined;
}

/**
 * Waits until every planned TeamPolicy is Ready serving exactly its namespaces and the operator's
 * teams record (ConfigMap `<id>-teams` in `systemNamespace`) exists: from then on an object is
 * judged by its policy at once, as in a cluster whose policies were applied long before. Throws at
 * the deadline with what was still missing.
 */
export async function waitPoliciesServing(
  admin: KubeClient,
  plan: TeamsPlan,
  group: string,
  systemNamespace: string,
  timeoutMs: number,
): Promise<void> {
  let missing = 'not checked yet';
  try {
    await waitFor(
      async () => {
        const list = await admin.get<{ items: TeamPolicy[] }>(resourcePath(teamPolicyType), {
          labelSelector: policySelector(group),
        });
        const notServing = policiesNotServing(plan, list.items);
        if (notServing !== undefined) {
          missing = notServing;
          return undefined;
        }
        try {
          await admin.get(`/api/v1/namespaces/${systemNamespace}/configmaps/${benchLeaderElectionId}-teams`);
        } catch (err) {
          if (!isKubeNotFound(err)) throw err;
          missing = `the teams record ${systemNamespace}/${benchLeaderElectionId}-teams does not exist`;
          return undefined;
        }
        return true;
      },
      { timeoutMs, intervalMs: 200, description: `${plan.policies.length} TeamPolicies to serve` },
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}: ${missing}`, { cause: err });
  }
}
