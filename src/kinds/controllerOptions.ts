import type { KindPlumbing } from './module.ts';
import type { AwsAccountSource } from '../tenancy/accounts.ts';

/**
 * The controller options every kind takes from the plumbing: client, clock,
 * logger, metrics, events and the controller settings. Pure.
 */
export function controllerOptions(p: KindPlumbing) {
  return {
    client: p.client,
    clock: p.clock,
    logger: p.logger,
    metrics: p.metrics,
    events: p.events,
    ...(p.tenants !== undefined ? { tenancyChanges: p.tenants } : {}),
    ...p.settings,
  } as const;
}

/** The plumbing's AWS accounts, or the operator's own clients for every object. Pure. */
export function accountsOf(p: KindPlumbing): AwsAccountSource {
  return (
    p.accounts ?? {
      own: p.aws,
      clientsFor: () => Promise.resolve(p.aws),
      accountOf: (aws) => Promise.resolve(aws.account),
      follow: () => undefined,
      destroy: () => undefined,
    }
  );
}
