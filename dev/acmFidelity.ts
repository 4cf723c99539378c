// ACM behaviour the emulator lacks, as fault-proxy rules. moto's (5.2) ListCertificates summaries
// carry no subject alternative names at all (AWS's carry up to 100 in
// `SubjectAlternativeNameSummaries`, with `HasAdditionalSubjectAlternativeNames` beyond), and it
// lists every key type where AWS lists only RSA_2048 unless `Includes.keyTypes` names others.
// Its re-import (ImportCertificate with CertificateArn) takes tags and drops the certificate's
// tags, where AWS refuses tags on a re-import and keeps the certificate's; and its
// DeleteCertificate deletes a certificate a load balancer's listener serves, where AWS answers
// ResourceInUseException.
import { randomUUID } from 'node:crypto';
import {
  ACMClient,
  AddTagsToCertificateCommand,
  DescribeCertificateCommand,
  ImportCertificateCommand,
  ListCertificatesCommand,
  ListTagsForCertificateCommand,
  type ListCertificatesCommandInput,
} from '@aws-sdk/client-acm';
import {
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import type { FaultRule, ProxyAnswer } from './awsFaultProxy.ts';
import { errorResponse } from './awsOperation.ts';
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

/** An ImportCertificate JSON body as the SDK sends it (blobs in base64). */
interface WireImport {
  readonly CertificateArn?: string;
  readonly Certificate?: string;
  readonly PrivateKey?: string;
  readonly CertificateChain?: string;
  readonly Tags?: readonly { Key?: string; Value?: string }[];
}

/** The JSON body of a call, or undefined when it is not JSON. Pure. */
function jsonBody(body: string): unknown {
  try {
    return JSON.parse(body || '{}') as unknown;
  } catch {
    return undefined;
  }
}

const json = { 'content-type': 'application/x-amz-json-1.1' };

/**
 * ImportCertificate with a CertificateArn (a re-import) as AWS answers it: refused with tags ("You
 * cannot apply resource tags when reimporting a certificate", ACM user guide; answered here as
 * ValidationException), and keeping the certificate's tags (moto 5.2 drops them all). The rule
 * reads the tags, re-imports in the emulator and puts the tags back (all unrecorded), then answers
 * the ARN. A first import (no CertificateArn) does not match the rule.
 */
export function acmReimportAsAws(): FaultRule {
  return {
    service: 'acm',
    operation: 'ImportCertificate',
    // Only re-imports: a first import falls through to later rules (a test's faults) and the emulator.
    match: (call) => {
      const arn = (jsonBody(call.body) as WireImport | undefined)?.CertificateArn;
      return arn !== undefined && arn !== '';
    },
    fault: {
      kind: 'respond',
      respond: async (call, emulator): Promise<ProxyAnswer | undefined> => {
        const input = jsonBody(call.body) as WireImport | undefined;
        const arn = input?.CertificateArn;
        if (input === undefined || arn === undefined || arn === '') return undefined;
        if ((input.Tags ?? []).length > 0)
          return errorResponse(
            'acm',
            400,
            'ValidationException',
            'You cannot apply resource tags when reimporting a certificate',
            randomUUID(),
          );
        const acm = new ACMClient(awsClientConfig(emulator));
        try {
          let tags: { Key?: string | undefined; Value?: string | undefined }[];
          try {
            tags = (await acm.send(new ListTagsForCertificateCommand({ CertificateArn: arn }))).Tags ?? [];
          } catch {
            return undefined; // no such certificate: the emulator answers as AWS does
          }
          const blob = (b64: string | undefined) =>
            b64 !== undefined ? Buffer.from(b64, 'base64') : undefined;
          const cert = blob(input.Certificate);
          const key = blob(input.PrivateKey);
          const chain = blob(input.CertificateChain);
          if (cert === undefined || key === undefined) return undefined;
          try {
            await acm.send(
              new ImportCertificateCommand({
                CertificateArn: arn,
                Certificate: cert,
                PrivateKey: key,
                ...(chain !== undefined ? { CertificateChain: chain } : {}),
              }),
            );
          } catch (err) {
            const e = err as { name?: string; message?: string };
            return errorResponse('acm', 400, e.name ?? 'ValidationException', e.message ?? '', randomUUID());
          }
          const kept = tags
            .filter((t) => t.Key !== undefined)
            .map((t) => ({ Key: t.Key ?? '', Value: t.Value ?? '' }));
          if (kept.length > 0)
            await acm.send(new AddTagsToCertificateCommand({ CertificateArn: arn, Tags: kept }));
          return { status: 200, headers: json, body: JSON.stringify({ CertificateArn: arn }) };
        } finally {
          acm.destroy();
        }
      },
    },
  };
}

/**
 * DeleteCertificate as AWS answers it for a certificate an ELBv2 listener serves (its default
 * certificate or one of its listener certificates): ResourceInUseException, nothing deleted (moto
 * 5.2 deletes it). The rule reads every load balancer's listeners in the emulator (unrecorded);
 * a certificate none serves is forwarded.
 */
export function acmDeleteInUseAsAws(): FaultRule {
  return {
    service: 'acm',
    operation: 'DeleteCertificate',
    fault: {
      kind: 'respond',
      respond: async (call, emulator): Promise<ProxyAnswer | undefined> => {
        const arn = (jsonBody(call.body) as { CertificateArn?: string } | undefined)?.CertificateArn;
        if (arn === undefined) return undefined;
        const users = await listenersServing(emulator, arn);
        if (users.length === 0) return undefined;
        return errorResponse(
          'acm',
          400,
          'ResourceInUseException',
          `Certificate ${arn} in use by ${users.join(', ')}`,
          randomUUID(),
        );
      },
    },
  };
}

/** The ARNs of the emulator's listeners serving certificate `arn`. */
async function listenersServing(emulator: string, arn: string): Promise<string[]> {
  const elb = new ElasticLoadBalancingV2Client(awsClientConfig(emulator));
  try {
    const out: string[] = [];
    let marker: string | undefined;
    // Bounded by what the emulator holds: a page of 400 load balancers at a time.
    for (let page = 0; page < 100; page++) {
      const lbs = await elb.send(
        new DescribeLoadBalancersCommand({ ...(marker !== undefined ? { Marker: marker } : {}) }),
      );
      for (const lb of lbs.LoadBalancers ?? []) {
        const listeners = await elb.send(
          new DescribeListenersCommand({ LoadBalancerArn: lb.LoadBalancerArn }),
        );
        for (const l of listeners.Listeners ?? []) {
          const certs = new Set((l.Certificates ?? []).map((c) => c.CertificateArn));
          if (!certs.has(arn) && l.Protocol === 'HTTPS') {
            const extra = await elb.send(
              new DescribeListenerCertificatesCommand({ ListenerArn: l.ListenerArn }),
            );
            for (const c of extra.Certificates ?? []) certs.add(c.CertificateArn);
          }
          if (certs.has(arn) && l.ListenerArn !== undefined) out.push(l.ListenerArn);
        }
      }
      marker = lbs.NextMarker;
      if (marker === undefined || marker === '') break;
    }
    return out;
  } finally {
    elb.destroy();
  }
}
