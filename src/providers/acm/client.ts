// The ACM client of a set of AWS clients, made (and its SDK loaded) by the first call that needs
// it: MyIngress's certificate lookups and guardrails, and the imports of TLS Secrets.
import type { ACMClient } from '@aws-sdk/client-acm';
import type { AwsClients } from '../aws/clients.ts';
import { LazyClient } from '../aws/lazyClient.ts';

/** ACM's signing name: its rate limiter and the `service` label of its call metrics. */
export const acmService = 'acm';

/** ACM: one client per set of AWS clients, made on first use. */
const acmClient = new LazyClient<ACMClient>(acmService, async (config) => {
  const { ACMClient } = await import('@aws-sdk/client-acm');
  return new ACMClient({ ...config });
});

/**
 * ACM without SDK retries, for ImportCertificate of a new certificate: it has no idempotency
 * token, so a call whose answer was lost is not re-sent blindly (it would import a second
 * certificate); the caller looks by tag first. Shares the `acm` rate limiter.
 */
const acmImportClient = new LazyClient<ACMClient>(acmService, async (config) => {
  const { ACMClient } = await import('@aws-sdk/client-acm');
  return new ACMClient({ ...config, maxAttempts: 1 });
});

/** The ACM client of `aws`, made (and its SDK loaded) by the first call. */
export function acmOf(aws: AwsClients): Promise<ACMClient> {
  return acmClient.of(aws);
}

/** The ACM client of `aws` without SDK retries (new imports only), made by the first call. */
export function acmImportOf(aws: AwsClients): Promise<ACMClient> {
  return acmImportClient.of(aws);
}
