// Kinds' settings (their flags of `skylift run`, defaults and parsing), how
// the CLI hands each kind its flags, and the registry every part iterates.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apiVersionOf, type ResourceType } from '../../src/apis/meta.ts';
import {
  configureKinds,
  kindFlagUsage,
  parseRunOptions,
  runUsage,
  UsageError,
} from '../../src/operator/options.ts';
import { dnsRecordKind } from '../../src/kinds/dnsrecord/index.ts';
import {
  defaultDNSRecordSettings,
  dnsRecordFlags,
  parseDNSRecordSettings,
  type DNSRecordSettings,
} from '../../src/kinds/dnsrecord/settings.ts';
import { managedDbKind } from '../../src/kinds/manageddb/index.ts';
import {
  defaultManagedDBSettings,
  managedDbFlags,
  parseManagedDBSettings,
} from '../../src/kinds/manageddb/settings.ts';
import type { KindFlag, KindModule } from '../../src/kinds/module.ts';
import {
  defaultMyIngressSettings,
  myIngressFlags,
  parseMyIngressSettings,
} from '../../src/kinds/myingress/settings.ts';
import { kindNamed, kinds } from '../../src/kinds/registry.ts';
import { SettingsError } from '../../src/runtime/settings.ts';

const region = { AWS_REGION: 'eu-west-1' };

describe('DNSRecord settings', () => {
  it('defaults every setting when no flag is given', () => {
    expect(parseDNSRecordSettings(new Map())).toEqual(defaultDNSRecordSettings);
    expect(defaultDNSRecordSettings).toEqual({
      ownerPrefix: '_skylift-owner',
      batchWindowMs: 1000,
      zoneCacheTtlMs: 30_000,
      pollMs: 2000,
      referenceRetryMs: 60_000,
    });
  });

  it.each<{ reason: string; flag: string; value: string; want: Partial<DNSRecordSettings> }>([
    {
      reason: 'the TXT owner prefix',
      flag: 'txt-owner-prefix',
      value: '_owner',
      want: { ownerPrefix: '_owner' },
    },
    {
      reason: 'the longest TXT owner prefix',
      flag: 'txt-owner-prefix',
      value: 'a'.repeat(41),
      want: { ownerPrefix: 'a'.repeat(41) },
    },
    {
      reason: 'the batch window',
      flag: 'route53-batch-window',
      value: '250ms',
      want: { batchWindowMs: 250 },
    },
    {
      reason: 'the zone cache TTL',
      flag: 'route53-zone-cache-ttl',
      value: '2m',
      want: { zoneCacheTtlMs: 120_000 },
    },
  ])('reads $reason and defaults the rest', ({ flag, value, want }) => {
    expect(parseDNSRecordSettings(new Map([[flag, value]]))).toEqual({
      ...defaultDNSRecordSettings,
      ...want,
    });
  });

  it.each([
    { reason: 'a prefix with a dot (two labels)', flag: 'txt-owner-prefix', value: 'a.b' },
    { reason: 'a prefix starting with a hyphen', flag: 'txt-owner-prefix', value: '-owner' },
    { reason: 'an empty prefix', flag: 'txt-owner-prefix', value: '' },
    { reason: 'a prefix of 42 characters', flag: 'txt-owner-prefix', value: 'a'.repeat(42) },
    { reason: 'a batch window without a unit', flag: 'route53-batch-window', value: '100' },
    { reason: 'a zone cache TTL in words', flag: 'route53-zone-cache-ttl', value: 'a minute' },
  ])('refuses $reason with a SettingsError naming the flag', ({ flag, value }) => {
    const parse = (): DNSRecordSettings => parseDNSRecordSettings(new Map([[flag, value]]));
    expect(parse).toThrow(SettingsError);
    expect(parse).toThrow(new RegExp(`^--${flag}: `));
  });

  it('has a flag for every setting it parses, each with its own environment variable', () => {
    expect(dnsRecordFlags.map((f) => f.name)).toEqual([
      'txt-owner-prefix',
      'route53-batch-window',
      'route53-zone-cache-ttl',
    ]);
    expect(new Set(dnsRecordFlags.map((f) => f.env)).size).toBe(dnsRecordFlags.length);
  });
});

describe('ManagedDB settings', () => {
  it('defaults the poll interval', () => {
    expect(parseManagedDBSettings(new Map())).toEqual({ pollMs: 15_000 });
    expect(defaultManagedDBSettings).toEqual({ pollMs: 15_000 });
  });

  it('reads the poll interval', () => {
    expect(parseManagedDBSettings(new Map([['rds-poll-interval', '2s']]))).toEqual({ pollMs: 2000 });
  });

  it('refuses a bad poll interval with a SettingsError naming the flag', () => {
    const parse = (): unknown => parseManagedDBSettings(new Map([['rds-poll-interval', 'often']]));
    expect(parse).toThrow(SettingsError);
    expect(parse).toThrow(/^--rds-poll-interval: invalid duration "often"/);
  });

  it('prints its default in the usage as a duration the flag accepts', () => {
    expect(managedDbFlags.map((f) => f.usage)).toEqual([expect.stringContaining('(default 15s)')]);
  });
});

describe('MyIngress settings', () => {
  it('defaults the poll interval, the full-check period (an hour), the gate poll period (2 s) and the ACM list age (5 minutes)', () => {
    const defaults = {
      pollMs: 5000,
      fullCheckMs: 3_600_000,
      gatePollMs: 2000,
      certificateListMaxAgeMs: 300_000,
    };
    expect(parseMyIngressSettings(new Map())).toEqual(defaults);
    expect(defaultMyIngressSettings).toEqual(defaults);
  });

  it('reads the target-health gate poll period', () => {
    expect(parseMyIngressSettings(new Map([['target-health-gate-poll-period', '500ms']])).gatePollMs).toBe(
      500,
    );
  });

  it('reads the ACM certificate list age', () => {
    expect(
      parseMyIngressSettings(new Map([['acm-certificate-list-max-age', '1m']])).certificateListMaxAgeMs,
    ).toBe(60_000);
  });

  it('reads the full-check period; 0 makes every look a full one', () => {
    expect(parseMyIngressSettings(new Map([['elbv2-full-check-period', '15m']]))).toEqual({
      pollMs: 5000,
      fullCheckMs: 900_000,
      gatePollMs: 2000,
      certificateListMaxAgeMs: 300_000,
    });
    expect(parseMyIngressSettings(new Map([['elbv2-full-check-period', '0s']])).fullCheckMs).toBe(0);
  });

  it('refuses a bad full-check period with a SettingsError naming the flag', () => {
    const parse = (): unknown => parseMyIngressSettings(new Map([['elbv2-full-check-period', 'hourly']]));
    expect(parse).toThrow(SettingsError);
    expect(parse).toThrow(/^--elbv2-full-check-period: invalid duration "hourly"/);
  });

  it('has three flags, each with its own environment variable, and prints their defaults as durations', () => {
    expect(myIngressFlags.map((f) => [f.name, f.env])).toEqual([
      ['elbv2-full-check-period', 'SKYLIFT_ELBV2_FULL_CHECK_PERIOD'],
      ['target-health-gate-poll-period', 'SKYLIFT_TARGET_HEALTH_GATE_POLL_PERIOD'],
      ['acm-certificate-list-max-age', 'SKYLIFT_ACM_CERTIFICATE_LIST_MAX_AGE'],
    ]);
    expect(myIngressFlags[0]?.usage).toContain('(default 1h)');
    expect(myIngressFlags[1]?.usage).toContain('(default 2s)');
    expect(myIngressFlags[2]?.usage).toContain('(default 5m)');
  });
});

/** A kind with two flags that records the values each configure is given; "huge" is a bad size. */
function recordingKind(seen: Map<string, string>[]): KindModule {
  const type: ResourceType = {
    group: 'test.skylift.dev',
    version: 'v1',
    plural: 'widgets',
    kind: 'Widget',
    namespaced: true,
  };
  const kind: KindModule = {
    type,
    names: ['widget', 'widgets'],
    traceShows: 'nothing',
    fieldContract: {},
    crd: () => {
      throw new Error('no CRD in this test');
    },
    flags: [
      { name: 'widget-size', env: 'SKYLIFT_WIDGET_SIZE', placeholder: 'SIZE', usage: 'size (default small)' },
      {
        name: 'widget-color',
        env: 'SKYLIFT_WIDGET_COLOR',
        placeholder: 'COLOR',
        usage: 'color (default red)',
      },
    ],
    configure(values) {
      seen.push(new Map(values));
      if (values.get('widget-size') === 'huge') throw new SettingsError('--widget-size: too big');
      return {
        module: kind,
        controller: () => {
          throw new Error('no controller in this test');
        },
        trace: () => Promise.resolve([]),
      };
    },
    devFlags: [],
    commands: [],
    summarize: () => [],
  };
  return kind;
}

describe('configureKinds', () => {
  it('hands each kind the values of its own flags only, and returns the kinds in registry order', () => {
    const seen: Map<string, string>[] = [];
    const widget = recordingKind(seen);
    const given: Record<string, string> = { 'widget-size': 'small', 'rds-poll-interval': '3s' };
    const configured = configureKinds((f: KindFlag) => given[f.name], [widget, managedDbKind]);
    expect(configured.map((c) => c.module)).toEqual([widget, managedDbKind]);
    expect(seen).toEqual([new Map([['widget-size', 'small']])]);
  });

  it.each([
    { reason: "a kind's own SettingsError", flag: 'widget-size', value: 'huge' },
    { reason: 'a bad DNSRecord duration', flag: 'route53-batch-window', value: 'later' },
    { reason: 'a bad DNSRecord prefix', flag: 'txt-owner-prefix', value: 'a b' },
    { reason: 'a bad ManagedDB duration', flag: 'rds-poll-interval', value: '5' },
  ])('turns $reason into a UsageError naming the flag', ({ flag, value }) => {
    const registry = [recordingKind([]), dnsRecordKind, managedDbKind];
    const configure = (): unknown => configureKinds((f) => (f.name === flag ? value : undefined), registry);
    expect(configure).toThrow(UsageError);
    expect(configure).toThrow(new RegExp(`--${flag}\\b`));
  });
});

describe('kind flags of skylift run', () => {
  it('reads a kind flag from its flag, else from its environment variable', () => {
    const seen: Map<string, string>[] = [];
    const registry = [recordingKind(seen)];
    parseRunOptions(
      ['--widget-size', 'large'],
      { ...region, SKYLIFT_WIDGET_SIZE: 'tiny', SKYLIFT_WIDGET_COLOR: 'blue' },
      registry,
    );
    expect(seen).toEqual([
      new Map([
        ['widget-size', 'large'],
        ['widget-color', 'blue'],
      ]),
    ]);
  });

  it.each([
    {
      reason: 'a bad flag',
      argv: ['--route53-batch-window', 'later'],
      env: {},
      flag: 'route53-batch-window',
    },
    {
      reason: 'a bad environment variable',
      argv: [],
      env: { SKYLIFT_TXT_OWNER_PREFIX: 'a.b' },
      flag: 'txt-owner-prefix',
    },
    { reason: 'a bad ManagedDB flag', argv: ['--rds-poll-interval=1 s'], env: {}, flag: 'rds-poll-interval' },
  ])('refuses $reason with a UsageError naming the flag', ({ argv, env, flag }) => {
    const parse = (): unknown => parseRunOptions(argv, { ...region, ...env }, kinds);
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(`--${flag}`);
  });

  it('refuses the flag of a kind that is not in the registry given', () => {
    const argv = ['--rds-poll-interval', '5s'];
    expect(parseRunOptions(argv, region, kinds).kinds.map((k) => k.module)).toEqual(kinds);
    const onlyDns = (): unknown => parseRunOptions(argv, region, [dnsRecordKind]);
    expect(onlyDns).toThrow(UsageError);
    expect(onlyDns).toThrow(/rds-poll-interval/);
  });

  it("lists the given registry's flags, with their environment variables, and no others", () => {
    const usage = kindFlagUsage([recordingKind([]), dnsRecordKind]);
    const lines = usage.split('\n');
    expect(lines).toHaveLength(2 + dnsRecordFlags.length);
    expect(lines[0]).toMatch(/^ {2}--widget-size SIZE +size \[SKYLIFT_WIDGET_SIZE\] \(default small\)$/);
    expect(usage).not.toContain('rds-poll-interval');
  });

  it.each(kinds.flatMap((k) => k.flags.map((f) => ({ kind: k.type.kind, flag: f }))))(
    "lists $kind's --$flag.name in skylift run --help",
    ({ flag }) => {
      const line = runUsage.split('\n').find((l) => l.startsWith(`  --${flag.name} ${flag.placeholder}`));
      expect(line).toBeDefined();
      expect(line).toContain(`[${flag.env}]`);
    },
  );
});

describe('the kind registry', () => {
  it('has kinds of distinct types', () => {
    const types = kinds.map((k) => `${k.type.plural}.${k.type.group}`);
    expect(new Set(types).size).toBe(kinds.length);
    expect(new Set(kinds.map((k) => k.type.kind)).size).toBe(kinds.length);
  });

  it('has no name two kinds answer to, and only lower-case names', () => {
    const names = kinds.flatMap((k) => k.names);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toBe(n.toLowerCase());
  });

  it('has no flag or environment variable two kinds claim', () => {
    const flags = kinds.flatMap((k) => k.flags);
    expect(new Set(flags.map((f) => f.name)).size).toBe(flags.length);
    expect(new Set(flags.map((f) => f.env)).size).toBe(flags.length);
  });

  it.each(kinds.flatMap((k) => k.names.map((name) => ({ kind: k.type.kind, name, module: k }))))(
    'resolves $kind from "$name" in any case',
    ({ name, module }) => {
      expect(kindNamed(name)).toBe(module);
      expect(kindNamed(name.toUpperCase())).toBe(module);
      expect(kindNamed(name.charAt(0).toUpperCase() + name.slice(1))).toBe(module);
    },
  );

  it('resolves each kind from its Kind as written, and nothing from an unknown word', () => {
    for (const k of kinds) expect(kindNamed(k.type.kind)).toBe(k);
    expect(kindNamed('gadget')).toBeUndefined();
    expect(kindNamed('')).toBeUndefined();
  });

  it.each(kinds.map((k) => ({ kind: k.type.kind, module: k })))(
    '$kind has a health check whose Lua file exists',
    ({ module }) => {
      expect(module.healthCheck).toBeDefined();
      const lua = module.healthCheck?.lua;
      expect(lua?.protocol).toBe('file:');
      expect(lua !== undefined && existsSync(fileURLToPath(lua))).toBe(true);
    },
  );

  it.each(kinds.map((k) => ({ kind: k.type.kind, module: k })))(
    "$kind's CRD is named after its type and answers to its short names",
    ({ module }) => {
      const { type } = module;
      const crd = module.crd();
      expect(crd.metadata.name).toBe(`${type.plural}.${type.group}`);
      expect(crd.spec.group).toBe(type.group);
      expect(crd.spec.names.plural).toBe(type.plural);
      expect(crd.spec.names.kind).toBe(type.kind);
      expect(crd.spec.names.listKind).toBe(`${type.kind}List`);
      expect(crd.spec.scope).toBe(type.namespaced ? 'Namespaced' : 'Cluster');
      expect(crd.spec.versions.map((v) => v.name)).toContain(type.version);
      expect(apiVersionOf(type)).toBe(`${crd.spec.group}/${type.version}`);
      for (const short of crd.spec.names.shortNames) expect(module.names).toContain(short);
      expect(module.names).toContain(type.kind.toLowerCase());
      expect(module.names).toContain(type.plural);
    },
  );

  it.each(kinds.map((k) => ({ kind: k.type.kind, module: k })))(
    '$kind configures with its defaults from no flags, and accepts the flags skylift dev gives it',
    ({ module }) => {
      expect(module.configure(new Map()).module).toBe(module);
      expect(parseRunOptions([...module.devFlags], region, [module]).kinds.map((k) => k.module)).toEqual([
        module,
      ]);
    },
  );
});
