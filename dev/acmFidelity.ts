// ACM behaviour the emulator lacks, as a fault-proxy rule. moto's (5.2) ListCertificates summaries
// carry no subject alternative names at all (AWS's carry up to 100 in
// `SubjectAlternativeNameSummaries`, with `HasAdditionalSubjectAlternativeNames` beyond), and it
// lists every key type where AWS lists only RSA_2048 unless `Includes.keyTypes` names others.
import {
  ACMClient,
  DescribeCertificateCommand,
  ListCertificatesCommand,
  type ListCertificatesCommandInput,
} from '@aws-sdk/client-acm';
import type { FaultRule, ProxyAnswer } from './awsFaultProxy.ts';
import { awsClientConfig } from './emulator.ts';

/** How many subject alternative names AWS's ListCertificates summary carries at most. */
const summaryNames = 100;

/** A certificate's listing as AWS's ListCertificates writes it (JSON, dates in epoch seconds). */
export interface WireSummary {
  readonly CertificateArn: string;
  readonly DomainName?: string;
  readonly SubjectAlternativeNameSummaries: string[];
  readonly HasAdditionalSubjectAlternativeNames: boolean;
  readonly Status?: string;
  readonly Type?: string;
  readonly KeyAlgorithm?: string;
  readonly NotAfter?: number;
}

/**
 * A summary as AWS writes it from a certificate's description: its names (the first 100, and
 * whether there are more), status, type, key algorithm and expiry. Pure.
 */
export function summaryAsAws(c: {
  CertificateArn: string;
  DomainName?: string | undefined;
  SubjectAlternativeNames?: string[] | undefined;
  Status?: string | undefined;
  Type?: string | undefined;
  KeyAlgorithm?: string | undefined;
  NotAfter?: Date | undefined;
}): WireSummary {
  const names = c.SubjectAlternativeNames ?? [];
  return {
    CertificateArn: c.CertificateArn,
    ...(c.DomainName !== undefined ? { DomainName: c.DomainName } : {}),
    SubjectAlternativeNameSummaries: names.slice(0, summaryNames),
    HasAdditionalSubjectAlternativeNames: names.length > summaryNames,
    ...(c.Status !== undefined ? { Status: c.Status } : {}),
    ...(c.Type !== undefined ? { Type: c.Type } : {}),
    ...(c.KeyAlgorithm !== undefined ? { KeyAlgorithm: c.KeyAlgorithm } : {}),
    ...(c.NotAfter !== undefined ? { NotAfter: Math.floor(c.NotAfter.getTime() / 1000) } : {}),
  };
}

/**
 * The rule that answers ListCertificates as AWS would: the emulator's list for the same statuses,
 * only the key types `Includes.keyTypes` names (RSA_2048 when it names none), each summary with
 * its names read from the emulator (DescribeCertificate, unrecorded). One page: every certificate.
 */
export function acmListCertificatesAsAws(): FaultRule {
  return {
    service: 'acm',
    operation: 'ListCertificates',
    fault: {
      kind: 'respond',
      respond: async (call, emulator): Promise<ProxyAnswer | undefined> => {
        let input: ListCertificatesCommandInput;
        try {
          input = JSON.parse(call.body || '{}') as ListCertificatesCommandInput;
        } catch {
          return undefined;
        }
        const keyTypes: readonly string[] = input.Includes?.keyTypes ?? ['RSA_2048'];
        const acm = new ACMClient(awsClientConfig(emulator));
        try {
          const listed = await acm.send(
            new ListCertificatesCommand({
              ...(input.CertificateStatuses !== undefined
                ? { CertificateStatuses: input.CertificateStatuses }
                : {}),
            }),
          );
          const out: WireSummary[] = [];
          for (const s of listed.CertificateSummaryList ?? []) {
            if (s.CertificateArn === undefined || !keyTypes.includes(s.KeyAlgorithm ?? '')) continue;
            const d = await acm.send(new DescribeCertificateCommand({ CertificateArn: s.CertificateArn }));
            out.push(summaryAsAws({ ...d.Certificate, CertificateArn: s.CertificateArn }));
          }
          return {
            status: 200,
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: JSON.stringify({ CertificateSummaryList: out }),
          };
        } finally {
          acm.destroy();
        }
      },
    },
  };
}
