// ACM certificates by host name: which certificates of an account and region a load balancer can
// serve for a host, how one is chosen among several, and a list of them shared, for a while, by
// every lookup in the account (one ListCertificates per period, not one per object).
import type {
  CertificateSummary,
  DescribeCertificateCommandOutput,
  KeyAlgorithm,
  ListCertificatesCommandInput,
  ListCertificatesCommandOutput,
} from '@aws-sdk/client-acm';
import type { Clock } from '../../runtime/clock.ts';

/**
 * The key algorithms an Application Load Balancer accepts from ACM (RSA 2048, 3072 and 4096 bits,
 * and ECDSA). ListCertificates lists only RSA_2048 certificates unless `Includes.keyTypes` names
 * others, so the list asks for these explicitly.
 */
export const albKeyTypes: readonly KeyAlgorithm[] = [
  'RSA_2048',
  'RSA_3072',
  'RSA_4096',
  'EC_prime256v1',
  'EC_secp384r1',
  'EC_secp521r1',
];

/** An ISSUED certificate as the lookup sees it: its names (domain name first) and when it expires. */
export interface AcmCertificate {
  readonly arn: string;
  /** The domain name and every subject alternative name, lower case, without repeats. */
  readonly names: readonly string[];
  /** NotAfter in ms since the epoch (undefined: not reported; sorts as the earliest). */
  readonly notAfter: number | undefined;
}

/** How a certificate name covers a host. */
export type Coverage = 'exact' | 'wildcard';

/**
 * How certificate name `name` covers `host` (both compared case-insensitively): `exact` when they
 * are the same name (a wildcard host such as `*.example.com` is covered only by that same wildcard
 * name); `wildcard` when `name` is `*.<rest>` and `host` is one label followed by `.<rest>` — a
 * wildcard covers exactly one label, never the bare `<rest>` nor `a.b.<rest>`, as in TLS. Else
 * undefined. Pure.
 */
export function coverage(name: string, host: string): Coverage | undefined {
  const n = name.toLowerCase();
  const h = host.toLowerCase();
  if (n === h) return 'exact';
  if (!n.startsWith('*.') || h.startsWith('*.')) return undefined;
  const dot = h.indexOf('.');
  if (dot <= 0) return undefined;
  return h.slice(dot + 1) === n.slice(2) ? 'wildcard' : undefined;
}

/** The certificate chosen for a host, and how it covers it. */
export interface ChosenCertificate {
  readonly arn: string;
  readonly coverage: Coverage;
}

/**
 * The certificate among `certificates` that serves `host`, chosen deterministically: a certificate
 * naming the host exactly before one covering it by wildcard; among those, the one expiring last
 * (latest NotAfter: a renewed or reissued certificate replaces the old one); then the smallest ARN.
 * Undefined when none covers the host. Pure.
 */
export function chooseCertificate(
  host: string,
  certificates: readonly AcmCertificate[],
): ChosenCertificate | undefined {
  let best: { c: AcmCertificate; coverage: Coverage } | undefined;
  for (const c of certificates) {
    const cov = bestCoverage(c.names, host);
    if (cov === undefined) continue;
    if (best === undefined || better({ c, coverage: cov }, best)) best = { c, coverage: cov };
  }
  return best !== undefined ? { arn: best.c.arn, coverage: best.coverage } : undefined;
}

function bestCoverage(names: readonly string[], host: string): Coverage | undefined {
  let found: Coverage | undefined;
  for (const n of names) {
    const c = coverage(n, host);
    if (c === 'exact') return c;
    if (c !== undefined) found = c;
  }
  return found;
}

function better(
  a: { c: AcmCertificate; coverage: Coverage },
  b: { c: AcmCertificate; coverage: Coverage },
): boolean {
  if (a.coverage !== b.coverage) return a.coverage === 'exact';
  const an = a.c.notAfter ?? Number.NEGATIVE_INFINITY;
  const bn = b.c.notAfter ?? Number.NEGATIVE_INFINITY;
  if (an !== bn) return an > bn;
  return a.c.arn < b.c.arn;
}

/** The two ACM reads the list is made of, each one call (the caller gives it a deadline and error type). */
export interface AcmReads {
  readonly list: (input: ListCertificatesCommandInput) => Promise<ListCertificatesCommandOutput>;
  readonly describe: (arn: string) => Promise<DescribeCertificateCommandOutput>;
}

/** Pages of ListCertificates read at most (1,000 certificates each). */
const maxPages = 50;

/**
 * Every ISSUED certificate of the account and region with a key an Application Load Balancer
 * accepts ({@link albKeyTypes}), with its names: ListCertificates, every page; DescribeCertificate
 * only for a certificate whose summary does not list all its subject alternative names
 * (`HasAdditionalSubjectAlternativeNames`, or no `SubjectAlternativeNameSummaries` at all, as an
 * emulator may answer). Read-only; a failed call rejects with what `reads` throws.
 */
export async function listIssuedCertificates(reads: AcmReads): Promise<AcmCertificate[]> {
  const out: AcmCertificate[] = [];
  let next: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const answer = await reads.list({
      CertificateStatuses: ['ISSUED'],
      Includes: { keyTypes: [...albKeyTypes] },
      MaxItems: 1000,
      ...(next !== undefined ? { NextToken: next } : {}),
    });
    for (const s of answer.CertificateSummaryList ?? []) {
      const c = await certificateOf(s, reads);
      if (c !== undefined) out.push(c);
    }
    next = answer.NextToken;
    if (next === undefined || next === '') break;
  }
  return out;
}

async function certificateOf(s: CertificateSummary, reads: AcmReads): Promise<AcmCertificate | undefined> {
  const arn = s.CertificateArn;
  if (arn === undefined) return undefined;
  let names = [s.DomainName ?? '', ...(s.SubjectAlternativeNameSummaries ?? [])];
  let notAfter = s.NotAfter;
  if (s.HasAdditionalSubjectAlternativeNames === true || s.SubjectAlternativeNameSummaries === undefined) {
    const d = (await reads.describe(arn)).Certificate;
    if (d?.Status !== undefined && d.Status !== 'ISSUED') return undefined;
    names = [d?.DomainName ?? s.DomainName ?? '', ...(d?.SubjectAlternativeNames ?? [])];
    notAfter = d?.NotAfter ?? notAfter;
  }
  return {
    arn,
    names: [...new Set(names.filter((n) => n !== '').map((n) => n.toLowerCase()))],
    notAfter: notAfter?.getTime(),
  };
}

/** What a {@link CertificateList} is built with. */
export interface CertificateListOptions {
  readonly clock: Clock;
  /** How long a list read from ACM answers lookups before the next lookup reads it again. */
  readonly maxAgeMs: number;
}

/**
 * The ISSUED certificates of one account and region, read once and shared by every lookup for
 * `maxAgeMs` (the engine's clock): a lookup older than that reads the list again, and lookups that
 * arrive while it is being read wait for that same read — so any number of objects looking at once
 * cost one ListCertificates (a page per 1,000 certificates). A failed read is not kept: its
 * waiters reject, the next lookup reads again. Not tied to an identity: each read goes through the
 * reads of the lookup that started it.
 */
export class CertificateList {
  private readonly o: CertificateListOptions;
  private kept: { at: number; certificates: readonly AcmCertificate[] } | undefined;
  private reading: Promise<readonly AcmCertificate[]> | undefined;

  constructor(options: CertificateListOptions) {
    this.o = options;
  }

  /** The certificates, from the list kept if younger than maxAgeMs, else read through `reads`. */
  certificates(reads: () => Promise<AcmReads>): Promise<readonly AcmCertificate[]> {
    const now = this.o.clock.now();
    if (this.kept !== undefined && now - this.kept.at < this.o.maxAgeMs)
      return Promise.resolve(this.kept.certificates);
    if (this.reading !== undefined) return this.reading;
    const started = now;
    const reading = (async () => listIssuedCertificates(await reads()))();
    this.reading = reading;
    reading.then(
      (certificates) => {
        this.kept = { at: started, certificates };
        this.reading = undefined;
      },
      () => {
        this.reading = undefined;
      },
    );
    return reading;
  }

  /** The certificate chosen for `host` ({@link chooseCertificate}) from {@link certificates}. */
  async forHost(host: string, reads: () => Promise<AcmReads>): Promise<ChosenCertificate | undefined> {
    return chooseCertificate(host, await this.certificates(reads));
  }
}
