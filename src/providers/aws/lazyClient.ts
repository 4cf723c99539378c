// SDK clients made on first use, so that a large SDK package is loaded only by a process that calls
// its service (issue 16: @aws-sdk/client-ec2 alone costs ~48 MiB of RSS; EC2, ACM and STS serve
// only some MyIngresses and TeamPolicies).
import type { AdoptableClient, AwsClientConfig, AwsClients } from './clients.ts';

/**
 * Builds one client of a service from a set's configuration (region, endpoint, credentials,
 * attempts, deadlines); typically imports the service's SDK package first, with `import()`.
 */
export type ClientBuilder<C extends AdoptableClient> = (config: AwsClientConfig) => Promise<C>;

/** The error of asking a destroyed set of AWS clients for a `service` client. Pure. */
export function destroyedError(account: string, region: string, service: string): Error {
  return new Error(`the AWS clients of ${account}/${region} were destroyed: no ${service} client`);
}

/**
 * One service's SDK client per set of AWS clients, made on first use.
 *
 * Contract of {@link LazyClient.of}: the first call for a set builds the client from the set's
 * `config` and adopts it into the set (the service's rate limiter, call metrics and tracing; it is
 * destroyed with the set); every later call answers that same client, and concurrent first calls
 * share one build. A failed build is not kept: the next call builds again. Once the set is
 * destroyed, a build still under way ends by destroying its client and rejecting (see
 * {@link AwsClients.adopt}), and so does every later call.
 */
export class LazyClient<C extends AdoptableClient> {
  /** The service's signing name, under which the client is adopted (its rate limiter and metrics label). */
  readonly service: string;
  private readonly build: ClientBuilder<C>;
  private readonly made = new WeakMap<AwsClients, Promise<C>>();

  constructor(service: string, build: ClientBuilder<C>) {
    this.service = service;
    this.build = build;
  }

  /** The client of `aws`'s set, built on the first call (see the class's contract). */
  of(aws: AwsClients): Promise<C> {
    if (aws.destroyed) return Promise.reject(destroyedError(aws.account, aws.region, this.service));
    const made = this.made.get(aws);
    if (made !== undefined) return made;
    const client = this.build(aws.config).then((c) => aws.adopt(this.service, c));
    this.made.set(aws, client);
    client.catch(() => {
      if (this.made.get(aws) === client) this.made.delete(aws);
    });
    return client;
  }
}
