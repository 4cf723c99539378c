// MyIngress's flags reach MyIngressGroup's controllers: the group kind declares them shared
// (KindModule.sharedFlags), so `skylift run --elbv2-full-check-period …` tunes a group's shared
// load balancer (and a Gateway's) as it tunes a MyIngress's own. The controllers are replaced by
// recorders of the settings they are built with.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { KindPlumbing } from '../../src/kinds/module.ts';
import { myIngressGroupKind } from '../../src/kinds/myingress/group/index.ts';
import { myIngressKind } from '../../src/kinds/myingress/index.ts';
import { defaultMyIngressSettings, type MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import { kinds } from '../../src/kinds/registry.ts';
import { kindFlagOptions, kindFlagUsage, parseRunOptions } from '../../src/operator/options.ts';

const built = vi.hoisted(() => ({ group: [] as unknown[], gateway: [] as unknown[] }));

vi.mock('../../src/kinds/myingress/group/controller.ts', () => ({
  myIngressGroupController: (_s: unknown, settings: unknown) => {
    built.group.push(settings);
    return {};
  },
  // The Gateway controller's TeamPolicy judge (none: the plumbing has no tenant source).
  gatewayTenancyOptions: () => ({}),
}));
vi.mock('../../src/kinds/myingress/gateway/groupController.ts', () => ({
  gatewayGroupController: (_s: unknown, settings: unknown) => {
    built.gateway.push(settings);
    return {};
  },
}));
vi.mock('../../src/kinds/myingress/gateway/gatewayController.ts', () => ({
  GatewayController: function GatewayController() {
    return {};
  },
}));

const region = { AWS_REGION: 'eu-west-1' };
const plumbing = {
  logger: { child: () => ({}) },
  settings: { namespaces: undefined },
} as unknown as KindPlumbing;

/** The settings the group's controller and the Gateway groups' controller are built with. */
function groupSettings(argv: string[], env: NodeJS.ProcessEnv = {}): unknown[] {
  const group = parseRunOptions(argv, { ...region, ...env }, kinds).kinds.find(
    (k) => k.module === myIngressGroupKind,
  );
  if (group === undefined) throw new Error('no MyIngressGroup kind configured');
  group.controller(plumbing);
  group.gatewayApi?.(plumbing);
  return [...built.group, ...built.gateway];
}

beforeEach(() => {
  built.group.length = 0;
  built.gateway.length = 0;
});

describe("MyIngress's flags reach MyIngressGroup", () => {
  it.each<{ reason: string; argv: string[]; env?: NodeJS.ProcessEnv; want: Partial<MyIngressSettings> }>([
    {
      reason: '--elbv2-full-check-period',
      argv: ['--elbv2-full-check-period', '5m'],
      want: { fullCheckMs: 300_000 },
    },
    {
      reason: '--target-health-gate-poll-period',
      argv: ['--target-health-gate-poll-period=3s'],
      want: { gatePollMs: 3000 },
    },
    {
      reason: '--acm-certificate-list-max-age',
      argv: ['--acm-certificate-list-max-age', '1m'],
      want: { certificateListMaxAgeMs: 60_000 },
    },
    {
      reason: 'SKYLIFT_ELBV2_FULL_CHECK_PERIOD, when the flag is not given',
      argv: [],
      env: { SKYLIFT_ELBV2_FULL_CHECK_PERIOD: '0s' },
      want: { fullCheckMs: 0 },
    },
  ])('$reason reaches the group controller and the Gateway groups controller', ({ argv, env, want }) => {
    const settings = groupSettings(argv, env);
    expect(settings).toHaveLength(2);
    for (const s of settings) expect(s).toEqual({ ...defaultMyIngressSettings, ...want });
  });

  it('builds the group controllers with the defaults when no flag is given', () => {
    for (const s of groupSettings([])) expect(s).toEqual(defaultMyIngressSettings);
  });

  it('refuses a bad value of a shared flag naming it', () => {
    expect(() => groupSettings(['--elbv2-full-check-period', 'soon'])).toThrow(/--elbv2-full-check-period/);
  });

  it('lists and parses a shared flag once, under its owner, and still without its owner in the registry', () => {
    const usage = kindFlagUsage(kinds);
    expect(usage.match(/--elbv2-full-check-period /g)).toHaveLength(1);
    // The group lists its own (the Gateway controller's) flags, and MyIngress's as shared.
    expect(kindFlagUsage([myIngressGroupKind])).toContain(kindFlagUsage([myIngressKind]));
    expect(Object.keys(kindFlagOptions([myIngressGroupKind]))).toEqual(
      expect.arrayContaining(Object.keys(kindFlagOptions([myIngressKind]))),
    );
    const alone = parseRunOptions(['--elbv2-full-check-period', '2h'], region, [myIngressGroupKind]);
    expect(alone.kinds.map((k) => k.module)).toEqual([myIngressGroupKind]);
  });
});
