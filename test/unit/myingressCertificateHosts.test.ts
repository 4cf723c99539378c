// spec.listeners[].certificateHosts as applied (src/kinds/myingress/certificateHosts.ts): the
// certificates found merged with those named by ARN, the listeners held back and what the object
// says about a host without a certificate.
import { describe, expect, it } from 'vitest';
import type { ListenerSpec, MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import {
  appliedListener,
  appliedSpec,
  certificatesReady,
  heldListeners,
  resolveCertificateHosts,
  type HostCertificate,
} from '../../src/kinds/myingress/certificateHosts.ts';

const action = { fixedResponse: { statusCode: 200 } };
const https = (over: Partial<ListenerSpec>): ListenerSpec => ({
  port: 443,
  protocol: 'HTTPS',
  defaultAction: action,
  ...over,
});
const host = (h: string, arn: string | undefined, j = 0): HostCertificate => ({
  field: `spec.listeners[0].certificateHosts[${j}]`,
  host: h,
  arn,
});

describe('appliedListener', () => {
  it.each([
    {
      reason: 'without certificateArn the first host’s certificate is the default, the others SNI',
      listener: https({ certificateHosts: ['a.example.com', 'b.example.com'] }),
      hosts: [host('a.example.com', 'arn:a'), host('b.example.com', 'arn:b', 1)],
      want: { certificateArn: 'arn:a', additionalCertificateArns: ['arn:b'] },
    },
    {
      reason: 'with certificateArn every host’s certificate is served by SNI',
      listener: https({ certificateArn: 'arn:default', certificateHosts: ['a.example.com'] }),
      hosts: [host('a.example.com', 'arn:a')],
      want: { certificateArn: 'arn:default', additionalCertificateArns: ['arn:a'] },
    },
    {
      reason: 'merged with additionalCertificateArns without repeats, never repeating the default',
      listener: https({
        certificateArn: 'arn:default',
        additionalCertificateArns: ['arn:x', 'arn:a'],
        certificateHosts: ['a.example.com', 'b.example.com', 'c.example.com'],
      }),
      hosts: [
        host('a.example.com', 'arn:a'),
        host('b.example.com', 'arn:default', 1),
        host('c.example.com', 'arn:a', 2),
      ],
      want: { certificateArn: 'arn:default', additionalCertificateArns: ['arn:x', 'arn:a'] },
    },
    {
      reason: 'two hosts one wildcard certificate covers: one default, no SNI',
      listener: https({ certificateHosts: ['a.example.com', 'b.example.com'] }),
      hosts: [host('a.example.com', 'arn:star'), host('b.example.com', 'arn:star', 1)],
      want: { certificateArn: 'arn:star' },
    },
    {
      reason: 'a host without a certificate: the listener as the spec names it by ARN, nothing found used',
      listener: https({ certificateHosts: ['a.example.com', 'b.example.com'] }),
      hosts: [host('a.example.com', undefined), host('b.example.com', 'arn:b', 1)],
      want: {},
    },
  ])('$reason', ({ listener, hosts, want }) => {
    expect(appliedListener(listener, hosts)).toEqual({
      port: 443,
      protocol: 'HTTPS',
      defaultAction: action,
      ...want,
    });
  });
});

const spec = (listeners: ListenerSpec[]): MyIngressSpec => ({ subnets: ['subnet-a', 'subnet-b'], listeners });

describe('resolveCertificateHosts, heldListeners, certificatesReady', () => {
  it('asks once per host, holds back the listener with a host none covers and says what to do', async () => {
    const s = spec([
      { port: 80, protocol: 'HTTP', defaultAction: action },
      https({ certificateHosts: ['shop.example.com', 'Shop.example.com', 'none.example.com'] }),
      https({ port: 8443, certificateHosts: ['shop.example.com'] }),
    ]);
    const asked: string[] = [];
    const r = await resolveCertificateHosts(s, 'eu-west-1', (h) => {
      asked.push(h);
      return Promise.resolve(h === 'none.example.com' ? undefined : 'arn:shop');
    });
    expect(asked).toEqual(['shop.example.com', 'none.example.com']);
    expect([...heldListeners(s, r)]).toEqual([443]);
    expect(appliedSpec(s, r).listeners?.[2]).toEqual({
      port: 8443,
      protocol: 'HTTPS',
      defaultAction: action,
      certificateArn: 'arn:shop',
    });
    expect(certificatesReady(r)).toEqual({
      ready: false,
      reason: 'CertificateNotFound',
      actionRequired: true,
      message:
        'spec.listeners[1].certificateHosts[2] "none.example.com": no ISSUED ACM certificate in eu-west-1 covers none.example.com, so the listener is left as it is; request or import a certificate for none.example.com in ACM in eu-west-1, or set spec.listeners[1].certificateArn and remove the host.',
    });
  });

  it('leaves a spec without certificateHosts the same object, with nothing held and nothing to say', async () => {
    const s = spec([https({ certificateArn: 'arn:x' })]);
    const r = await resolveCertificateHosts(s, 'eu-west-1', () => Promise.reject(new Error('not asked')));
    expect(appliedSpec(s, r)).toBe(s);
    expect(appliedSpec(s, undefined)).toBe(s);
    expect(heldListeners(s, r).size).toBe(0);
    expect(certificatesReady(r)).toBeUndefined();
    expect(certificatesReady(undefined)).toBeUndefined();
  });
});
