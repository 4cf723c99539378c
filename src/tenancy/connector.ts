// The connector every kind uses: the object's namespace → its TeamPolicy (or none) → the AWS
// clients of that identity and region → the kind's adapter for those clients, with the policy's
// guardrails checked before anything is done in AWS.
import type { ManagedObject } from '../apis/managed.ts';
import type { TeamPolicy } from '../apis/teampolicy.ts';
import type { AwsClients } from '../providers/aws/clients.ts';
import type { Connector, ExternalClient, ReconcileContext } from '../runtime/adapter.ts';
import { ForbiddenError } from '../runtime/errors.ts';
import type { AwsAccountSource } from './accounts.ts';
import type { TenantSource } from './directory.ts';

/** What a kind's guardrail check is given. */
export interface GuardContext<T extends ManagedObject, D, F extends string> {
  readonly policy: TeamPolicy;
  /** The kind's adapter for the object's account (for cached lookups: a zone's name, a subnet's tags). */
  readonly adapter: ExternalClient<T, D, F>;
  readonly aws: AwsClients;
  readonly ctx: ReconcileContext;
}

/**
 * A kind's guardrail check: resolves when the object asks only for what the policy allows, or
 * throws ForbiddenError (see {@link forbidden}). May read AWS through cached lookups; never writes.
 */
export type Guard<T extends ManagedObject, D, F extends string> = (
  mr: T,
  g: GuardContext<T, D, F>,
) => Promise<void>;

/** Options for {@link tenantConnector}. */
export interface TenantConnectorOptions<T extends ManagedObject, D, F extends string> {
  /** Absent: every object is served with the operator's own clients and no guardrails. */
  readonly tenants?: TenantSource | undefined;
  readonly accounts: AwsAccountSource;
  /**
   * Builds the kind's adapter for one set of clients; called once per set (memoized here), when the
   * first object served by that set connects. May load the kind's AWS code and SDK (`import()`);
   * a rejected build is tried again at the next connect.
   */
  adapterFor(aws: AwsClients): ExternalClient<T, D, F> | Promise<ExternalClient<T, D, F>>;
  readonly guard?: Guard<T, D, F>;
}

/** The ForbiddenError for a guardrail: names the policy, the field, what it allows, and a fix. Pure. */
export function forbidden(policy: TeamPolicy, field: string, detail: string, fix: string): ForbiddenError {
  return new ForbiddenError(`TeamPolicy ${policy.metadata.name} forbids ${field}: ${detail}; ${fix}`);
}

/** The connector of a kind under TeamPolicies. */
export function tenantConnector<T extends ManagedObject, D, F extends string>(
  o: TenantConnectorOptions<T, D, F>,
): Connector<T, D, F> {
  // Weak: the clients of a policy that went away are let go by AwsAccounts.retain, and with them
  // the adapter built for them.
  const adapters = new WeakMap<AwsClients, Promise<ExternalClient<T, D, F>>>();
  // The kind's adapter for one set of clients, told where its resources live (once per set).
  const adapterFor = (aws: AwsClients): Promise<ExternalClient<T, D, F>> => {
    let a = adapters.get(aws);
    if (a === undefined) {
      a = Promise.all([o.adapterFor(aws), o.accounts.accountOf(aws)]).then(([adapter, account]) =>
        bind(adapter, { location: { account, region: aws.region } }),
      );
      // A failed build, or lookup of the account, is tried again at the next connect.
      a.catch(() => adapters.delete(aws));
      adapters.set(aws, a);
    }
    return a;
  };
  return {
    async connect(mr) {
      if (o.tenants === undefined) return adapterFor(o.accounts.own);
      const namespace = mr.metadata.namespace ?? '';
      const tenancy = await o.tenants.tenancyOf(namespace);
      if (tenancy.kind === 'refused') throw new ForbiddenError(tenancy.message);
      if (tenancy.kind === 'unrestricted') return adapterFor(o.accounts.own);
      const policy = tenancy.policy;
      const aws = await o.accounts.clientsFor(policy);
      const adapter = await adapterFor(aws);
      const guard = o.guard;
      return bind(adapter, {
        authorize: async (obj, c) => {
          checkAdoption(obj, policy);
          if (guard !== undefined) await guard(obj, { policy, adapter, aws, ctx: c });
        },
      });
    },
  };
}

/** The TeamPolicy serving `namespace` as cached now, or undefined (none, refused, or not listed yet). */
export function currentPolicy(tenants: TenantSource | undefined, namespace: string): TeamPolicy | undefined {
  const t = tenants?.current(namespace);
  return t?.kind === 'policy' ? t.policy : undefined;
}

/** spec.externalName needs the policy's adoption permission. Throws ForbiddenError. */
export function checkAdoption(mr: ManagedObject, policy: TeamPolicy): void {
  const ext = mr.spec.externalName;
  if (ext === undefined || ext === '') return;
  if (policy.spec.guardrails?.adoption === 'Allowed') return;
  throw forbidden(
    policy,
    'spec.externalName',
    `adopting or observing an existing AWS resource (${ext}) is not allowed in namespace ${mr.metadata.namespace ?? ''} (spec.guardrails.adoption is not Allowed)`,
    'delete this object and create it without spec.externalName so Skylift creates its own resource, or ask the platform team to set spec.guardrails.adoption: Allowed',
  );
}

/** The adapter with `extra` (a location, an authorize check) on top; its other methods are its own. */
function bind<T extends ManagedObject, D, F extends string>(
  adapter: ExternalClient<T, D, F>,
  extra: Pick<ExternalClient<T, D, F>, 'authorize' | 'location'>,
): ExternalClient<T, D, F> {
  const prepare = adapter.prepareCreate?.bind(adapter);
  const release = adapter.release?.bind(adapter);
  const authorize = extra.authorize ?? adapter.authorize?.bind(adapter);
  const location = extra.location ?? adapter.location;
  return {
    observe: (mr, ctx) => adapter.observe(mr, ctx),
    create: (mr, ctx) => adapter.create(mr, ctx),
    update: (mr, obs, ctx) => adapter.update(mr, obs, ctx),
    delete: (mr, obs, ctx) => adapter.delete(mr, obs, ctx),
    ...(prepare !== undefined ? { prepareCreate: prepare } : {}),
    ...(release !== undefined ? { release } : {}),
    ...(authorize !== undefined ? { authorize } : {}),
    ...(location !== undefined ? { location } : {}),
  };
}
