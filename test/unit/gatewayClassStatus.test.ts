// What Skylift writes on a GatewayClass (src/gatewayapi/gatewayClassStatus.ts, features.ts): pure.
import { describe, expect, it } from 'vitest';
import { skyliftGatewayControllerName, type GatewayClass } from '../../src/apis/gatewayApi.ts';
import { skyliftSupportedFeatures, supportedFeaturesStatus } from '../../src/gatewayapi/features.ts';
import {
  desiredGatewayClassStatus,
  gatewayClassStatusHolds,
  isSkyliftClass,
} from '../../src/gatewayapi/gatewayClassStatus.ts';
import { isGatewayApiMode } from '../../src/gatewayapi/frontEnd.ts';
import { parseRunOptions } from '../../src/operator/options.ts';

const now = new Date('2026-11-27T10:00:00.123Z');

function gatewayClass(
  over: Partial<GatewayClass['spec']> = {},
  status?: GatewayClass['status'],
): GatewayClass {
  return {
    metadata: { name: 'skylift', generation: 3 },
    spec: { controllerName: skyliftGatewayControllerName, ...over },
    ...(status !== undefined ? { status } : {}),
  };
}

describe('supportedFeatures', () => {
  it('lists the GATEWAY-HTTP core features, GRPCRoute and the extended ones Skylift claims, as {name} objects sorted by name', () => {
    expect(supportedFeaturesStatus()).toEqual([
      { name: 'GRPCRoute' },
      { name: 'Gateway' },
      { name: 'GatewayPort8080' },
      { name: 'HTTPRoute' },
      { name: 'HTTPRouteMethodMatching' },
      { name: 'HTTPRouteParentRefPort' },
      { name: 'HTTPRoutePortRedirect' },
      { name: 'HTTPRouteSchemeRedirect' },
      { name: 'ReferenceGrant' },
    ]);
    // Not claimed: what an ALB cannot do as the specification asks.
    expect(skyliftSupportedFeatures).not.toContain('HTTPRouteQueryParamMatching');
    expect(skyliftSupportedFeatures).not.toContain('HTTPRoutePathRedirect');
  });

  it.each([
    { reason: 'unsorted input', names: ['HTTPRoute', 'Gateway'], want: ['Gateway', 'HTTPRoute'] },
    { reason: 'a name twice', names: ['Gateway', 'Gateway'], want: ['Gateway'] },
    // Go sorts strings by bytes: upper case before lower case.
    {
      reason: 'byte order',
      names: ['HTTPRouteHostRewrite', 'HTTPRoute', 'GRPCRoute'],
      want: ['GRPCRoute', 'HTTPRoute', 'HTTPRouteHostRewrite'],
    },
  ])('sorts and deduplicates: $reason', ({ names, want }) => {
    expect(supportedFeaturesStatus(names).map((f) => f.name)).toEqual(want);
  });
});

describe('desiredGatewayClassStatus', () => {
  it.each([
    {
      reason: 'no parametersRef: accepted',
      gc: gatewayClass(),
      status: 'True',
      why: 'Accepted',
      message: /^Accepted by Skylift \(aws\.skylift\.dev\/gateway-controller\)$/,
    },
    {
      reason: 'a parametersRef: Skylift takes none',
      gc: gatewayClass({ parametersRef: { group: '', kind: 'ConfigMap', name: 'p', namespace: 'ns' } }),
      status: 'False',
      why: 'InvalidParameters',
      message: /no parameters: spec\.parametersRef \(core\/ConfigMap ns\/p\) must be unset/,
    },
  ])('$reason', ({ gc, status, why, message }) => {
    const want = desiredGatewayClassStatus(gc, now);
    expect(want.conditions).toHaveLength(1);
    expect(want.conditions[0]).toMatchObject({
      type: 'Accepted',
      status,
      reason: why,
      observedGeneration: 3,
      lastTransitionTime: '2026-11-27T10:00:00Z',
    });
    expect(want.conditions[0]?.message).toMatch(message);
    expect(want.supportedFeatures).toEqual(supportedFeaturesStatus());
  });

  it('keeps lastTransitionTime while the status stays, and moves it when it changes', () => {
    const earlier = '2026-01-01T00:00:00Z';
    const accepted = {
      type: 'Accepted',
      status: 'True' as const,
      reason: 'Accepted',
      message: 'old',
      lastTransitionTime: earlier,
      observedGeneration: 1,
    };
    expect(
      desiredGatewayClassStatus(gatewayClass({}, { conditions: [accepted] }), now).conditions[0]
        ?.lastTransitionTime,
    ).toBe(earlier);
    // The CRD's default (Unknown, Pending) to True is a transition.
    const pending = { ...accepted, status: 'Unknown' as const, reason: 'Pending' };
    expect(
      desiredGatewayClassStatus(gatewayClass({}, { conditions: [pending] }), now).conditions[0]
        ?.lastTransitionTime,
    ).toBe('2026-11-27T10:00:00Z');
  });
});

describe('gatewayClassStatusHolds', () => {
  const gc = gatewayClass();
  const want = desiredGatewayClassStatus(gc, now);
  const written = gatewayClass(
    {},
    { conditions: [...want.conditions], supportedFeatures: [...want.supportedFeatures] },
  );
  it.each([
    { reason: 'exactly what is wanted', gc: written, holds: true },
    {
      reason: 'another writer’s condition beside it',
      gc: gatewayClass(
        {},
        {
          conditions: [
            ...want.conditions,
            {
              type: 'Other',
              status: 'True',
              reason: 'X',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
          supportedFeatures: [...want.supportedFeatures],
        },
      ),
      holds: true,
    },
    {
      reason: 'only lastTransitionTime differs',
      gc: gatewayClass(
        {},
        {
          conditions: want.conditions.map((c) => ({ ...c, lastTransitionTime: '2020-01-01T00:00:00Z' })),
          supportedFeatures: [...want.supportedFeatures],
        },
      ),
      holds: true,
    },
    { reason: 'no status', gc, holds: false },
    {
      reason: 'an older observedGeneration',
      gc: gatewayClass(
        {},
        {
          conditions: want.conditions.map((c) => ({ ...c, observedGeneration: 2 })),
          supportedFeatures: [...want.supportedFeatures],
        },
      ),
      holds: false,
    },
    {
      reason: 'features missing',
      gc: gatewayClass({}, { conditions: [...want.conditions], supportedFeatures: [{ name: 'Gateway' }] }),
      holds: false,
    },
    {
      reason: 'the CRD default',
      gc: gatewayClass(
        {},
        {
          conditions: [
            {
              type: 'Accepted',
              status: 'Unknown',
              reason: 'Pending',
              message: 'Waiting for controller',
              lastTransitionTime: '1970-01-01T00:00:00Z',
            },
          ],
        },
      ),
      holds: false,
    },
  ])('$reason → $holds', ({ gc: have, holds }) => {
    expect(gatewayClassStatusHolds(have, want)).toBe(holds);
  });

  it('tells Skylift’s classes from other controllers’', () => {
    expect(isSkyliftClass(gc)).toBe(true);
    expect(isSkyliftClass(gatewayClass({ controllerName: 'example.net/gateway-controller' }))).toBe(false);
  });
});

describe('--gateway-api', () => {
  it.each([
    { reason: 'default', argv: [], env: {}, want: 'auto' },
    { reason: 'flag', argv: ['--gateway-api=off'], env: {}, want: 'off' },
    { reason: 'environment', argv: [], env: { SKYLIFT_GATEWAY_API: 'off' }, want: 'off' },
    {
      reason: 'flag wins',
      argv: ['--gateway-api', 'auto'],
      env: { SKYLIFT_GATEWAY_API: 'off' },
      want: 'auto',
    },
  ])('$reason: $want', ({ argv, env, want }) => {
    expect(parseRunOptions(argv, { AWS_REGION: 'x', ...env }).gatewayApi).toBe(want);
  });
  it('refuses anything else, naming the flag and the choices', () => {
    expect(() => parseRunOptions(['--gateway-api=on'], { AWS_REGION: 'x' })).toThrow(
      /--gateway-api: want auto or off, got "on"/,
    );
    expect(isGatewayApiMode('auto')).toBe(true);
    expect(isGatewayApiMode('true')).toBe(false);
  });
});
