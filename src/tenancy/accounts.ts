// The AWS clients an object is reconciled with, chosen by its namespace's tenancy: the operator's
// own (no policy, or a policy without an identity), another region's, or an assumed role's.
import type { TeamPolicy } from '../apis/teampolicy.ts';
import { createAwsClients, type AwsClientOptions, type AwsClients } from '../providers/aws/clients.ts';
import { ForbiddenError } from '../runtime/errors.ts';

/** Where a tenancy's AWS clients come from. */
export interface AwsAccountSource {
  /** The operator's own clients (its identity, its --region). */
  readonly own: AwsClients;
  /**
   * The clients for objects of `namespace` under `policy` (undefined: no policy). Clients are
   * cached per identity and region, so their rate limiters, caches and batchers are shared by
   * every object reconciled with them. May block on STS; throws a typed error (RequeueAfter with
   * reason AssumeRoleFailed when the role cannot be assumed).
   */
  clientsFor(policy: TeamPolicy | undefined, namespace: string): Promise<AwsClients>;
  /** Destroys every client made here (not `own`). */
  destroy(): void;
}

/** Options for {@link AwsAccounts}. */
export interface AwsAccountsOptions {
  readonly own: AwsClients;
  /** How to build clients for another region (the operator's own options, another region). */
  readonly clientOptions: Omit<AwsClientOptions, 'region'>;
}

/** Clients per region for policies that name only a region; assumed roles come with STS. */
export class AwsAccounts implements AwsAccountSource {
  readonly own: AwsClients;
  private readonly o: AwsAccountsOptions;
  private readonly byRegion = new Map<string, AwsClients>();

  constructor(o: AwsAccountsOptions) {
    this.o = o;
    this.own = o.own;
  }

  clientsFor(policy: TeamPolicy | undefined, _namespace: string): Promise<AwsClients> {
    const identity = policy?.spec.aws;
    if (identity?.roleArn !== undefined)
      return Promise.reject(
        new ForbiddenError(
          `TeamPolicy ${policy?.metadata.name ?? ''} names spec.aws.roleArn, which this build of Skylift cannot assume yet: remove spec.aws.roleArn to use the operator's own identity`,
        ),
      );
    const region = identity?.region;
    if (region === undefined || region === this.own.region) return Promise.resolve(this.own);
    let clients = this.byRegion.get(region);
    if (clients === undefined) {
      clients = createAwsClients({ ...this.o.clientOptions, region });
      this.byRegion.set(region, clients);
    }
    return Promise.resolve(clients);
  }

  destroy(): void {
    for (const c of this.byRegion.values()) c.destroy();
    this.byRegion.clear();
  }
}
