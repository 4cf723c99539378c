// ACM for MyIngress: the reads through the account's ACM client (providers/acm/client.ts: made,
// and its SDK loaded, by the first call that needs it: a certificate allowed by tag, or
// spec.listeners[].certificateHosts) and the list of ISSUED certificates each account and region
// shares between every object's host lookups.
import { awsCall } from '../../providers/aws/calls.ts';
import { ScopeKey } from '../../providers/aws/accountScope.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { acmOf } from '../../providers/acm/client.ts';
import { acmErrorTable } from '../../providers/acm/errors.ts';
import { CertificateList, type AcmReads, type ChosenCertificate } from '../../providers/acm/certificates.ts';
import type { Clock } from '../../runtime/clock.ts';

/** The two reads the certificate list makes, through `aws`'s ACM client, each a typed awsCall. */
function acmReads(aws: AwsClients): AcmReads {
  return {
    list: (input) =>
      awsCall('list ACM certificates for spec.listeners[].certificateHosts', acmErrorTable, async () => {
        const client = await acmOf(aws);
        const { ListCertificatesCommand } = await import('@aws-sdk/client-acm');
        return client.send(new ListCertificatesCommand(input));
      }),
    describe: (arn) =>
      awsCall(`describe ACM certificate ${arn}`, acmErrorTable, async () => {
        const client = await acmOf(aws);
        const { DescribeCertificateCommand } = await import('@aws-sdk/client-acm');
        return client.send(new DescribeCertificateCommand({ CertificateArn: arn }));
      }),
  };
}

const certificateListKey = new ScopeKey<CertificateList>('myingress/acm-certificates');

/** Finds the certificate ACM has for a host in one account and region (see CertificateList.forHost). */
export interface HostCertificates {
  /** The region the certificates are in (the load balancer's). */
  readonly region: string;
  /** The certificate chosen for `host`, or undefined when no ISSUED certificate covers it. */
  forHost(host: string): Promise<ChosenCertificate | undefined>;
}

/**
 * Host lookups for `aws`'s account and region, through the list that account and region shares
 * (made by the first lookup's `clock` and `maxAgeMs`; kept in `aws.scope`). Loads nothing until
 * the first lookup.
 */
export function hostCertificates(aws: AwsClients, clock: Clock, maxAgeMs: number): HostCertificates {
  return {
    region: aws.region,
    forHost: (host) => {
      const list = aws.scope.memo(certificateListKey, () => new CertificateList({ clock, maxAgeMs }));
      return list.forHost(host, () => Promise.resolve(acmReads(aws)));
    },
  };
}
