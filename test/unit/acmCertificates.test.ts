// ACM certificates by host name (src/providers/acm/certificates.ts): which names cover a host,
// which certificate is chosen, what the list reads, and how one list is shared.
import type {
  DescribeCertificateCommandOutput,
  ListCertificatesCommandInput,
  ListCertificatesCommandOutput,
} from '@aws-sdk/client-acm';
import { describe, expect, it } from 'vitest';
import {
  albKeyTypes,
  CertificateList,
  chooseCertificate,
  coverage,
  listIssuedCertificates,
  type AcmCertificate,
  type AcmReads,
} from '../../src/providers/acm/certificates.ts';
import { FakeClock } from '../support/fakeClock.ts';

describe('coverage', () => {
  it.each([
    { reason: 'the same name', name: 'shop.example.com', host: 'shop.example.com', want: 'exact' },
    { reason: 'case does not matter', name: 'Shop.Example.com', host: 'shop.example.COM', want: 'exact' },
    {
      reason: 'a wildcard covers one label',
      name: '*.example.com',
      host: 'shop.example.com',
      want: 'wildcard',
    },
    {
      reason: 'a wildcard does not cover two labels',
      name: '*.example.com',
      host: 'a.shop.example.com',
      want: undefined,
    },
    {
      reason: 'a wildcard does not cover the bare domain',
      name: '*.example.com',
      host: 'example.com',
      want: undefined,
    },
    {
      reason: 'a wildcard host is covered by the same wildcard',
      name: '*.example.com',
      host: '*.example.com',
      want: 'exact',
    },
    {
      reason: 'a wildcard host is not covered by a deeper wildcard',
      name: '*.shop.example.com',
      host: '*.example.com',
      want: undefined,
    },
    {
      reason: 'a wildcard host is not covered by a plain name',
      name: 'shop.example.com',
      host: '*.example.com',
      want: undefined,
    },
    { reason: 'another domain', name: '*.example.org', host: 'shop.example.com', want: undefined },
    { reason: 'a suffix is not a label', name: '*.example.com', host: 'shopexample.com', want: undefined },
  ])('$reason', ({ name, host, want }) => {
    expect(coverage(name, host)).toBe(want);
  });
});

const cert = (arn: string, names: string[], notAfter?: number): AcmCertificate => ({ arn, names, notAfter });

describe('chooseCertificate', () => {
  it.each([
    {
      reason: 'none covers the host',
      host: 'shop.example.com',
      certs: [cert('arn:b', ['api.example.com']), cert('arn:c', ['*.shop.example.com'])],
      want: undefined,
    },
    {
      reason: 'an exact name before a wildcard, even one expiring later',
      host: 'shop.example.com',
      certs: [cert('arn:a', ['*.example.com'], 2000), cert('arn:b', ['shop.example.com'], 1000)],
      want: { arn: 'arn:b', coverage: 'exact' },
    },
    {
      reason: 'a subject alternative name counts as the domain name does',
      host: 'shop.example.com',
      certs: [cert('arn:a', ['example.com', 'shop.example.com'])],
      want: { arn: 'arn:a', coverage: 'exact' },
    },
    {
      reason: 'a wildcard when no exact name',
      host: 'shop.example.com',
      certs: [cert('arn:a', ['api.example.com']), cert('arn:b', ['example.com', '*.example.com'])],
      want: { arn: 'arn:b', coverage: 'wildcard' },
    },
    {
      reason: 'of two exact ones, the one expiring last (a renewed or reissued certificate)',
      host: 'shop.example.com',
      certs: [cert('arn:a', ['shop.example.com'], 1000), cert('arn:b', ['shop.example.com'], 3000)],
      want: { arn: 'arn:b', coverage: 'exact' },
    },
    {
      reason: 'of two expiring together, the smaller ARN, whatever the order listed',
      host: 'shop.example.com',
      certs: [cert('arn:z', ['shop.example.com'], 1000), cert('arn:m', ['shop.example.com'], 1000)],
      want: { arn: 'arn:m', coverage: 'exact' },
    },
    {
      reason: 'one without NotAfter sorts as expiring first',
      host: 'shop.example.com',
      certs: [cert('arn:a', ['shop.example.com']), cert('arn:b', ['shop.example.com'], 1)],
      want: { arn: 'arn:b', coverage: 'exact' },
    },
  ])('$reason', ({ host, certs, want }) => {
    expect(chooseCertificate(host, certs)).toEqual(want);
    expect(chooseCertificate(host, [...certs].reverse())).toEqual(want);
  });
});

/** Reads answering from pages of summaries and a table of descriptions, recording each call. */
function fakeReads(
  pages: ListCertificatesCommandOutput['CertificateSummaryList'][],
  described: Record<string, DescribeCertificateCommandOutput['Certificate']> = {},
): AcmReads & { calls: string[]; inputs: ListCertificatesCommandInput[] } {
  const calls: string[] = [];
  const inputs: ListCertificatesCommandInput[] = [];
  return {
    calls,
    inputs,
    list: (input) => {
      inputs.push(input);
      const page = input.NextToken === undefined ? 0 : Number(input.NextToken);
      calls.push(`list ${page}`);
      return Promise.resolve({
        $metadata: {},
        CertificateSummaryList: pages[page] ?? [],
        ...(page + 1 < pages.length ? { NextToken: String(page + 1) } : {}),
      });
    },
    describe: (arn) => {
      calls.push(`describe ${arn}`);
      return Promise.resolve({ $metadata: {}, Certificate: described[arn] });
    },
  };
}

describe('listIssuedCertificates', () => {
  it('asks for ISSUED certificates of every key type a load balancer accepts, page by page', async () => {
    const reads = fakeReads([
      [
        {
          CertificateArn: 'arn:1',
          DomainName: 'a.example.com',
          SubjectAlternativeNameSummaries: ['a.example.com'],
        },
      ],
      [
        {
          CertificateArn: 'arn:2',
          DomainName: 'B.example.com',
          SubjectAlternativeNameSummaries: ['B.example.com', '*.b.example.com'],
          NotAfter: new Date(5000),
        },
      ],
    ]);
    expect(await listIssuedCertificates(reads)).toEqual([
      { arn: 'arn:1', names: ['a.example.com'], notAfter: undefined },
      { arn: 'arn:2', names: ['b.example.com', '*.b.example.com'], notAfter: 5000 },
    ]);
    // Without Includes.keyTypes ACM lists RSA_2048 certificates only: ECDSA ones would be missed.
    expect(reads.inputs[0]).toMatchObject({
      CertificateStatuses: ['ISSUED'],
      Includes: { keyTypes: [...albKeyTypes] },
    });
    expect(albKeyTypes).toEqual(expect.arrayContaining(['RSA_2048', 'EC_prime256v1', 'EC_secp384r1']));
    expect(reads.calls).toEqual(['list 0', 'list 1']);
  });

  it('describes only certificates whose summary does not list every name', async () => {
    const reads = fakeReads(
      [
        [
          {
            CertificateArn: 'arn:full',
            DomainName: 'a.example.com',
            SubjectAlternativeNameSummaries: ['a.example.com'],
          },
          {
            CertificateArn: 'arn:cut',
            DomainName: 'b.example.com',
            SubjectAlternativeNameSummaries: ['b.example.com'],
            HasAdditionalSubjectAlternativeNames: true,
          },
          // An emulator's summary without the list at all.
          { CertificateArn: 'arn:bare', DomainName: 'c.example.com' },
          { CertificateArn: 'arn:gone', DomainName: 'd.example.com' },
        ],
      ],
      {
        'arn:cut': {
          DomainName: 'b.example.com',
          SubjectAlternativeNames: ['b.example.com', 'z.example.com'],
          Status: 'ISSUED',
          NotAfter: new Date(7000),
        },
        'arn:bare': {
          DomainName: 'c.example.com',
          SubjectAlternativeNames: ['c.example.com', 'y.example.com'],
        },
        // No longer ISSUED by the time it is described: left out.
        'arn:gone': { DomainName: 'd.example.com', Status: 'REVOKED' },
      },
    );
    expect(await listIssuedCertificates(reads)).toEqual([
      { arn: 'arn:full', names: ['a.example.com'], notAfter: undefined },
      { arn: 'arn:cut', names: ['b.example.com', 'z.example.com'], notAfter: 7000 },
      { arn: 'arn:bare', names: ['c.example.com', 'y.example.com'], notAfter: undefined },
    ]);
    expect(reads.calls).toEqual(['list 0', 'describe arn:cut', 'describe arn:bare', 'describe arn:gone']);
  });
});

describe('CertificateList', () => {
  const page = [
    {
      CertificateArn: 'arn:shop',
      DomainName: 'shop.example.com',
      SubjectAlternativeNameSummaries: ['shop.example.com'],
    },
  ];

  it('shares one read between lookups that arrive together and answers from it until it is too old', async () => {
    const clock = new FakeClock();
    const list = new CertificateList({ clock, maxAgeMs: 60_000 });
    const reads = fakeReads([page]);
    const get = () => Promise.resolve(reads);
    const found = await Promise.all([
      list.forHost('shop.example.com', get),
      list.forHost('shop.example.com', get),
      list.forHost('api.example.com', get),
    ]);
    expect(found).toEqual([
      { arn: 'arn:shop', coverage: 'exact' },
      { arn: 'arn:shop', coverage: 'exact' },
      undefined,
    ]);
    expect(reads.calls).toEqual(['list 0']);
    clock.advance(59_999);
    await list.forHost('shop.example.com', get);
    expect(reads.calls).toEqual(['list 0']);
    clock.advance(1);
    await list.forHost('shop.example.com', get);
    expect(reads.calls).toEqual(['list 0', 'list 0']);
  });

  it('keeps no failed read: its waiters reject and the next lookup reads again', async () => {
    const clock = new FakeClock();
    const list = new CertificateList({ clock, maxAgeMs: 60_000 });
    let fail = true;
    const reads = fakeReads([page]);
    const flaky: AcmReads = {
      list: (input) => (fail ? Promise.reject(new Error('throttled')) : reads.list(input)),
      describe: reads.describe,
    };
    await expect(list.forHost('shop.example.com', () => Promise.resolve(flaky))).rejects.toThrow('throttled');
    fail = false;
    expect(await list.forHost('shop.example.com', () => Promise.resolve(flaky))).toEqual({
      arn: 'arn:shop',
      coverage: 'exact',
    });
  });
});
