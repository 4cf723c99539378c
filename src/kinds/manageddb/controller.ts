import { explainRefusals } from '../../providers/aws/refusals.ts';
import { sharedClient } from '../../runtime/adapter.ts';
import { manageddbRefusals } from './awsRefusals.ts';
import { Controller, type RunnableController } from '../../runtime/controller.ts';
import { controllerOptions } from '../controllerOptions.ts';
import type { KindPlumbing } from '../module.ts';
import { ManagedDBAdapter, type ManagedDBDetails, type ManagedDBField } from './adapter.ts';
import { managedDbType, type ManagedDB } from './api.ts';
import { defaultManagedDBSettings, type ManagedDBSettings } from './settings.ts';

/** The ManagedDB controller. */
export function managedDbController(
  s: KindPlumbing,
  settings: ManagedDBSettings = defaultManagedDBSettings,
): RunnableController {
  return new Controller<ManagedDB, ManagedDBDetails, ManagedDBField>({
    type: managedDbType,
    // RDS's terminal refusals name the spec field and a fix (awsRefusals.ts).
    connector: sharedClient(
      explainRefusals(
        new ManagedDBAdapter({ rds: s.aws.rds, kube: s.client, pollMs: settings.pollMs }),
        manageddbRefusals,
      ),
    ),
    ...controllerOptions(s),
    pollMs: settings.pollMs,
  });
}
