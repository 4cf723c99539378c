// A Kubernetes TLS Secret as ACM's ImportCertificate takes it: checked before any call, so a
// Secret ACM or an Application Load Balancer would refuse is reported naming the Secret and its
// field, never as an AWS error after a round trip. Pure (node:crypto only).
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { TerminalError } from '../../runtime/errors.ts';
import { albKeyTypes } from './certificates.ts';

/** The Secret type Kubernetes gives TLS Secrets (the only one imported). */
export const tlsSecretType = 'kubernetes.io/tls';
/** The data keys of a TLS Secret. */
export const tlsCertKey = 'tls.crt';
export const tlsKeyKey = 'tls.key';

/**
 * ACM's limits on ImportCertificate (ACM API reference, ImportCertificate: `Certificate` 1–32,768,
 * `CertificateChain` 1–2,097,152, `PrivateKey` 1–5,120; the user guide says the private key "must
 * be no larger than 5 KB (5,120 bytes)"), counted in bytes of what is sent.
 */
export const acmImportLimits = {
  certificateBytes: 32_768,
  chainBytes: 2_097_152,
  privateKeyBytes: 5_120,
} as const;

/** A TLS Secret, as the consumer read it (PEM text already decoded from the Secret's base64 data). */
export interface TlsSecret {
  readonly namespace: string;
  readonly name: string;
  /** The Secret's metadata.uid (recorded in a tag of the import, for people and audits). */
  readonly uid: string;
  /** The Secret's `type` (`kubernetes.io/tls` is the only one accepted). */
  readonly type: string | undefined;
  /** `tls.crt`: the leaf certificate first, then its chain, PEM. Undefined when the key is missing. */
  readonly certificate: string | undefined;
  /** `tls.key`: the leaf's private key, PEM, unencrypted. Undefined when the key is missing. */
  readonly privateKey: string | undefined;
}

/** A Secret object as the Kubernetes API serves it (the fields read here). */
export interface SecretObject {
  readonly metadata: { readonly namespace?: string; readonly name?: string; readonly uid?: string };
  readonly type?: string;
  /** Base64 values, as the API serves them. */
  readonly data?: Readonly<Record<string, string>>;
}

/** A Secret object's TLS fields, its data decoded from base64 (a key absent stays undefined). Pure. */
export function tlsSecretOf(secret: SecretObject): TlsSecret {
  const decoded = (key: string): string | undefined => {
    const b64 = secret.data?.[key];
    return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  };
  return {
    namespace: secret.metadata.namespace ?? '',
    name: secret.metadata.name ?? '',
    uid: secret.metadata.uid ?? '',
    type: secret.type,
    certificate: decoded(tlsCertKey),
    privateKey: decoded(tlsKeyKey),
  };
}

/** Which part of the Secret a refusal is about. */
export type TlsSecretField = 'type' | typeof tlsCertKey | typeof tlsKeyKey;

/**
 * A Secret that cannot be imported as it is: no retry fixes it, a change of the Secret does.
 * The message names the Secret (`namespace/name`) and the field.
 */
export class InvalidTlsSecretError extends TerminalError {
  /** `namespace/name` of the Secret. */
  readonly secret: string;
  readonly field: TlsSecretField;
  /** What is wrong, without the Secret's and field's names (for a condition that names them itself). */
  readonly detail: string;
  constructor(secret: string, field: TlsSecretField, detail: string) {
    super(`Secret ${secret}: ${field === 'type' ? 'type' : field}: ${detail}`);
    this.secret = secret;
    this.field = field;
    this.detail = detail;
  }
}

/** The key algorithm of an imported certificate, as ACM names it (`RSA_2048`, `EC_prime256v1`, …). */
export type AcmKeyAlgorithm = (typeof albKeyTypes)[number];

/** What a valid TLS Secret is imported as: the three parts of ImportCertificate, and facts about them. */
export interface TlsMaterial {
  /** `namespace/name` of the Secret. */
  readonly secret: string;
  readonly secretUid: string;
  /** The leaf certificate, PEM (one block). */
  readonly certificate: string;
  /** The certificates after the leaf, PEM, in the Secret's order; undefined when there are none. */
  readonly chain: string | undefined;
  /** The private key's PEM block as the Secret has it. */
  readonly privateKey: string;
  /** {@link tlsFingerprint} of the certificates. */
  readonly fingerprint: string;
  readonly keyAlgorithm: AcmKeyAlgorithm;
  /** The leaf's subject common name and DNS names, lower case, without repeats (ACM's DomainName is one of them). */
  readonly names: readonly string[];
  /** The leaf's NotBefore and NotAfter, ms since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
}

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[\s\S]*?-----END \1-----/g;

interface Block {
  readonly label: string;
  readonly text: string;
}

/** The PEM blocks of a text, in order (text between them is ignored, as openssl does). Pure. */
function pemBlocks(text: string): Block[] {
  return [...text.matchAll(pemBlock)].map((m) => ({ label: m[1] ?? '', text: m[0] }));
}

/**
 * SHA-256 over the DER of every certificate, leaf first, hex (64 characters, fits a tag value):
 * what identifies what a listener serves. With no chain it is the leaf's usual fingerprint
 * (`openssl x509 -noout -fingerprint -sha256`, without colons). Pure.
 */
export function tlsFingerprint(certificates: readonly X509Certificate[]): string {
  const h = createHash('sha256');
  for (const c of certificates) h.update(c.raw);
  return h.digest('hex');
}

/** The ACM key algorithm of a key, or undefined for one ACM does not name (Ed25519, RSA-PSS, DSA…). Pure. */
export function acmKeyAlgorithmOf(key: KeyObject): string | undefined {
  const d = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'rsa' && d?.modulusLength !== undefined) return `RSA_${d.modulusLength}`;
  if (key.asymmetricKeyType === 'ec' && d?.namedCurve !== undefined) return `EC_${d.namedCurve}`;
  return undefined;
}

function isAlbKeyType(k: string | undefined): k is AcmKeyAlgorithm {
  return k !== undefined && (albKeyTypes as readonly string[]).includes(k);
}

/** The subject common name and DNS subject alternative names of a certificate, lower case. Pure. */
export function certificateNames(c: X509Certificate): string[] {
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(c.subject)?.[1];
  const sans = (c.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
  return [...new Set([...(cn !== undefined ? [cn] : []), ...sans].map((n) => n.toLowerCase()))];
}

/**
 * Checks a TLS Secret the way ACM's ImportCertificate and an Application Load Balancer would, at
 * `now` (ms since the epoch), and returns what to import. Throws {@link InvalidTlsSecretError}
 * naming the Secret and the field for: a type other than `kubernetes.io/tls`; `tls.crt` or
 * `tls.key` missing or empty; `tls.crt` without a certificate, with a PEM block that is not one,
 * or one that does not parse; a chain that does not hold the leaf's issuer; a leaf not valid at
 * `now` (expired, or not yet valid); `tls.key` without exactly one private key, encrypted, or not
 * parsing; a key that is not the leaf's; a key type an ALB cannot serve (RSA 2048/3072/4096, ECDSA
 * P-256/384/521 only); a part larger than ACM takes ({@link acmImportLimits}). Pure.
 */
export function validateTlsSecret(s: TlsSecret, now: number): TlsMaterial {
  const secret = `${s.namespace}/${s.name}`;
  const refuse = (field: TlsSecretField, detail: string): never => {
    throw new InvalidTlsSecretError(secret, field, detail);
  };
  if (s.type !== tlsSecretType)
    refuse(
      'type',
      `is ${s.type === undefined || s.type === '' ? 'not set' : `"${s.type}"`}, not "${tlsSecretType}"`,
    );
  if (s.certificate === undefined || s.certificate.trim() === '') refuse(tlsCertKey, 'missing or empty');
  if (s.privateKey === undefined || s.privateKey.trim() === '') refuse(tlsKeyKey, 'missing or empty');
  const certText = s.certificate ?? '';
  const keyText = s.privateKey ?? '';

  const blocks = pemBlocks(certText);
  if (blocks.length === 0) refuse(tlsCertKey, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  const certs: X509Certificate[] = [];
  blocks.forEach((b, i) => {
    if (b.label !== 'CERTIFICATE')
      refuse(tlsCertKey, `PEM block ${i + 1} is a ${b.label}, not a CERTIFICATE`);
    try {
      certs.push(new X509Certificate(b.text));
    } catch (err) {
      refuse(
        tlsCertKey,
        `certificate ${i + 1} does not parse: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  });
  const [leaf, ...chain] = certs;
  if (leaf === undefined) return refuse(tlsCertKey, 'holds no certificate');
  if (leaf.issuer.trim() === '') refuse(tlsCertKey, 'the certificate has an empty issuer, which ACM refuses');
  if (chain.length > 0 && !chain.some((c) => leaf.checkIssued(c)))
    refuse(tlsCertKey, 'the certificates after the first (the chain) do not include the issuer of the first');
  const notBefore = leaf.validFromDate.getTime();
  const notAfter = leaf.validToDate.getTime();
  if (now >= notAfter) refuse(tlsCertKey, `the certificate expired at ${leaf.validToDate.toISOString()}`);
  if (now < notBefore)
    refuse(tlsCertKey, `the certificate is not valid before ${leaf.validFromDate.toISOString()}`);

  const keyBlocks = pemBlocks(keyText).filter((b) => b.label.endsWith('PRIVATE KEY'));
  if (keyBlocks.some((b) => b.label === 'ENCRYPTED PRIVATE KEY') || /Proc-Type: 4,ENCRYPTED/.test(keyText))
    refuse(tlsKeyKey, 'the private key is encrypted; ACM takes an unencrypted key only');
  if (keyBlocks.length !== 1)
    refuse(tlsKeyKey, `holds ${keyBlocks.length} PEM private keys (-----BEGIN … PRIVATE KEY-----), not one`);
  const keyPem = keyBlocks[0]?.text ?? '';
  let key: KeyObject | undefined;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    refuse(tlsKeyKey, `the private key does not parse: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (key === undefined) return refuse(tlsKeyKey, 'the private key does not parse');
  const keyAlgorithm = acmKeyAlgorithmOf(key);
  if (!isAlbKeyType(keyAlgorithm))
    refuse(
      tlsKeyKey,
      `the key is ${keyAlgorithm ?? key.asymmetricKeyType ?? 'of an unknown type'}; an Application Load Balancer serves ${albKeyTypes.join(', ')}`,
    );
  if (!leaf.checkPrivateKey(key))
    refuse(tlsKeyKey, 'the private key is not the key of the certificate in tls.crt');

  const certificate = `${leaf.toString().trim()}\n`;
  const chainPem = chain.length > 0 ? chain.map((c) => `${c.toString().trim()}\n`).join('') : undefined;
  const privateKey = `${keyPem.trim()}\n`;
  const size = (t: string): number => Buffer.byteLength(t, 'utf8');
  if (size(certificate) > acmImportLimits.certificateBytes)
    refuse(
      tlsCertKey,
      `the certificate is ${size(certificate)} bytes of PEM; ACM takes ${acmImportLimits.certificateBytes} at most`,
    );
  if (chainPem !== undefined && size(chainPem) > acmImportLimits.chainBytes)
    refuse(
      tlsCertKey,
      `the chain is ${size(chainPem)} bytes of PEM; ACM takes ${acmImportLimits.chainBytes} at most`,
    );
  if (size(privateKey) > acmImportLimits.privateKeyBytes)
    refuse(
      tlsKeyKey,
      `the private key is ${size(privateKey)} bytes of PEM; ACM takes ${acmImportLimits.privateKeyBytes} at most`,
    );

  return {
    secret,
    secretUid: s.uid,
    certificate,
    chain: chainPem,
    privateKey,
    fingerprint: tlsFingerprint(certs),
    keyAlgorithm: keyAlgorithm as AcmKeyAlgorithm,
    names: certificateNames(leaf),
    notBefore,
    notAfter,
  };
}
