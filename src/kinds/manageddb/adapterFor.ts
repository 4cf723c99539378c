// The ManagedDB adapter for one set of AWS clients. Loaded with `import()` at the kind's first
// object (controller.ts), so that the RDS SDK, which the adapter imports, is loaded only by a
// process that serves a ManagedDB (issue 16).
import type { AwsClients } from '../../providers/aws/clients.ts';
import type { ExternalClient } from '../../runtime/adapter.ts';
import { explainErrors } from '../../runtime/explainErrors.ts';
import { explainRefusal } from '../refusals.ts';
import {
  ManagedDBAdapter,
  type ManagedDBAdapterDeps,
  type ManagedDBDetails,
  type ManagedDBField,
} from './adapter.ts';
import type { ManagedDB } from './api.ts';
import { manageddbRefusals } from './awsRefusals.ts';

/**
 * Builds the adapter for `aws` with the rest of its `deps`. Loads the RDS client of `aws` (and its
 * SDK, the first time); starts nothing. RDS's terminal refusals name the spec field and a fix
 * (awsRefusals.ts).
 */
export async function managedDbAdapterFor(
  aws: AwsClients,
  deps: Omit<ManagedDBAdapterDeps, 'rds'>,
): Promise<ExternalClient<ManagedDB, ManagedDBDetails, ManagedDBField>> {
  return explainErrors(new ManagedDBAdapter({ ...deps, rds: await aws.rds() }), (err, mr) =>
    explainRefusal(err, manageddbRefusals, mr.spec),
  );
}
