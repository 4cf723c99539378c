// TLS of the ALB data plane's HTTPS listeners (dev/albDataPlane/tls.ts): the certificate an SNI
// server name chooses, what the ImportCertificate rule records, the local CA's stand-ins and the
// certificate source that serves both kinds.
import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CertificateSource,
  KeyMaterialStore,
  LocalCa,
  certificateForServerName,
  importCertificateRule,
  importCertificateTap,
  parseImportCertificate,
  type KeyMaterial,
  type NamedCertificate,
} from '../../dev/albDataPlane/tls.ts';
import type { AwsCall } from '../../dev/awsOperation.ts';
import { selfSignedCertificate } from '../support/acmCertificates.ts';

const exactA: NamedCertificate = { arn: 'arn:a', names: ['a.example.test'] };
const wildB: NamedCertificate = { arn: 'arn:wild-b', names: ['*.b.example.test'] };
const exactXB: NamedCertificate = { arn: 'arn:x-b', names: ['x.b.example.test'] };
const bothB: NamedCertificate = { arn: 'arn:both-b', names: ['b.example.test', '*.b.example.test'] };

describe('certificateForServerName', () => {
  it.each([
    {
      reason: 'no server name: the default',
      sni: undefined,
      def: 'arn:a',
      certs: [exactA, wildB],
      want: 'arn:a',
    },
    { reason: 'an empty server name is none', sni: '', def: 'arn:a', certs: [exactA, wildB], want: 'arn:a' },
    {
      reason: 'the SNI certificate naming the host',
      sni: 'a.example.test',
      def: 'arn:wild-b',
      certs: [wildB, exactA],
      want: 'arn:a',
    },
    {
      reason: 'a wildcard covers one label',
      sni: 'x.b.example.test',
      def: 'arn:a',
      certs: [exactA, wildB],
      want: 'arn:wild-b',
    },
    {
      reason: 'case does not matter',
      sni: 'X.B.Example.Test',
      def: 'arn:a',
      certs: [exactA, wildB],
      want: 'arn:wild-b',
    },
    {
      reason: 'exact beats wildcard, whatever the order',
      sni: 'x.b.example.test',
      def: 'arn:a',
      certs: [exactA, wildB, exactXB],
      want: 'arn:x-b',
    },
    {
      reason: 'a wildcard never covers two labels: the default',
      sni: 'y.x.b.example.test',
      def: 'arn:a',
      certs: [exactA, wildB],
      want: 'arn:a',
    },
    {
      reason: 'a wildcard never covers the bare domain: the default',
      sni: 'b.example.test',
      def: 'arn:a',
      certs: [exactA, wildB],
      want: 'arn:a',
    },
    {
      reason: 'nothing covers the host: the default',
      sni: 'other.test',
      def: 'arn:a',
      certs: [exactA, wildB],
      want: 'arn:a',
    },
    {
      reason: 'among equals the default first',
      sni: 'x.b.example.test',
      def: 'arn:both-b',
      certs: [wildB, bothB],
      want: 'arn:both-b',
    },
    {
      reason: 'among equal SNI certificates the listener order',
      sni: 'x.b.example.test',
      def: 'arn:a',
      certs: [exactA, bothB, wildB],
      want: 'arn:both-b',
    },
    {
      reason: 'no default and nothing covers: none',
      sni: 'other.test',
      def: undefined,
      certs: [wildB],
      want: undefined,
    },
  ])('$reason', ({ sni, def, certs, want }) => {
    expect(certificateForServerName(sni, def, certs)).toBe(want);
  });
});

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const arn = 'arn:aws:acm:us-east-1:123456789012:certificate/1';

describe('parseImportCertificate', () => {
  it.each([
    {
      reason: 'certificate, key and chain decoded, keyed by the ARN answered',
      req: JSON.stringify({
        Certificate: b64('CERT'),
        PrivateKey: b64('KEY'),
        CertificateChain: b64('CHAIN'),
      }),
      res: JSON.stringify({ CertificateArn: arn }),
      want: { arn, material: { certificatePem: 'CERT', privateKeyPem: 'KEY', chainPem: 'CHAIN' } },
    },
    {
      reason: 'no chain: empty',
      req: JSON.stringify({ Certificate: b64('CERT'), PrivateKey: b64('KEY') }),
      res: JSON.stringify({ CertificateArn: arn }),
      want: { arn, material: { certificatePem: 'CERT', privateKeyPem: 'KEY', chainPem: '' } },
    },
    {
      reason: 'a re-import is keyed by the ARN ACM answered',
      req: JSON.stringify({ CertificateArn: arn, Certificate: b64('NEW'), PrivateKey: b64('NEWKEY') }),
      res: JSON.stringify({ CertificateArn: arn }),
      want: { arn, material: { certificatePem: 'NEW', privateKeyPem: 'NEWKEY', chainPem: '' } },
    },
    {
      reason: 'an error answer records nothing',
      req: JSON.stringify({ Certificate: b64('CERT'), PrivateKey: b64('KEY') }),
      res: JSON.stringify({ __type: 'ValidationException', message: 'bad certificate' }),
      want: undefined,
    },
    {
      reason: 'no private key: nothing',
      req: JSON.stringify({ Certificate: b64('CERT') }),
      res: JSON.stringify({ CertificateArn: arn }),
      want: undefined,
    },
    {
      reason: 'a request that is not JSON',
      req: 'Certificate=x',
      res: JSON.stringify({ CertificateArn: arn }),
      want: undefined,
    },
    { reason: 'an answer that is not JSON', req: '{}', res: '<html>', want: undefined },
    { reason: 'a JSON array', req: '[]', res: JSON.stringify({ CertificateArn: arn }), want: undefined },
  ])('$reason', ({ req, res, want }) => {
    expect(parseImportCertificate(req, res)).toEqual(want);
  });
});

describe('importCertificateRule', () => {
  const call = (body: string): AwsCall => ({
    service: 'acm',
    operation: 'ImportCertificate',
    method: 'POST',
    path: '/',
    body,
  });

  it('records imports in the store, a re-import replacing, and passes the answer through unchanged', () => {
    const store = new KeyMaterialStore();
    const rule = importCertificateRule(store);
    expect(rule).toMatchObject({ service: 'acm', operation: 'ImportCertificate' });
    if (rule.fault.kind !== 'rewrite') throw new Error('a rewrite rule');
    const answer = JSON.stringify({ CertificateArn: arn });
    const first = rule.fault.rewrite(
      answer,
      call(JSON.stringify({ Certificate: b64('C1'), PrivateKey: b64('K1') })),
    );
    expect(first).toBe(answer);
    expect(store.get(arn)?.certificatePem).toBe('C1');
    rule.fault.rewrite(
      answer,
      call(JSON.stringify({ CertificateArn: arn, Certificate: b64('C2'), PrivateKey: b64('K2') })),
    );
    expect(store.get(arn)).toEqual({ certificatePem: 'C2', privateKeyPem: 'K2', chainPem: '' });
    expect(store.get('arn:other')).toBeUndefined();
  });
});

describe('importCertificateTap', () => {
  const call = (body: string, operation = 'ImportCertificate'): AwsCall => ({
    service: 'acm',
    operation,
    method: 'POST',
    path: '/',
    body,
  });

  it('records successful imports whichever rule answered, and nothing refused or of another operation', () => {
    const store = new KeyMaterialStore();
    const tap = importCertificateTap(store);
    const answer = JSON.stringify({ CertificateArn: arn });
    tap(call(JSON.stringify({ Certificate: b64('C1'), PrivateKey: b64('K1') })), 400, answer);
    tap(
      call(JSON.stringify({ Certificate: b64('C1'), PrivateKey: b64('K1') }), 'DeleteCertificate'),
      200,
      answer,
    );
    expect(store.get(arn)).toBeUndefined();
    tap(
      call(JSON.stringify({ CertificateArn: arn, Certificate: b64('C2'), PrivateKey: b64('K2') })),
      200,
      answer,
    );
    expect(store.get(arn)).toEqual({ certificatePem: 'C2', privateKeyPem: 'K2', chainPem: '' });
  });
});

describe('LocalCa and CertificateSource', () => {
  let ca: LocalCa;
  beforeAll(async () => {
    ca = await LocalCa.create();
  });

  it('issues certificates for the names given, signed by the CA', async () => {
    const m = await ca.issue(['*.b.example.test', 'b.example.test']);
    const leaf = new X509Certificate(m.certificatePem);
    const root = new X509Certificate(ca.pem);
    expect(leaf.subject).toBe('CN=*.b.example.test');
    expect(leaf.subjectAltName).toBe('DNS:*.b.example.test, DNS:b.example.test');
    expect(leaf.checkIssued(root)).toBe(true);
    expect(leaf.verify(root.publicKey)).toBe(true);
    expect(leaf.checkPrivateKey((await import('node:crypto')).createPrivateKey(m.privateKeyPem))).toBe(true);
    expect(root.ca).toBe(true);
  });

  it('serves an imported certificate with the key recorded for it, and a re-import from then on', async () => {
    const store = new KeyMaterialStore();
    const lines: string[] = [];
    const source = new CertificateSource(store, ca, (l) => lines.push(l));
    const imported = { type: 'IMPORTED', status: 'ISSUED', names: ['a.example.test'] };
    expect(await source.resolve(arn, imported)).toBeUndefined();
    expect(await source.resolve(arn, imported)).toBeUndefined();
    expect(lines.filter((l) => l.includes('not served'))).toHaveLength(1);
    const material = async (): Promise<KeyMaterial> => {
      const s = await selfSignedCertificate({ domain: 'a.example.test', ec: true });
      return { ...s, chainPem: '' };
    };
    const first = await material();
    store.record({ arn, material: first });
    const served = await source.resolve(arn, imported);
    expect(served?.material).toBe(first);
    expect(served?.names).toEqual(['a.example.test']);
    expect(await source.resolve(arn, imported)).toBe(served);
    const second = await material();
    store.record({ arn, material: second });
    expect((await source.resolve(arn, imported))?.material).toBe(second);
    // Key material that makes no SecureContext is not served.
    store.record({
      arn,
      material: { certificatePem: 'not a certificate', privateKeyPem: 'no', chainPem: '' },
    });
    expect(await source.resolve(arn, imported)).toBeUndefined();
  });

  it('serves a stand-in for an ACM-issued certificate, issued again only when its names change', async () => {
    const issued: string[][] = [];
    const counting = { issue: (names: readonly string[]) => (issued.push([...names]), ca.issue(names)) };
    const source = new CertificateSource(new KeyMaterialStore(), counting, () => undefined);
    const requested = { type: 'AMAZON_ISSUED', status: 'PENDING_VALIDATION', names: ['*.b.example.test'] };
    const served = await source.resolve(arn, requested);
    expect(new X509Certificate(served?.material.certificatePem ?? '').subjectAltName).toBe(
      'DNS:*.b.example.test',
    );
    expect(await source.resolve(arn, { ...requested, status: 'ISSUED' })).toBe(served);
    const renamed = await source.resolve(arn, {
      ...requested,
      names: ['*.b.example.test', 'b.example.test'],
    });
    expect(renamed).not.toBe(served);
    expect(issued).toEqual([['*.b.example.test'], ['*.b.example.test', 'b.example.test']]);
    expect(await source.resolve(arn, { ...requested, status: 'FAILED' })).toBeUndefined();
    expect(await source.resolve(arn, undefined)).toBeUndefined();
    // Forgotten once no listener names it: issued again.
    source.retain(new Set());
    await source.resolve(arn, requested);
    expect(issued).toHaveLength(3);
  });
});
