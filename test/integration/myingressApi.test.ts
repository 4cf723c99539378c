// The MyIngress API in the real apiserver: what admission rejects and accepts.
import { beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';

let client: KubeClient;
let ns: string;
let n = 0;

beforeAll(async () => {
  client = kubeClient();
  await installCrds(client);
  ns = await newNamespace(client, 'mingapi');
});

async function tryCreate(spec: Record<string, unknown>, name = `m${++n}`): Promise<string | undefined> {
  try {
    await client.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name },
      spec,
    });
    return undefined;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 422) return err.message;
    throw err;
  }
}

const forward = { forward: { service: { name: 'web', port: 80 } } };
/** A weighted forward to Services web0, web1, … with these weights. */
const weighted = (
  weights: number[],
): { forward: { services: { name: string; port: number; weight: number }[] } } => ({
  forward: { services: weights.map((weight, i) => ({ name: `web${i}`, port: 80, weight })) },
});
const https = (certs: Record<string, unknown>): Record<string, unknown> => ({
  port: 443,
  protocol: 'HTTPS',
  defaultAction: forward,
  ...certs,
});
const base = {
  subnets: ['subnet-0a1b2c3d', 'subnet-1a2b3c4d'],
  listeners: [{ port: 80, protocol: 'HTTP', defaultAction: forward }],
};

describe('MyIngress admission', () => {
  it.each([
    { reason: 'a minimal load balancer', spec: base },
    {
      reason: 'HTTPS with a certificate and rules',
      spec: {
        ...base,
        listeners: [
          ...base.listeners,
          {
            port: 443,
            protocol: 'HTTPS',
            certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
            defaultAction: forward,
          },
        ],
        rules: [
          {
            priority: 10,
            listenerPort: 443,
            hosts: ['shop.example.com'],
            paths: ['/api/*'],
            action: forward,
          },
        ],
      },
    },
    {
      reason: 'a subnet selector and a redirect',
      spec: {
        subnetSelector: { tags: { tier: 'public' } },
        listeners: [
          { port: 80, protocol: 'HTTP', defaultAction: { redirect: { protocol: 'HTTPS', port: '443' } } },
        ],
      },
    },
    {
      reason: 'a fixed response',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: { fixedResponse: { statusCode: 404, body: 'nothing here' } },
          },
        ],
      },
    },
    {
      reason: 'a REGIONAL web ACL',
      spec: { ...base, waf: { webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/shop/0123' } },
    },
    { reason: 'waf left alone', spec: { ...base, waf: { policy: 'LeaveAlone' } } },
    {
      reason: 'HTTPS with certificateHosts only (a wildcard among them)',
      spec: { ...base, listeners: [https({ certificateHosts: ['shop.example.com', '*.api.example.com'] })] },
    },
    {
      reason: 'HTTPS with certificateArn, certificateHosts and additionalCertificateArns together',
      spec: {
        ...base,
        listeners: [
          https({
            certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
            additionalCertificateArns: ['arn:aws:acm:us-east-1:123456789012:certificate/def'],
            certificateHosts: ['shop.example.com'],
          }),
        ],
      },
    },
    {
      reason: 'target group settings at their bounds, repeated alike on every forward to the Service port',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: {
              forward: {
                service: { name: 'web', port: 80, deregistrationDelaySeconds: 0, slowStartSeconds: 30 },
              },
            },
          },
        ],
        rules: [
          {
            priority: 10,
            paths: ['/a/*'],
            action: {
              forward: {
                service: { name: 'web', port: 80, deregistrationDelaySeconds: 0, slowStartSeconds: 30 },
              },
            },
          },
          {
            priority: 20,
            paths: ['/b/*'],
            action: {
              forward: {
                service: { name: 'web', port: 81, deregistrationDelaySeconds: 3600, slowStartSeconds: 900 },
              },
            },
          },
          {
            priority: 30,
            paths: ['/c/*'],
            action: { forward: { service: { name: 'api', port: 80, slowStartSeconds: 0 } } },
          },
        ],
      },
    },
    {
      reason: 'a health check timeout just below its interval, and a short interval with a short timeout',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: {
              forward: {
                service: { name: 'web', port: 80, healthCheck: { intervalSeconds: 10, timeoutSeconds: 9 } },
              },
            },
          },
        ],
        rules: [
          {
            priority: 5,
            paths: ['/a'],
            action: {
              forward: {
                service: { name: 'api', port: 80, healthCheck: { intervalSeconds: 5, timeoutSeconds: 2 } },
              },
            },
          },
        ],
      },
    },
    {
      reason: '25 SNI certificates over two listeners, a host’s certificate being one listener’s default',
      spec: {
        ...base,
        listeners: [
          { ...https({ certificateHosts: ['shop.example.com'] }), port: 443 },
          {
            ...https({
              certificateHosts: ['a.example.com', 'b.example.com'],
              additionalCertificateArns: Array.from(
                { length: 24 },
                (_, i) => `arn:aws:acm:us-east-1:123456789012:certificate/sni-${i}`,
              ),
            }),
            port: 8443,
          },
        ],
      },
    },
    {
      reason: 'a rule with header, query string and method conditions and a weighted forward',
      spec: {
        ...base,
        rules: [
          {
            priority: 1,
            paths: ['/api/*'],
            headers: [{ name: 'X-Canary', values: ['on', 'y*'] }],
            queryStrings: [{ key: 'v', value: '2' }],
            methods: ['GET'],
            action: weighted([3, 1]),
          },
        ],
      },
    },
    {
      reason: 'a rule with only a header condition, and a weight 0',
      spec: {
        ...base,
        rules: [{ priority: 1, headers: [{ name: 'x-a', values: ['1'] }], action: weighted([1, 0]) }],
      },
    },
    {
      reason: 'a weighted forward as a listener’s default action',
      spec: {
        ...base,
        listeners: [{ port: 80, protocol: 'HTTP', defaultAction: weighted([1, 1, 1, 1, 1]) }],
      },
    },
  ])('accepts $reason', async ({ spec }) => {
    expect(await tryCreate(spec)).toBeUndefined();
  });

  it.each([
    { reason: 'one subnet', spec: { ...base, subnets: ['subnet-0a1b2c3d'] }, message: 'spec.subnets' },
    {
      reason: 'subnets and a selector',
      spec: { ...base, subnetSelector: { tags: { a: 'b' } } },
      message: 'set exactly one of subnets and subnetSelector',
    },
    {
      reason: 'HTTPS without a certificate',
      spec: { ...base, listeners: [{ port: 443, protocol: 'HTTPS', defaultAction: forward }] },
      message: 'an HTTPS listener needs certificateArn or certificateHosts',
    },
    {
      reason: 'certificateHosts on an HTTP listener',
      spec: {
        ...base,
        listeners: [
          { port: 80, protocol: 'HTTP', certificateHosts: ['shop.example.com'], defaultAction: forward },
        ],
      },
      message: 'certificateHosts is only for HTTPS listeners',
    },
    {
      reason: 'a certificate host that is not a host name',
      spec: { ...base, listeners: [https({ certificateHosts: ['shop example.com'] })] },
      message: 'spec.listeners[0].certificateHosts[0]',
    },
    {
      reason: 'a wildcard certificate host not in the leftmost label',
      spec: { ...base, listeners: [https({ certificateHosts: ['shop.*.example.com'] })] },
      message: 'spec.listeners[0].certificateHosts[0]',
    },
    {
      reason: 'a certificate host twice',
      spec: { ...base, listeners: [https({ certificateHosts: ['shop.example.com', 'shop.example.com'] })] },
      message: 'Duplicate value',
    },
    {
      reason: 'more than 10 certificate hosts',
      spec: {
        ...base,
        listeners: [https({ certificateHosts: Array.from({ length: 11 }, (_, i) => `h${i}.example.com`) })],
      },
      message: 'must have at most 10 items',
    },
    {
      reason: 'certificate hosts and SNI certificates beyond 25 together',
      spec: {
        ...base,
        listeners: [
          https({
            certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/default',
            certificateHosts: ['a.example.com', 'b.example.com'],
            additionalCertificateArns: Array.from(
              { length: 24 },
              (_, i) => `arn:aws:acm:us-east-1:123456789012:certificate/sni-${i}`,
            ),
          }),
        ],
      },
      message: 'at most 25 SNI certificates per listener',
    },
    {
      reason: 'SNI certificates beyond 25 on the load balancer, each listener within 25',
      spec: {
        ...base,
        listeners: [443, 8443].map((port) => ({
          ...https({
            certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/default',
            additionalCertificateArns: Array.from(
              { length: 13 },
              (_, i) => `arn:aws:acm:us-east-1:123456789012:certificate/sni-${port}-${i}`,
            ),
          }),
          port,
        })),
      },
      message: 'more than 25 SNI certificates on the load balancer',
    },
    {
      reason: 'a bad port',
      spec: { ...base, listeners: [{ port: 70000, protocol: 'HTTP', defaultAction: forward }] },
      message: 'spec.listeners[0].port',
    },
    {
      reason: 'an unknown protocol',
      spec: { ...base, listeners: [{ port: 80, protocol: 'TCP', defaultAction: forward }] },
      message: 'Unsupported value: "TCP"',
    },
    {
      reason: 'two listeners on one port',
      spec: { ...base, listeners: [base.listeners[0], base.listeners[0]] },
      message: 'Duplicate value',
    },
    {
      reason: 'two rules with one priority',
      spec: {
        ...base,
        rules: [
          { priority: 5, paths: ['/a'], action: forward },
          { priority: 5, paths: ['/b'], action: forward },
        ],
      },
      message: 'Duplicate value',
    },
    {
      reason: 'a rule without conditions',
      spec: { ...base, rules: [{ priority: 5, action: forward }] },
      message: 'a rule needs a condition: hosts, paths, headers, queryStrings or methods',
    },
    {
      reason: 'an action with two kinds',
      spec: {
        ...base,
        listeners: [
          { port: 80, protocol: 'HTTP', defaultAction: { ...forward, fixedResponse: { statusCode: 404 } } },
        ],
      },
      message: 'set exactly one of forward, fixedResponse and redirect',
    },
    {
      reason: 'a rule on a missing listener',
      spec: { ...base, rules: [{ priority: 5, listenerPort: 8080, paths: ['/'], action: forward }] },
      message: 'must be the port of one of the listeners',
    },
    {
      reason: 'a reserved tag',
      spec: { ...base, tags: { 'skylift.dev/uid': 'spoof' } },
      message: 'reserved',
    },
    { reason: 'no listeners', spec: { subnets: base.subnets, listeners: [] }, message: 'spec.listeners' },
    {
      reason: 'a web ACL ARN that is not WAFv2',
      spec: { ...base, waf: { webAclArn: 'arn:aws:waf::123456789012:webacl/0123' } },
      message: 'spec.waf.webAclArn',
    },
    {
      reason: 'a CLOUDFRONT (global) web ACL',
      spec: { ...base, waf: { webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/shop/0123' } },
      message: 'a CLOUDFRONT (global) ACL cannot protect a load balancer',
    },
    {
      reason: 'a web ACL with policy LeaveAlone',
      spec: {
        ...base,
        waf: {
          policy: 'LeaveAlone',
          webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/shop/0123',
        },
      },
      message: 'waf.policy LeaveAlone leaves the web ACL to others',
    },
    {
      reason: 'a slow start of 10 s (0, or 30 to 900)',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: { forward: { service: { name: 'web', port: 80, slowStartSeconds: 10 } } },
          },
        ],
      },
      message: 'slowStartSeconds is 0 (off) or 30 to 900',
    },
    {
      reason: 'a slow start above 900 s',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: { forward: { service: { name: 'web', port: 80, slowStartSeconds: 901 } } },
          },
        ],
      },
      message: 'spec.listeners[0].defaultAction.forward.service.slowStartSeconds',
    },
    {
      reason: 'a deregistration delay above 3600 s',
      spec: {
        ...base,
        rules: [
          {
            priority: 5,
            paths: ['/a'],
            action: { forward: { service: { name: 'web', port: 80, deregistrationDelaySeconds: 3601 } } },
          },
        ],
      },
      message: 'spec.rules[0].action.forward.service.deregistrationDelaySeconds',
    },
    {
      reason: 'a negative deregistration delay',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: {
              forward: { service: { name: 'web', port: 80, deregistrationDelaySeconds: -1 } },
            },
          },
        ],
      },
      message: 'spec.listeners[0].defaultAction.forward.service.deregistrationDelaySeconds',
    },
    {
      reason: 'two forwards to one Service port with different deregistration delays',
      spec: {
        ...base,
        rules: [
          {
            priority: 5,
            paths: ['/a'],
            action: { forward: { service: { name: 'web', port: 80, deregistrationDelaySeconds: 30 } } },
          },
        ],
      },
      message: 'name one Service port with different settings',
    },
    {
      reason: 'two forwards to one Service port with different slow starts (both in rules)',
      spec: {
        ...base,
        rules: [
          {
            priority: 5,
            paths: ['/a'],
            action: { forward: { service: { name: 'web', port: 80, slowStartSeconds: 60 } } },
          },
          {
            priority: 6,
            paths: ['/b'],
            action: { forward: { service: { name: 'web', port: 80, slowStartSeconds: 90 } } },
          },
        ],
      },
      message: 'name one Service port with different settings',
    },
    {
      // Before issue 29 the first forward's health check was applied and the other's ignored.
      reason: 'two forwards to one Service port with different health checks',
      spec: {
        ...base,
        rules: [
          {
            priority: 5,
            paths: ['/a'],
            action: { forward: { service: { name: 'web', port: 80, healthCheck: { path: '/ready' } } } },
          },
        ],
      },
      message: 'name one Service port with different settings',
    },
    {
      reason: 'a health check timeout equal to its interval',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: {
              forward: {
                service: { name: 'web', port: 80, healthCheck: { intervalSeconds: 5, timeoutSeconds: 5 } },
              },
            },
          },
        ],
      },
      message:
        'healthCheck.timeoutSeconds (default 5) must be below healthCheck.intervalSeconds (default 15)',
    },
    {
      reason: 'a health check timeout above the default interval',
      spec: {
        ...base,
        rules: [
          {
            priority: 5,
            paths: ['/a'],
            action: { forward: { service: { name: 'api', port: 80, healthCheck: { timeoutSeconds: 20 } } } },
          },
        ],
      },
      message: 'spec.rules[0].action.forward.service.healthCheck',
    },
    {
      reason: 'a health check interval not above the default timeout',
      spec: {
        ...base,
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: {
              forward: { service: { name: 'web', port: 80, healthCheck: { intervalSeconds: 5 } } },
            },
          },
        ],
      },
      message:
        'healthCheck.timeoutSeconds (default 5) must be below healthCheck.intervalSeconds (default 15)',
    },
    {
      reason: 'more than 5 condition values in a rule',
      spec: {
        ...base,
        rules: [
          {
            priority: 1,
            hosts: ['a.example.com'],
            paths: ['/a', '/a/*'],
            headers: [{ name: 'x-a', values: ['1', '2'] }],
            methods: ['GET'],
            action: forward,
          },
        ],
      },
      message: 'more than 5 condition values in one rule',
    },
    {
      reason: 'more than 3 values of one header',
      spec: {
        ...base,
        rules: [{ priority: 1, headers: [{ name: 'x-a', values: ['1', '2', '3', '4'] }], action: forward }],
      },
      message: 'spec.rules[0].headers[0].values',
    },
    {
      reason: 'a header name over 40 characters',
      spec: {
        ...base,
        rules: [{ priority: 1, headers: [{ name: 'x'.repeat(41), values: ['1'] }], action: forward }],
      },
      message: 'spec.rules[0].headers[0].name',
    },
    {
      reason: 'a lower-case method',
      spec: { ...base, rules: [{ priority: 1, methods: ['get'], action: forward }] },
      message: 'spec.rules[0].methods[0]',
    },
    {
      reason: 'a query string pair without a value',
      spec: { ...base, rules: [{ priority: 1, queryStrings: [{ key: 'a' }], action: forward }] },
      message: 'spec.rules[0].queryStrings[0].value',
    },
    {
      reason: 'forward.service and forward.services together',
      spec: {
        ...base,
        rules: [
          {
            priority: 1,
            paths: ['/'],
            action: { forward: { ...forward.forward, services: weighted([1]).forward.services } },
          },
        ],
      },
      message: 'set exactly one of forward.service and forward.services',
    },
    {
      reason: 'a forward with neither',
      spec: { ...base, rules: [{ priority: 1, paths: ['/'], action: { forward: {} } }] },
      message: 'set exactly one of forward.service and forward.services',
    },
    {
      reason: 'six weighted Services',
      spec: { ...base, rules: [{ priority: 1, paths: ['/'], action: weighted([1, 1, 1, 1, 1, 1]) }] },
      message: 'spec.rules[0].action.forward.services',
    },
    {
      reason: 'every weight 0',
      spec: { ...base, rules: [{ priority: 1, paths: ['/'], action: weighted([0, 0]) }] },
      message: 'forward.services needs a weight above 0',
    },
    {
      reason: 'a weight over 999',
      spec: { ...base, rules: [{ priority: 1, paths: ['/'], action: weighted([1000, 1]) }] },
      message: 'spec.rules[0].action.forward.services[0].weight',
    },
    {
      reason: 'one Service port twice in a weighted forward',
      spec: {
        ...base,
        rules: [
          {
            priority: 1,
            paths: ['/'],
            action: {
              forward: {
                services: [
                  { name: 'web', port: 80, weight: 1 },
                  { name: 'web', port: 80, weight: 2 },
                ],
              },
            },
          },
        ],
      },
      message: 'forward.services names a Service port twice',
    },
  ])('rejects $reason', async ({ spec, message }) => {
    const err = await tryCreate(spec);
    expect(err).toBeDefined();
    expect(err).toContain(message);
  });

  it('keeps the scheme immutable', async () => {
    expect(await tryCreate({ ...base, scheme: 'internal' }, 'fixed')).toBeUndefined();
    const err = await client
      .patch(
        resourcePath(myIngressType, { namespace: ns, name: 'fixed' }),
        { spec: { scheme: 'internet-facing' } },
        'merge',
      )
      .then(
        () => 'accepted',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
    expect(err).toContain('scheme is immutable');
  });

  // Issue 14, item 2: changing externalName after create was admitted and left the first load balancer behind.
  it('refuses setting, changing or removing externalName after create', async () => {
    const change = (name: string, spec: Record<string, unknown>): Promise<string> =>
      client.patch(resourcePath(myIngressType, { namespace: ns, name }), { spec }, 'merge').then(
        () => 'accepted',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
    const arn =
      'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/legacy/50dc6c495c0c9188';
    expect(await tryCreate(base, 'own')).toBeUndefined();
    expect(await change('own', { externalName: arn })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
    expect(await tryCreate({ ...base, externalName: arn }, 'adopter')).toBeUndefined();
    expect(await change('adopter', { externalName: `${arn}0` })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
    expect(await change('adopter', { externalName: null })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
    expect(await change('adopter', { deletionPolicy: 'Orphan' })).toBe('accepted');
  });
});
