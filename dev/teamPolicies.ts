// TeamPolicies in tests: made with a group label, so only the operators and directories of the
// test that made them honour them (vitest.config.ts gives every other operator a selector that
// matches none), and deleted with their group when the test ends.
import { pino } from 'pino';
import { resourcePath } from '../src/apis/meta.ts';
import { teamPolicyType, type TeamPolicy, type TeamPolicySpec } from '../src/apis/teampolicy.ts';
import { realClock } from '../src/runtime/clock.ts';
import { isKubeNotFound } from '../src/runtime/errors.ts';
import type { KubeClient } from '../src/runtime/kube/client.ts';
import { TenantDirectory, type TeamsMarker } from '../src/tenancy/directory.ts';

/** The label a test's TeamPolicies carry. */
export const testPolicyLabel = 'skylift.test/policies';

/** The label selector of a test's group of TeamPolicies. Pure. */
export function policySelector(group: string): string {
  return `${testPolicyLabel}=${group}`;
}

/** Creates or replaces TeamPolicy `name` of `group` with `spec` (server-side apply). */
export async function applyTeamPolicy(
  client: KubeClient,
  group: string,
  name: string,
  spec: TeamPolicySpec,
): Promise<TeamPolicy> {
  return client.patch<TeamPolicy>(
    resourcePath(teamPolicyType, { name }),
    {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'TeamPolicy',
      metadata: { name, labels: { [testPolicyLabel]: group } },
      spec,
    },
    'apply',
    { fieldManager: 'skylift-test', force: true },
  );
}

/** Deletes TeamPolicy `name`; nothing if it is gone. */
export async function deleteTeamPolicy(client: KubeClient, name: string): Promise<void> {
  await client.delete(resourcePath(teamPolicyType, { name })).catch((err: unknown) => {
    if (!isKubeNotFound(err)) throw err;
  });
}

/** Deletes every TeamPolicy of `group`. */
export async function deleteTeamPolicies(client: KubeClient, group: string): Promise<void> {
  const list = await client.get<{ items: TeamPolicy[] }>(resourcePath(teamPolicyType), {
    labelSelector: policySelector(group),
  });
  for (const p of list.items) await deleteTeamPolicy(client, p.metadata.name);
}

/** Reads TeamPolicy `name`. */
export function readTeamPolicy(client: KubeClient, name: string): Promise<TeamPolicy> {
  return client.get<TeamPolicy>(resourcePath(teamPolicyType, { name }));
}

/** Where the directories of `group` record that they serve teams (in namespace default). Pure. */
export function teamsMarkerFor(group: string): TeamsMarker {
  return { namespace: 'default', name: `skylift-teams-${group}` };
}

/**
 * A started TenantDirectory honouring `group`'s policies (stop it when done), recording that it
 * serves teams in {@link teamsMarkerFor}(group).
 */
export async function startTenants(client: KubeClient, group: string): Promise<TenantDirectory> {
  const tenants = new TenantDirectory({
    client,
    clock: realClock,
    logger: pino({ level: process.env.SKYLIFT_TEST_LOG_LEVEL ?? 'silent' }),
    policySelector: policySelector(group),
    teamsMarker: teamsMarkerFor(group),
  });
  await tenants.start();
  return tenants;
}
