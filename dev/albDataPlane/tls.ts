// TLS for the ALB data plane's HTTPS listeners: which certificate answers a client's server name
// (SNI), where each certificate's private key comes from, and the SecureContexts served.
//
// ACM never hands out private keys. A certificate imported into ACM (ImportCertificate) had its
// key in the import request: the rule `importCertificateRule` records it as the call passes
// through the AWS fault proxy. A certificate ACM issued (RequestCertificate) has a key only AWS
// holds: the data plane serves a stand-in for the same names, signed by a CA of its own
// (`LocalCa`) that tests trust instead of a public one.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { promisify } from 'node:util';
import { coverage } from '../../src/providers/acm/certificates.ts';
import type { AwsCall } from '../awsOperation.ts';
import type { FaultRule } from '../awsFaultProxy.ts';

const run = promisify(execFile);

/** A certificate with its private key and the chain served after it, PEM. */
export interface KeyMaterial {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  /** Intermediate certificates, PEM (empty when none). */
  readonly chainPem: string;
}

/** The options of a TLS context serving `m`: the certificate, then its chain, and the key. Pure. */
export function secureContextOptions(m: KeyMaterial): { cert: string; key: string } {
  return {
    cert: m.chainPem !== '' ? `${m.certificatePem.trimEnd()}\n${m.chainPem}` : m.certificatePem,
    key: m.privateKeyPem,
  };
}

/** A certificate a listener names, with the names it covers (domain name first, lower case). */
export interface NamedCertificate {
  readonly arn: string;
  readonly names: readonly string[];
}

/**
 * The ARN of the certificate an ALB serves to a client that asked for `serverName` (SNI) on a
 * listener whose certificates are `certificates` (the default one included) and whose default is
 * `defaultArn`: a certificate with a name equal to the server name before one covering it by
 * wildcard (`coverage`: `*.b.example` covers exactly one label), the default certificate first
 * among equals, then the listener's order; the default when none covers it or the client sent no
 * server name. Undefined only when the listener has no default. Pure.
 */
export function certificateForServerName(
  serverName: string | undefined,
  defaultArn: string | undefined,
  certificates: readonly NamedCertificate[],
): string | undefined {
  if (serverName === undefined || serverName === '') return defaultArn;
  const ordered = [
    ...certificates.filter((c) => c.arn === defaultArn),
    ...certificates.filter((c) => c.arn !== defaultArn),
  ];
  let wildcard: string | undefined;
  for (const c of ordered) {
    const covers = c.names.map((n) => coverage(n, serverName));
    if (covers.includes('exact')) return c.arn;
    if (wildcard === undefined && covers.includes('wildcard')) wildcard = c.arn;
  }
  return wildcard ?? defaultArn;
}

/** An ImportCertificate call as recorded: the ARN ACM answered and what was imported under it. */
export interface RecordedImport {
  readonly arn: string;
  readonly material: KeyMaterial;
}

/**
 * What an ImportCertificate call imported, from its request (JSON; `Certificate`, `PrivateKey`
 * and `CertificateChain` base64 as the SDK sends blobs) and ACM's answer (JSON with the
 * `CertificateArn`, the new one or the re-imported one). Undefined when either is not JSON, the
 * answer names no ARN (an error), or certificate or key is missing. Pure.
 */
export function parseImportCertificate(
  requestBody: string,
  responseBody: string,
): RecordedImport | undefined {
  const request = jsonObject(requestBody);
  const response = jsonObject(responseBody);
  const arn = response?.['CertificateArn'];
  if (request === undefined || typeof arn !== 'string' || arn === '') return undefined;
  const pem = (field: string): string | undefined => {
    const v = request[field];
    return typeof v === 'string' && v !== '' ? Buffer.from(v, 'base64').toString('utf8') : undefined;
  };
  const certificatePem = pem('Certificate');
  const privateKeyPem = pem('PrivateKey');
  if (certificatePem === undefined || privateKeyPem === undefined) return undefined;
  return { arn, material: { certificatePem, privateKeyPem, chainPem: pem('CertificateChain') ?? '' } };
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The key material of imported certificates by ARN; a re-import under an ARN replaces it. */
export class KeyMaterialStore {
  private readonly byArn = new Map<string, KeyMaterial>();

  /** Records (or replaces) what was imported under `i.arn`. */
  record(i: RecordedImport): void {
    this.byArn.set(i.arn, i.material);
  }

  /** What was last imported under `arn`, if an import was recorded. */
  get(arn: string): KeyMaterial | undefined {
    return this.byArn.get(arn);
  }
}

/**
 * A fault-proxy rule (install with `proxy.inject(...)`) that records into `store` the certificate
 * and key of every ImportCertificate ACM answered with an ARN, keyed by that ARN. It changes
 * nothing: the answer passes through as the emulator wrote it.
 */
/**
 * A fault-proxy tap (AwsFaultProxy.tap) that records the certificate and key of every
 * ImportCertificate the proxy answered with success, whichever rule answered it (a fidelity rule
 * answering re-imports as AWS does, or the emulator). Prefer it to {@link importCertificateRule},
 * which only sees calls no earlier rule takes.
 */
export function importCertificateTap(
  store: KeyMaterialStore,
): (call: AwsCall, status: number, body: string) => void {
  return (call, status, body) => {
    if (call.service !== 'acm' || call.operation !== 'ImportCertificate' || status !== 200) return;
    const recorded = parseImportCertificate(call.body, body);
    if (recorded !== undefined) store.record(recorded);
  };
}

export function importCertificateRule(store: KeyMaterialStore): FaultRule {
  return {
    service: 'acm',
    operation: 'ImportCertificate',
    fault: {
      kind: 'rewrite',
      rewrite: (body, call) => {
        const recorded = parseImportCertificate(call.body, body);
        if (recorded !== undefined) store.record(recorded);
        return body;
      },
    },
  };
}

/**
 * A throwaway certificate authority (ECDSA P-256, 30 days, made with the system `openssl`) that
 * issues stand-ins for ACM-issued certificates. Its key lives in memory; files exist only while
 * `openssl` runs.
 */
export class LocalCa {
  /** The CA's certificate, PEM: what a client trusts to verify the stand-ins. */
  readonly pem: string;
  private readonly keyPem: string;

  private constructor(pem: string, keyPem: string) {
    this.pem = pem;
    this.keyPem = keyPem;
  }

  /** Makes a new CA (subject `CN=skylift ALB data plane local CA`). */
  static async create(): Promise<LocalCa> {
    return inTempDir(async (p) => {
      await run('openssl', [
        'req',
        '-x509',
        ...ecKey,
        '-keyout',
        p('ca.key'),
        '-out',
        p('ca.crt'),
        '-days',
        '30',
        '-subj',
        '/CN=skylift ALB data plane local CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      return new LocalCa(await readFile(p('ca.crt'), 'utf8'), await readFile(p('ca.key'), 'utf8'));
    });
  }

  /**
   * A server certificate for `names` (the first is the subject's CN, all are DNS subject
   * alternative names; wildcards as given), valid 30 days, signed by this CA, with a fresh key.
   */
  async issue(names: readonly string[]): Promise<KeyMaterial> {
    if (names.length === 0) throw new Error('a certificate needs at least one name');
    return inTempDir(async (p) => {
      await writeFile(p('ca.key'), this.keyPem, { mode: 0o600 });
      await writeFile(p('ca.crt'), this.pem);
      await writeFile(
        p('leaf.ext'),
        [
          'basicConstraints=CA:FALSE',
          'keyUsage=critical,digitalSignature',
          'extendedKeyUsage=serverAuth',
          `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
          '',
        ].join('\n'),
      );
      const cn = (names[0] ?? '').slice(0, 64);
      await run('openssl', [
        'req',
        ...ecKey,
        '-keyout',
        p('leaf.key'),
        '-out',
        p('leaf.csr'),
        '-subj',
        `/CN=${cn}`,
      ]);
      await run('openssl', [
        'x509',
        '-req',
        '-in',
        p('leaf.csr'),
        '-CA',
        p('ca.crt'),
        '-CAkey',
        p('ca.key'),
        '-set_serial',
        `0x${randomBytes(16).toString('hex')}`,
        '-days',
        '30',
        '-extfile',
        p('leaf.ext'),
        '-out',
        p('leaf.crt'),
      ]);
      return {
        certificatePem: await readFile(p('leaf.crt'), 'utf8'),
        privateKeyPem: await readFile(p('leaf.key'), 'utf8'),
        chainPem: '',
      };
    });
  }
}

const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function inTempDir<T>(fn: (path: (name: string) => string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'skylift-alb-tls-'));
  try {
    return await fn((name) => join(dir, name));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A certificate as ACM describes it: what the data plane needs to serve it. */
export interface AcmDescription {
  /** `IMPORTED`, `AMAZON_ISSUED` or `PRIVATE`. */
  readonly type: string;
  readonly status: string;
  /** Domain name and subject alternative names, lower case, without repeats. */
  readonly names: readonly string[];
}

/** A certificate ready to serve: its names, its key material and the SecureContext made of them. */
export interface ServedCertificate extends NamedCertificate {
  readonly material: KeyMaterial;
  readonly context: SecureContext;
}

/**
 * ACM statuses of an ACM-issued certificate the data plane serves a stand-in for. An ALB takes only
 * ISSUED certificates; the emulator lets a listener name one still PENDING_VALIDATION (it validates
 * a requested certificate after a wait), so that one is served too.
 */
const servedIssuedStatuses: readonly string[] = ['ISSUED', 'PENDING_VALIDATION'];

/**
 * The certificates the data plane serves, by ARN: an imported certificate with the key recorded
 * for it (a re-import recorded since is served from the next `resolve`), an ACM-issued one as a
 * stand-in from the local CA for its names (issued again when its names change). Each
 * SecureContext is made once and kept while its material is the same.
 */
export class CertificateSource {
  private readonly store: KeyMaterialStore;
  private readonly ca: Pick<LocalCa, 'issue'>;
  private readonly log: (line: string) => void;
  private readonly kept = new Map<string, ServedCertificate>();
  /** The last reason logged per ARN a certificate was not served, so it is logged once. */
  private readonly reported = new Map<string, string>();

  constructor(store: KeyMaterialStore, ca: Pick<LocalCa, 'issue'>, log: (line: string) => void) {
    this.store = store;
    this.ca = ca;
    this.log = log;
  }

  /** Forgets every certificate but those in `arns` (the ones listeners name now). */
  retain(arns: ReadonlySet<string>): void {
    for (const arn of [...this.kept.keys()]) if (!arns.has(arn)) this.kept.delete(arn);
    for (const arn of [...this.reported.keys()]) if (!arns.has(arn)) this.reported.delete(arn);
  }

  /**
   * The certificate `arn` served, given ACM's description of it (undefined: ACM does not know it);
   * undefined (and a log line, once per reason) when it cannot be served: not known to ACM, an
   * imported certificate whose import was not recorded, an ACM-issued one not issued, or material
   * that makes no SecureContext.
   */
  async resolve(arn: string, described: AcmDescription | undefined): Promise<ServedCertificate | undefined> {
    if (described === undefined) {
      this.refuse(arn, 'not found in ACM');
      return undefined;
    }
    const kept = this.kept.get(arn);
    let material: KeyMaterial;
    if (described.type === 'IMPORTED') {
      const recorded = this.store.get(arn);
      if (recorded === undefined) {
        this.refuse(arn, 'imported without the proxy recording its key');
        return undefined;
      }
      if (kept?.material === recorded) return kept;
      material = recorded;
    } else {
      if (!servedIssuedStatuses.includes(described.status)) {
        this.refuse(arn, `${described.type} certificate is ${described.status}`);
        return undefined;
      }
      if (described.names.length === 0) {
        this.refuse(arn, 'no domain name');
        return undefined;
      }
      if (kept !== undefined && sameNames(kept.names, described.names)) return kept;
      material = await this.ca.issue(described.names);
    }
    let context: SecureContext;
    try {
      context = createSecureContext(secureContextOptions(material));
    } catch (err) {
      this.refuse(arn, `unusable key material: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    const served: ServedCertificate = { arn, names: described.names, material, context };
    this.kept.set(arn, served);
    this.reported.delete(arn);
    this.log(`alb data plane: certificate ${arn} served for ${described.names.join(', ')}`);
    return served;
  }

  private refuse(arn: string, reason: string): void {
    if (this.reported.get(arn) !== reason) {
      this.reported.set(arn, reason);
      this.log(`alb data plane: certificate ${arn} not served: ${reason}`);
    }
    return undefined;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}
