// TLS Secrets imported into ACM, the pure parts: the Secret checked before any call
// (src/providers/acm/tlsSecret.ts), the fingerprint, the tags and the planner of ensure and release
// (importPlan.ts), and the classification of ACM's answers (errors.ts).
import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OwnershipTags } from '../../src/apis/managed.ts';
import { AwsRetryableError, AwsTerminalError, classifyAwsError } from '../../src/providers/aws/errors.ts';
import {
  acmImportErrorTable,
  CertificateInUseError,
  isAccessDenied,
  isCertificateInUse,
  isCertificateNotFound,
} from '../../src/providers/acm/errors.ts';
import {
  importTags,
  isOwnImport,
  planEnsure,
  planRelease,
  secretTagValue,
  type TaggedCertificate,
} from '../../src/providers/acm/importPlan.ts';
import {
  InvalidTlsSecretError,
  tlsFingerprint,
  tlsSecretOf,
  validateTlsSecret,
  type TlsMaterial,
} from '../../src/providers/acm/tlsSecret.ts';
import { RequeueAfter, TerminalError, decideRetry } from '../../src/runtime/errors.ts';
import { encryptedKey, makeCertificate, tlsSecret, type CertAndKey } from '../support/tlsFixtures.ts';

/** When the Secrets are checked: set once the fixtures exist (NotBefore has whole seconds). */
let now = 0;
const day = 86_400_000;

let rsa: CertAndKey;
let ec: CertAndKey;
let other: CertAndKey;
let rsa1024: CertAndKey;
let ed25519: CertAndKey;
let ca: CertAndKey;
let issued: CertAndKey;

beforeAll(() => {
  rsa = makeCertificate({ cn: 'shop.example.com', sans: ['shop.example.com', 'www.example.com'] });
  ec = makeCertificate({ cn: 'ec.example.com', key: 'ec:prime256v1' });
  other = makeCertificate({ cn: 'shop.example.com' });
  rsa1024 = makeCertificate({ cn: 'weak.example.com', key: 'rsa:1024' });
  ed25519 = makeCertificate({ cn: 'ed.example.com', key: 'ed25519' });
  ca = makeCertificate({ cn: 'Test CA', sans: [], isCa: true, days: 60 });
  issued = makeCertificate({ cn: 'api.example.com', ca });
  now = Date.now() + 2000;
}, 30_000);

function refusal(fn: () => unknown): InvalidTlsSecretError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidTlsSecretError) return err;
    throw err;
  }
  throw new Error('expected InvalidTlsSecretError');
}

describe('validateTlsSecret: a Secret ACM or an ALB would refuse is refused before any call, naming the Secret and the field', () => {
  const cases: {
    reason: string;
    secret: () => Parameters<typeof validateTlsSecret>[0];
    /** When, from `now` (ms). */
    at?: number;
    field: string;
    says: RegExp;
  }[] = [
    {
      reason: 'an Opaque Secret is not a TLS Secret',
      secret: () => tlsSecret('web', 'tls', rsa, { type: 'Opaque' }),
      field: 'type',
      says: /is "Opaque", not "kubernetes.io\/tls"/,
    },
    {
      reason: 'a Secret without a type',
      secret: () => tlsSecret('web', 'tls', rsa, { type: '' }),
      field: 'type',
      says: /not set/,
    },
    {
      reason: 'tls.crt missing',
      secret: () => tlsSecret('web', 'tls', { cert: undefined, key: rsa.key }),
      field: 'tls.crt',
      says: /missing or empty/,
    },
    {
      reason: 'tls.key empty',
      secret: () => tlsSecret('web', 'tls', { cert: rsa.cert, key: '  \n' }),
      field: 'tls.key',
      says: /missing or empty/,
    },
    {
      reason: 'tls.crt is not PEM',
      secret: () => tlsSecret('web', 'tls', { cert: 'hello', key: rsa.key }),
      field: 'tls.crt',
      says: /no PEM certificate/,
    },
    {
      reason: 'a PEM block that does not parse as a certificate',
      secret: () =>
        tlsSecret('web', 'tls', {
          cert: '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
          key: rsa.key,
        }),
      field: 'tls.crt',
      says: /certificate 1 does not parse/,
    },
    {
      reason: 'the key put in tls.crt',
      secret: () => tlsSecret('web', 'tls', { cert: rsa.key, key: rsa.key }),
      field: 'tls.crt',
      says: /PEM block 1 is a PRIVATE KEY, not a CERTIFICATE/,
    },
    {
      reason: 'a chain that does not hold the leaf’s issuer',
      secret: () => tlsSecret('web', 'tls', { cert: issued.cert + other.cert, key: issued.key }),
      field: 'tls.crt',
      says: /do not include the issuer/,
    },
    {
      reason: 'an expired certificate',
      secret: () => tlsSecret('web', 'tls', rsa),
      at: 31 * day,
      field: 'tls.crt',
      says: /expired at/,
    },
    {
      reason: 'a certificate not valid yet',
      secret: () => tlsSecret('web', 'tls', rsa),
      at: -day,
      field: 'tls.crt',
      says: /not valid before/,
    },
    {
      reason: 'tls.key holds a certificate',
      secret: () => tlsSecret('web', 'tls', { cert: rsa.cert, key: rsa.cert }),
      field: 'tls.key',
      says: /holds 0 PEM private keys/,
    },
    {
      reason: 'a key that does not parse',
      secret: () =>
        tlsSecret('web', 'tls', {
          cert: rsa.cert,
          key: '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n',
        }),
      field: 'tls.key',
      says: /does not parse/,
    },
    {
      reason: 'an encrypted key',
      secret: () => tlsSecret('web', 'tls', { cert: rsa.cert, key: encryptedKey(rsa.key) }),
      field: 'tls.key',
      says: /encrypted/,
    },
    {
      reason: 'another certificate’s key',
      secret: () => tlsSecret('web', 'tls', { cert: rsa.cert, key: other.key }),
      field: 'tls.key',
      says: /not the key of the certificate/,
    },
    {
      reason: 'RSA 1024 (ACM imports it, an ALB does not serve it)',
      secret: () => tlsSecret('web', 'tls', rsa1024),
      field: 'tls.key',
      says: /the key is RSA_1024; an Application Load Balancer serves RSA_2048/,
    },
    {
      reason: 'Ed25519',
      secret: () => tlsSecret('web', 'tls', ed25519),
      field: 'tls.key',
      says: /the key is ed25519/,
    },
  ];

  it.each(cases)('$reason', (c) => {
    const err = refusal(() => validateTlsSecret(c.secret(), now + (c.at ?? 0)));
    expect(err).toBeInstanceOf(TerminalError);
    expect(err.field).toBe(c.field);
    expect(err.secret).toBe('web/tls');
    expect(err.message).toMatch(new RegExp(`^Secret web/tls: ${c.field.replace('.', '\\.')}: `));
    expect(err.detail).toMatch(c.says);
    expect(decideRetry(err).kind).toBe('terminal');
  });

  it('a certificate larger than ACM takes (32,768 bytes of PEM) is refused on tls.crt', async () => {
    const { acmImportLimits } = await import('../../src/providers/acm/tlsSecret.ts');
    const sans = Array.from({ length: 900 }, (_, i) => `host-${i}-with-a-long-label.example.com`);
    const big = makeCertificate({ cn: 'big.example.com', sans });
    expect(big.cert.length).toBeGreaterThan(acmImportLimits.certificateBytes);
    const err = refusal(() => validateTlsSecret(tlsSecret('web', 'big', big), Date.now() + 2000));
    expect(err.field).toBe('tls.crt');
    expect(err.detail).toMatch(/bytes of PEM; ACM takes 32768 at most/);
  });

  it('accepts a self-signed RSA certificate: leaf, no chain, its names, key type and fingerprint', () => {
    const m = validateTlsSecret(tlsSecret('web', 'tls', rsa, { uid: 'u1' }), now);
    expect(m.secret).toBe('web/tls');
    expect(m.secretUid).toBe('u1');
    expect(m.chain).toBeUndefined();
    expect(m.keyAlgorithm).toBe('RSA_2048');
    expect(m.names).toEqual(['shop.example.com', 'www.example.com']);
    const leaf = new X509Certificate(rsa.cert);
    expect(m.fingerprint).toBe(leaf.fingerprint256.replaceAll(':', '').toLowerCase());
    expect(m.notAfter).toBe(leaf.validToDate.getTime());
    expect(new X509Certificate(m.certificate).raw.equals(leaf.raw)).toBe(true);
  });

  it('accepts ECDSA P-256', () => {
    expect(validateTlsSecret(tlsSecret('web', 'ec', ec), now).keyAlgorithm).toBe('EC_prime256v1');
  });

  it('splits tls.crt into the leaf and its chain; the fingerprint covers both', () => {
    const m = validateTlsSecret(
      tlsSecret('web', 'api', { cert: issued.cert + ca.cert, key: issued.key }),
      now,
    );
    expect(new X509Certificate(m.certificate).subject).toBe('CN=api.example.com');
    expect(m.chain).toBeDefined();
    expect(new X509Certificate(m.chain ?? '').subject).toBe('CN=Test CA');
    const alone = validateTlsSecret(tlsSecret('web', 'api', issued), now);
    expect(alone.fingerprint).not.toBe(m.fingerprint);
    expect(m.fingerprint).toBe(
      tlsFingerprint([new X509Certificate(issued.cert), new X509Certificate(ca.cert)]),
    );
  });

  it('ignores text around the PEM blocks and an EC PARAMETERS block before the key (openssl ecparam -genkey)', () => {
    const ecParams = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n';
    const m = validateTlsSecret(
      tlsSecret('web', 'ec', { cert: `subject=CN = ec\n${ec.cert}`, key: ecParams + ec.key }),
      now,
    );
    expect(m.privateKey.startsWith('-----BEGIN PRIVATE KEY-----')).toBe(true);
  });

  it('tlsSecretOf decodes the Secret’s base64 data; a key absent stays undefined', () => {
    const s = tlsSecretOf({
      metadata: { namespace: 'web', name: 'tls', uid: 'u' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': Buffer.from(rsa.cert).toString('base64') },
    });
    expect(s).toEqual({
      namespace: 'web',
      name: 'tls',
      uid: 'u',
      type: 'kubernetes.io/tls',
      certificate: rsa.cert,
      privateKey: undefined,
    });
  });
});

const owner: OwnershipTags = { cluster: 'prod', owner: 'web/gw', uid: 'gw-uid' };

function material(over: Partial<TlsMaterial> = {}): TlsMaterial {
  return {
    secret: 'web/tls',
    secretUid: 's-uid',
    certificate: '',
    chain: undefined,
    privateKey: '',
    fingerprint: 'f1',
    keyAlgorithm: 'RSA_2048',
    names: ['shop.example.com'],
    notBefore: 0,
    notAfter: 1,
    ...over,
  };
}

function cert(arn: string, tags: Record<string, string>): TaggedCertificate {
  return { arn, tags };
}

describe('the tags of an import', () => {
  it('carry the owner’s ownership, the Secret, its uid, the fingerprint and the key algorithm', () => {
    expect(importTags(owner, material())).toEqual({
      'skylift.dev/cluster': 'prod',
      'skylift.dev/owner': 'web/gw',
      'skylift.dev/uid': 'gw-uid',
      'skylift.dev/secret': 'web/tls',
      'skylift.dev/secret-uid': 's-uid',
      'skylift.dev/tls-sha256': 'f1',
      'skylift.dev/key-algorithm': 'RSA_2048',
    });
  });

  it('a Secret name longer than a tag value is shortened the same way every time, with a hash', () => {
    const long = `${'n'.repeat(63)}/${'s'.repeat(253)}`;
    const v = secretTagValue(long);
    expect(v).toHaveLength(256);
    expect(v).toBe(secretTagValue(long));
    expect(v).not.toBe(secretTagValue(`${long.slice(0, -1)}t`));
    expect(v).toMatch(/^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u);
    expect(secretTagValue('web/tls')).toBe('web/tls');
  });
});

describe('planEnsure: which certificate is the Secret’s, and what to do', () => {
  const ours = (arn: string, over: Record<string, string> = {}) =>
    cert(arn, { ...importTags(owner, material()), ...over });
  const cases: {
    reason: string;
    found: TaggedCertificate[];
    m?: Partial<TlsMaterial>;
    want: ReturnType<typeof planEnsure>;
  }[] = [
    {
      reason: 'nothing found: import with every tag',
      found: [],
      want: { kind: 'import', tags: importTags(owner, material()) },
    },
    {
      reason: 'found with the same fingerprint and tags: nothing',
      found: [ours('a')],
      want: { kind: 'current', arn: 'a' },
    },
    {
      reason:
        'the Secret rotated (another fingerprint, same key type): re-import into the same ARN, then the new fingerprint tag',
      found: [ours('a')],
      m: { fingerprint: 'f2' },
      want: {
        kind: 'reimport',
        arn: 'a',
        tags: { 'skylift.dev/tls-sha256': 'f2', 'skylift.dev/cluster': 'prod' },
      },
    },
    {
      reason:
        'the key type changed (ACM refuses that re-import): a new import; the old one is left for release',
      found: [ours('a')],
      m: { fingerprint: 'f2', keyAlgorithm: 'EC_prime256v1' },
      want: {
        kind: 'import',
        tags: importTags(owner, material({ fingerprint: 'f2', keyAlgorithm: 'EC_prime256v1' })),
      },
    },
    {
      reason: 'the Secret was recreated (a new uid), same certificate: only the tag',
      found: [ours('a')],
      m: { secretUid: 's-uid-2' },
      want: {
        kind: 'retag',
        arn: 'a',
        tags: { 'skylift.dev/secret-uid': 's-uid-2', 'skylift.dev/cluster': 'prod' },
      },
    },
    {
      reason: 'two found (a lost answer imported twice): the one with the fingerprint, whatever its ARN',
      found: [ours('a', { 'skylift.dev/tls-sha256': 'old' }), ours('b')],
      want: { kind: 'current', arn: 'b' },
    },
    {
      reason: 'two found, neither current: the smallest ARN is re-imported, every pass the same',
      found: [ours('b', { 'skylift.dev/tls-sha256': 'x' }), ours('a', { 'skylift.dev/tls-sha256': 'y' })],
      want: {
        kind: 'reimport',
        arn: 'a',
        tags: { 'skylift.dev/tls-sha256': 'f1', 'skylift.dev/cluster': 'prod' },
      },
    },
    {
      reason: 'another owner’s import of the same Secret is not ours: import',
      found: [ours('a', { 'skylift.dev/uid': 'other-gw' })],
      want: { kind: 'import', tags: importTags(owner, material()) },
    },
    {
      reason: 'another cluster’s: import',
      found: [ours('a', { 'skylift.dev/cluster': 'staging' })],
      want: { kind: 'import', tags: importTags(owner, material()) },
    },
    {
      reason: 'the owner’s import of another Secret: import',
      found: [ours('a', { 'skylift.dev/secret': 'web/other' })],
      want: { kind: 'import', tags: importTags(owner, material()) },
    },
    {
      reason: 'a certificate with the owner’s tags but no secret tag (not an import of a Secret): import',
      found: [cert('a', { 'skylift.dev/uid': 'gw-uid', 'skylift.dev/cluster': 'prod' })],
      want: { kind: 'import', tags: importTags(owner, material()) },
    },
  ];
  it.each(cases)('$reason', (c) => {
    expect(planEnsure(c.found, owner, material(c.m))).toEqual(c.want);
  });
});

describe('planRelease: the owner’s imports not kept, never anything else', () => {
  const ours = (arn: string, secret: string) => cert(arn, { ...importTags(owner, material({ secret })) });
  const cases: { reason: string; found: TaggedCertificate[]; keep: string[]; want: string[] }[] = [
    { reason: 'nothing found', found: [], keep: [], want: [] },
    { reason: 'kept', found: [ours('a', 'web/tls')], keep: ['a'], want: [] },
    {
      reason: 'not kept: deleted',
      found: [ours('a', 'web/tls'), ours('b', 'web/old')],
      keep: ['a'],
      want: ['b'],
    },
    {
      reason: 'a duplicate of a kept Secret (not the ARN ensure returned)',
      found: [ours('b', 'web/tls'), ours('a', 'web/tls')],
      keep: ['a'],
      want: ['b'],
    },
    {
      reason: 'another owner’s, another cluster’s, an untagged one and a non-import are left',
      found: [
        cert('x', { ...importTags({ ...owner, uid: 'other' }, material()) }),
        cert('y', { ...importTags({ ...owner, cluster: 'staging' }, material()) }),
        cert('z', {}),
        cert('w', { 'skylift.dev/uid': 'gw-uid', 'skylift.dev/cluster': 'prod' }),
      ],
      keep: [],
      want: [],
    },
    {
      reason: 'sorted, each once',
      found: [ours('c', 'a/1'), ours('b', 'a/2'), ours('c', 'a/1')],
      keep: [],
      want: ['b', 'c'],
    },
  ];
  it.each(cases)('$reason', (c) => {
    expect(planRelease(c.found, owner, new Set(c.keep))).toEqual(c.want);
  });

  it('isOwnImport needs uid, cluster and a secret tag (and the Secret’s value when asked)', () => {
    const c = cert('a', importTags(owner, material()));
    expect(isOwnImport(c, owner)).toBe(true);
    expect(isOwnImport(c, owner, 'web/tls')).toBe(true);
    expect(isOwnImport(c, owner, 'web/other')).toBe(false);
    expect(isOwnImport(c, { ...owner, uid: 'x' })).toBe(false);
  });
});

describe('ACM’s answers, classified', () => {
  const sdkError = (name: string) => Object.assign(new Error(`${name}: says AWS`), { name });
  it.each([
    { code: 'ResourceInUseException', inUse: true, notFound: false, denied: false },
    { code: 'ResourceNotFoundException', inUse: false, notFound: true, denied: false },
    { code: 'AccessDeniedException', inUse: false, notFound: false, denied: true },
    { code: 'AccessDenied', inUse: false, notFound: false, denied: true },
    { code: 'ThrottlingException', inUse: false, notFound: false, denied: false },
  ])('$code: raw and typed by awsCall alike', ({ code, inUse, notFound, denied }) => {
    for (const err of [
      sdkError(code),
      new AwsRetryableError('AWSError', `delete: ${code}`, code, { cause: sdkError(code) }),
    ]) {
      expect(isCertificateInUse(err)).toBe(inUse);
      expect(isCertificateNotFound(err)).toBe(notFound);
      expect(isAccessDenied(err)).toBe(denied);
    }
    expect(isAccessDenied(new AwsTerminalError('x', code))).toBe(denied);
  });

  it.each([
    { code: 'LimitExceededException', cls: 'terminal', why: 'ACM’s certificate quota: no retry raises it' },
    { code: 'InvalidTagException', cls: 'terminal', why: 'a tag ACM refuses' },
    { code: 'TooManyTagsException', cls: 'terminal', why: 'more than 50 tags' },
    { code: 'ValidationException', cls: 'terminal', why: 'a certificate ACM refuses' },
    {
      code: 'ConflictException',
      cls: 'transient',
      why: 'a concurrent change of the certificate or its tags',
    },
    { code: 'RequestInProgressException', cls: 'transient', why: 'still being processed' },
    { code: 'ThrottlingException', cls: 'throttling', why: 'slow down' },
  ])('$code is $cls: $why', ({ code, cls }) => {
    expect(classifyAwsError(Object.assign(new Error(code), { name: code }), acmImportErrorTable)).toBe(cls);
  });

  it('a certificate still in use is a wait (RequeueAfter with reason CertificateInUse), naming the certificates', () => {
    const err = new CertificateInUseError(['arn:1', 'arn:2']);
    expect(err).toBeInstanceOf(RequeueAfter);
    expect(err.reason).toBe('CertificateInUse');
    expect(err.arns).toEqual(['arn:1', 'arn:2']);
    expect(decideRetry(err)).toMatchObject({ kind: 'requeueAfter', delayMs: 30_000 });
    expect(err.message).toMatch(/arn:1, arn:2 still in use/);
  });
});
