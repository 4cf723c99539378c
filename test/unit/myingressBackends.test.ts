// The backend Services a MyIngress forwards to, and how one that is not there
// is reported (issue 14 item 11): pure functions, table-driven.
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../src/apis/managed.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import {
  backendRefs,
  carriedBackendsReady,
  isBackendReason,
  missingBackends,
  missingBackendsReady,
  type MissingBackend,
} from '../../src/kinds/myingress/backends.ts';
import { backendServices } from '../../src/kinds/myingress/controller.ts';
import type { ServiceLike } from '../../src/kinds/myingress/desired.ts';
import { ingressReadiness } from '../../src/kinds/myingress/observation.ts';

const to = (name: string, port: number) => ({ forward: { service: { name, port } } });

const spec: MyIngressSpec = {
  subnets: ['subnet-1', 'subnet-2'],
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: to('web', 80) },
    { port: 81, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } },
  ],
  rules: [
    { priority: 1, paths: ['/a'], action: { redirect: { path: '/b' } } },
    { priority: 2, paths: ['/api/*'], action: to('api', 8080) },
    { priority: 3, paths: ['/web/*'], action: to('web', 80) },
    { priority: 4, paths: ['/admin/*'], action: to('web', 9090) },
  ],
};

/** A namespace's Services by name with their ports. */
function services(ports: Record<string, number[]>): (name: string) => ServiceLike | undefined {
  return (name) => {
    const p = ports[name];
    return p === undefined ? undefined : { spec: { ports: p.map((port) => ({ port })) } };
  };
}

describe('backendRefs', () => {
  it('lists every forward with the path of its service field, listeners first, in spec order', () => {
    expect(backendRefs(spec)).toEqual([
      { field: 'spec.listeners[0].defaultAction.forward.service', service: 'web', port: 80 },
      { field: 'spec.rules[1].action.forward.service', service: 'api', port: 8080 },
      { field: 'spec.rules[2].action.forward.service', service: 'web', port: 80 },
      { field: 'spec.rules[3].action.forward.service', service: 'web', port: 9090 },
    ]);
  });
  it('is empty without forwards, and backendServices names each Service once', () => {
    const fixed = { fixedResponse: { statusCode: 404 } };
    expect(
      backendRefs({ ...spec, listeners: [{ port: 81, protocol: 'HTTP', defaultAction: fixed }], rules: [] }),
    ).toEqual([]);
    expect([...backendServices({ metadata: { name: 'x' }, spec })].sort()).toEqual(['api', 'web']);
  });
});

describe('missingBackends', () => {
  it.each<{ reason: string; have: Record<string, number[]>; want: MissingBackend[] }>([
    { reason: 'every Service with its ports', have: { web: [80, 9090], api: [8080] }, want: [] },
    {
      reason: 'a missing Service once, with every field naming it',
      have: { api: [8080] },
      want: [
        {
          reason: 'ServiceNotFound',
          service: 'web',
          port: 80,
          servicePorts: [],
          fields: [
            'spec.listeners[0].defaultAction.forward.service',
            'spec.rules[2].action.forward.service',
            'spec.rules[3].action.forward.service',
          ],
        },
      ],
    },
    {
      reason: 'a Service without the port, per port',
      have: { web: [80], api: [80, 443] },
      want: [
        {
          reason: 'ServicePortNotFound',
          service: 'api',
          port: 8080,
          servicePorts: [80, 443],
          fields: ['spec.rules[1].action.forward.service'],
        },
        {
          reason: 'ServicePortNotFound',
          service: 'web',
          port: 9090,
          servicePorts: [80],
          fields: ['spec.rules[3].action.forward.service'],
        },
      ],
    },
    {
      reason: 'a Service without ports at all',
      have: { web: [80, 9090], api: [] },
      want: [
        {
          reason: 'ServicePortNotFound',
          service: 'api',
          port: 8080,
          servicePorts: [],
          fields: ['spec.rules[1].action.forward.service'],
        },
      ],
    },
  ])('$reason', ({ have, want }) => {
    expect(missingBackends(spec, services(have))).toEqual(want);
  });

  it('looks up only the names the spec gives (the caller scopes them to the namespace)', () => {
    const asked: string[] = [];
    missingBackends(spec, (name) => {
      asked.push(name);
      return undefined;
    });
    expect(asked).toEqual(['web', 'api', 'web', 'web']);
  });
});

describe('missingBackendsReady', () => {
  const notFound = (service: string, ...fields: string[]): MissingBackend => ({
    reason: 'ServiceNotFound',
    service,
    port: 80,
    servicePorts: [],
    fields,
  });
  const noPort: MissingBackend = {
    reason: 'ServicePortNotFound',
    service: 'web',
    port: 9090,
    servicePorts: [80, 443],
    fields: ['spec.rules[3].action.forward.service'],
  };

  it('is undefined when nothing is missing', () => {
    expect(missingBackendsReady([], 'shop')).toBeUndefined();
  });
  it.each([
    {
      reason: 'a missing Service: the field, the value, the namespace and the fix',
      missing: [notFound('web', 'spec.rules[0].action.forward.service')],
      want: {
        reason: 'ServiceNotFound',
        message:
          'spec.rules[0].action.forward.service.name "web": Service web does not exist in namespace shop; create Service web in namespace shop or correct the name.',
      },
    },
    {
      reason: 'other fields naming the same Service',
      missing: [
        notFound(
          'web',
          'spec.listeners[0].defaultAction.forward.service',
          'spec.rules[2].action.forward.service',
        ),
      ],
      want: {
        reason: 'ServiceNotFound',
        message:
          'spec.listeners[0].defaultAction.forward.service.name "web" (also spec.rules[2].action.forward.service.name): Service web does not exist in namespace shop; create Service web in namespace shop or correct the name.',
      },
    },
    {
      reason: 'a missing port: the ports the Service has, and the fix',
      missing: [noPort],
      want: {
        reason: 'ServicePortNotFound',
        message:
          'spec.rules[3].action.forward.service.port 9090: Service web in namespace shop has no port 9090 (it has 80, 443); add port 9090 to Service web or correct the port.',
      },
    },
    {
      reason: 'a name no Service can have is said to be one',
      missing: [notFound('Web\r\n', 'spec.rules[0].action.forward.service')],
      want: {
        reason: 'ServiceNotFound',
        message:
          'spec.rules[0].action.forward.service.name "Web\\r\\n": no Service can have this name (a Service name is a lowercase DNS label); correct the name.',
      },
    },
  ])('$reason', ({ missing, want }) => {
    expect(missingBackendsReady(missing, 'shop')).toEqual({ ready: false, actionRequired: true, ...want });
  });
  it.each([
    {
      reason: 'a missing Service outranks a missing port and comes first, and both are told',
      missing: [noPort, notFound('api', 'spec.rules[1].action.forward.service')],
      want: 'ServiceNotFound',
      message: /^spec\.rules\[1\].*correct the name\. spec\.rules\[3\].*correct the port\.$/,
    },
    {
      reason: 'three are spelled out, then how many more',
      missing: ['a', 'b', 'c', 'd', 'e'].map((s, i) =>
        notFound(s, `spec.rules[${i}].action.forward.service`),
      ),
      want: 'ServiceNotFound',
      message: /Service c does not exist.*correct the name\. \(and 2 more\)$/,
    },
  ])('$reason', ({ missing, want, message }) => {
    const r = missingBackendsReady(missing, 'shop');
    expect(r).toMatchObject({ ready: false, actionRequired: true, reason: want });
    expect(r?.message).toMatch(message);
  });
});

describe('carriedBackendsReady', () => {
  const ready = (c: Partial<Condition>): Condition => ({
    type: 'Ready',
    status: 'False',
    reason: 'ServiceNotFound',
    message: 'Service web does not exist',
    lastTransitionTime: '2026-11-22T01:00:00Z',
    observedGeneration: 2,
    ...c,
  });
  it.each([
    {
      reason: 'a verdict for this generation is kept',
      c: ready({}),
      want: {
        ready: false,
        reason: 'ServiceNotFound',
        message: 'Service web does not exist',
        actionRequired: true,
      },
    },
    {
      reason: 'a missing port likewise',
      c: ready({ reason: 'ServicePortNotFound', message: 'no port 80' }),
      want: { ready: false, reason: 'ServicePortNotFound', message: 'no port 80', actionRequired: true },
    },
    { reason: 'not one judged against an older spec', c: ready({ observedGeneration: 1 }), want: undefined },
    { reason: 'not another reason', c: ready({ reason: 'Provisioning' }), want: undefined },
    { reason: 'not a Ready=True', c: ready({ status: 'True', reason: 'Available' }), want: undefined },
    { reason: 'nothing without a condition', c: undefined, want: undefined },
  ])('$reason', ({ c, want }) => {
    expect(carriedBackendsReady(c, 2)).toEqual(want);
  });
  it('knows its reasons', () => {
    expect([isBackendReason('ServiceNotFound'), isBackendReason('ServicePortNotFound')]).toEqual([
      true,
      true,
    ]);
    expect([isBackendReason('NotFound'), isBackendReason(undefined)]).toEqual([false, false]);
  });
});

describe('ingressReadiness', () => {
  const available = { ready: true, reason: 'Available' };
  const provisioning = { ready: false, reason: 'Provisioning', message: 'load balancer is provisioning' };
  const failed = { ready: false, reason: 'Failed', message: 'no free IP addresses' };
  const missing = {
    ready: false,
    reason: 'ServiceNotFound',
    message: 'create Service web',
    actionRequired: true,
  };
  it.each([
    { reason: 'all there: the load balancer decides', lb: available, backends: undefined, want: available },
    {
      reason: 'a missing Service beside an active load balancer',
      lb: available,
      backends: missing,
      want: missing,
    },
    {
      reason: 'a missing Service is told while provisioning',
      lb: provisioning,
      backends: missing,
      want: missing,
    },
    { reason: 'a failed load balancer comes first', lb: failed, backends: missing, want: failed },
    {
      reason: 'provisioning with every backend there',
      lb: provisioning,
      backends: undefined,
      want: provisioning,
    },
  ])('$reason', ({ lb, backends, want }) => {
    expect(ingressReadiness(lb, backends)).toEqual(want);
  });
});
