// A group's HTTPS listeners served from TLS Secrets: the Secrets' ARNs in the merged spec, and
// imports only in ensure (a look never writes), a changed Secret looked at as pending.
import { describe, expect, it } from 'vitest';
import type { ImportedCertificates } from '../../src/providers/acm/imports.ts';
import type { TlsSecret } from '../../src/providers/acm/tlsSecret.ts';
import { GroupCertificates, withSecretCertificates } from '../../src/kinds/myingress/group/certificates.ts';
import type { GroupListenerSpec } from '../../src/kinds/myingress/group/api.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { selfSignedCertificate } from '../support/acmCertificates.ts';
import { realClock } from '../../src/runtime/clock.ts';

const notFound = { fixedResponse: { statusCode: 404 } };
const spec: MyIngressSpec = {
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: notFound },
    { port: 443, protocol: 'HTTPS', defaultAction: notFound },
  ],
};
const groupListeners: GroupListenerSpec[] = [
  { port: 80, protocol: 'HTTP' },
  {
    port: 443,
    protocol: 'HTTPS',
    certificateRefs: [
      { namespace: 'a', name: 'one' },
      { namespace: 'a', name: 'two' },
    ],
  },
];

describe('withSecretCertificates', () => {
  it('makes the first Secret the default certificate and the others SNI, on the listener of their port', () => {
    const out = withSecretCertificates(spec, groupListeners, (r) => `arn:${r.name}`);
    expect(out.listeners?.[0]).toEqual(spec.listeners?.[0]);
    expect(out.listeners?.[1]).toMatchObject({
      certificateArn: 'arn:one',
      additionalCertificateArns: ['arn:two'],
    });
  });

  it('keeps an explicit certificateArn as the default and serves the Secrets by SNI, each once', () => {
    const withArn: MyIngressSpec = {
      listeners: [{ port: 443, protocol: 'HTTPS', certificateArn: 'arn:own', defaultAction: notFound }],
    };
    const out = withSecretCertificates(withArn, groupListeners, (r) =>
      r.name === 'two' ? 'arn:own' : `arn:${r.name}`,
    );
    expect(out.listeners?.[0]).toMatchObject({
      certificateArn: 'arn:own',
      additionalCertificateArns: ['arn:one'],
    });
  });

  it('leaves out what is not known yet', () => {
    const out = withSecretCertificates(spec, groupListeners, () => undefined);
    expect(out.listeners?.[1]?.certificateArn).toBeUndefined();
  });
});

describe('GroupCertificates', () => {
  it('imports only in ensure; a look after it knows the ARN; a changed Secret is pending again', async () => {
    const c1 = await selfSignedCertificate({ domain: 'one.example.com' });
    const c2 = await selfSignedCertificate({ domain: 'one.example.com' });
    let current = c1;
    const secret = (namespace: string, name: string): Promise<TlsSecret> =>
      Promise.resolve({
        namespace,
        name,
        uid: `${name}-uid`,
        type: 'kubernetes.io/tls',
        certificate: current.certificatePem,
        privateKey: current.privateKeyPem,
      });
    const ensured: string[] = [];
    const imports = {
      ensure: (s: TlsSecret) => {
        ensured.push(`${s.namespace}/${s.name}`);
        return Promise.resolve({ arn: `arn:${s.name}`, outcome: 'import' as const, notAfter: 0 });
      },
      release: () => Promise.resolve({ deleted: [] }),
    } as unknown as ImportedCertificates;
    const certs = new GroupCertificates({ secret, imports, clock: realClock });
    const owner = { cluster: 'c', owner: '/g', uid: 'u' };
    const one: GroupListenerSpec[] = [
      { port: 443, protocol: 'HTTPS', certificateRefs: [{ namespace: 'a', name: 'one' }] },
    ];
    const looked = await certs.look(owner, one, spec);
    expect(looked.pending).toEqual(['a/one']);
    expect(ensured).toEqual([]);
    const done = await certs.ensure(owner, one, spec);
    expect(done.arns).toEqual(['arn:one']);
    expect(ensured).toEqual(['a/one']);
    const again = await certs.look(owner, one, spec);
    expect(again.pending).toEqual([]);
    expect(again.spec.listeners?.[1]?.certificateArn).toBe('arn:one');
    current = c2;
    expect((await certs.look(owner, one, spec)).pending).toEqual(['a/one']);
  });

  it('asks to look again later for a Secret that does not exist', async () => {
    const certs = new GroupCertificates({
      secret: () => Promise.resolve(undefined),
      imports: {} as ImportedCertificates,
      clock: realClock,
    });
    await expect(certs.look({ cluster: 'c', owner: '/g', uid: 'u' }, groupListeners, spec)).rejects.toThrow(
      /Secret a\/one .* does not exist/,
    );
  });
});
