import type { AwsClients } from '../../providers/aws/clients.ts';
import { currentPolicy, tenantConnector } from '../../tenancy/connector.ts';
import { checkManagedDb, databaseGuardrailsOf } from './guardrails.ts';
import type { TeamPolicy } from '../../apis/teampolicy.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import { accountsOf, controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import type { ManagedDBDetails, ManagedDBField } from './adapter.ts';
import { managedDbType, type ManagedDB } from './api.ts';
import { defaultManagedDBSettings, type ManagedDBSettings } from './settings.ts';
import { onDemandActions } from './requests.ts';

/** The ManagedDB controller. */
export function managedDbController(
  s: KindPlumbing,
  settings: ManagedDBSettings = defaultManagedDBSettings,
): RunnableController {
  return new Controller<ManagedDB, ManagedDBDetails, ManagedDBField>({
    type: managedDbType,
    connector: tenantConnector({
      tenants: s.tenants,
      accounts: accountsOf(s),
      // The adapter is imported when the first object needs it (adapterFor.ts loads the RDS SDK).
      adapterFor: async (aws: AwsClients) =>
        (await import('./adapterFor.ts')).managedDbAdapterFor(aws, {
          kube: s.client,
          pollMs: settings.pollMs,
          restoreNamespaces: (ns) =>
            databaseGuardrailsOfPolicy(currentPolicy(s.tenants, ns))?.restoreFrom?.namespaces ?? [],
        }),
      guard: (mr, g) => {
        checkManagedDb(g.policy, mr.spec);
        return Promise.resolve();
      },
    }),
    ...controllerOptions(s),
    pollMs: settings.pollMs,
    requestActions: onDemandActions,
  });
}

function databaseGuardrailsOfPolicy(policy: TeamPolicy | undefined) {
  return policy !== undefined ? databaseGuardrailsOf(policy) : undefined;
}
