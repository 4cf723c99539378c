// The pure parts of the ALB data plane (dev/albDataPlane/): rule matching, redirect rendering,
// weighted choice, the health state machine on a fake clock, the DescribeTargetHealth rewrite.
import { describe, expect, it } from 'vitest';
import {
  chooseWeighted,
  renderRedirect,
  ruleOf,
  selectRule,
  wildcardMatch,
  type Action,
  type Condition,
  type ListenerRule,
  type RequestFacts,
} from '../../dev/albDataPlane/rules.ts';
import {
  afterCheck,
  HealthMonitor,
  matcherAccepts,
  registeredRecord,
  type CheckOutcome,
  type HealthCheckSettings,
  type HealthRecord,
} from '../../dev/albDataPlane/health.ts';
import { requestedTargets, rewriteTargetHealth } from '../../dev/albDataPlane/describeTargetHealth.ts';
import { FakeClock } from '../support/fakeClock.ts';

const base: RequestFacts = {
  method: 'GET',
  host: 'www.example.com',
  path: '/api/v1/items',
  query: 'Version=2&debug=true',
  headers: { 'user-agent': 'curl/8.5.0', 'x-team': 'Blue' },
  sourceIp: '192.0.2.10',
};

describe('wildcardMatch', () => {
  it.each([
    { reason: '* matches any run, also empty', p: '/api/*', v: '/api/', ci: false, want: true },
    { reason: '* spans slashes', p: '/api/*', v: '/api/v1/items', ci: false, want: true },
    { reason: '? matches exactly one character', p: '/v?', v: '/v1', ci: false, want: true },
    { reason: '? does not match zero characters', p: '/v?', v: '/v', ci: false, want: false },
    { reason: 'the whole value must match', p: '/api', v: '/api/x', ci: false, want: false },
    { reason: 'regex characters are literal', p: '/a.b', v: '/axb', ci: false, want: false },
    { reason: 'case-sensitive when asked', p: '/API/*', v: '/api/x', ci: false, want: false },
    { reason: 'case-insensitive when asked', p: '*.EXAMPLE.com', v: 'www.example.COM', ci: true, want: true },
  ])('$reason', ({ p, v, ci, want }) => {
    expect(wildcardMatch(p, v, ci)).toBe(want);
  });

  it.each([
    { reason: 'an escaped * is literal', p: 'a\\*', v: 'a*', want: true },
    { reason: 'an escaped * matches nothing else', p: 'a\\*', v: 'ab', want: false },
    { reason: 'an escaped ? is literal', p: '\\?', v: '?', want: true },
    { reason: 'an unescaped * stays a wildcard', p: 'a*', v: 'abc', want: true },
  ])('query string escapes: $reason', ({ p, v, want }) => {
    expect(wildcardMatch(p, v, true, true)).toBe(want);
  });

  it('reads a backslash literally without escapes (header and path conditions)', () => {
    expect(wildcardMatch('a\\*', 'a\\bc', false)).toBe(true);
  });
});

describe('rule conditions', () => {
  const cases: { reason: string; c: Condition; req?: Partial<RequestFacts>; want: boolean }[] = [
    {
      reason: 'host-header wildcard, case-insensitive',
      c: { field: 'host-header', values: ['*.EXAMPLE.com'] },
      want: true,
    },
    {
      reason: 'host-header ignores the port',
      c: { field: 'host-header', values: ['www.example.com'] },
      req: { host: 'www.example.com:8080' },
      want: true,
    },
    {
      reason: 'host-header ? is one character',
      c: { field: 'host-header', values: ['ww?.example.com'] },
      want: true,
    },
    {
      reason: 'host-header values are ORed',
      c: { field: 'host-header', values: ['a.test', 'www.example.com'] },
      want: true,
    },
    { reason: 'host-header no match', c: { field: 'host-header', values: ['api.example.com'] }, want: false },
    { reason: 'path-pattern wildcard', c: { field: 'path-pattern', values: ['/api/*'] }, want: true },
    {
      reason: 'path-pattern is case-sensitive',
      c: { field: 'path-pattern', values: ['/API/*'] },
      want: false,
    },
    {
      reason: 'path-pattern ignores the query',
      c: { field: 'path-pattern', values: ['*debug*'] },
      want: false,
    },
    {
      reason: 'http-header name case-insensitive, value wildcard case-insensitive',
      c: { field: 'http-header', name: 'X-Team', values: ['b*'] },
      want: true,
    },
    {
      reason: 'http-header absent',
      c: { field: 'http-header', name: 'x-missing', values: ['*'] },
      want: false,
    },
    {
      reason: 'http-header any occurrence',
      c: { field: 'http-header', name: 'x-multi', values: ['two'] },
      req: { headers: { 'x-multi': ['one', 'two'] } },
      want: true,
    },
    {
      reason: 'query-string key and value, case-insensitive',
      c: { field: 'query-string', values: [{ key: 'version', value: '2' }] },
      want: true,
    },
    {
      reason: 'query-string value only, any key',
      c: { field: 'query-string', values: [{ value: 'TRUE' }] },
      want: true,
    },
    {
      reason: 'query-string wildcards in key and value',
      c: { field: 'query-string', values: [{ key: 'deb?g', value: 't*' }] },
      want: true,
    },
    {
      reason: 'query-string wrong value',
      c: { field: 'query-string', values: [{ key: 'version', value: '3' }] },
      want: false,
    },
    {
      reason: 'query-string with no query',
      c: { field: 'query-string', values: [{ value: '*' }] },
      req: { query: '' },
      want: false,
    },
    {
      reason: 'http-request-method exact',
      c: { field: 'http-request-method', values: ['POST', 'GET'] },
      want: true,
    },
    {
      reason: 'http-request-method case-sensitive',
      c: { field: 'http-request-method', values: ['get'] },
      want: false,
    },
    { reason: 'source-ip in CIDR', c: { field: 'source-ip', values: ['192.0.2.0/24'] }, want: true },
    { reason: 'source-ip outside CIDR', c: { field: 'source-ip', values: ['198.51.100.0/24'] }, want: false },
    {
      reason: 'source-ip IPv4-mapped peer',
      c: { field: 'source-ip', values: ['127.0.0.0/8'] },
      req: { sourceIp: '::ffff:127.0.0.1' },
      want: true,
    },
    {
      reason: 'source-ip IPv6',
      c: { field: 'source-ip', values: ['2001:db8::/32'] },
      req: { sourceIp: '2001:db8::5' },
      want: true,
    },
  ];
  it.each(cases)('$reason', ({ c, req, want }) => {
    const rule: ListenerRule = {
      arn: 'r',
      priority: 1,
      conditions: [c],
      action: { type: 'fixed-response', statusCode: 200 },
    };
    const fallback: ListenerRule = {
      arn: 'd',
      priority: undefined,
      conditions: [],
      action: { type: 'fixed-response', statusCode: 404 },
    };
    expect(selectRule([fallback, rule], { ...base, ...req })?.arn).toBe(want ? 'r' : 'd');
  });
});

describe('selectRule', () => {
  const fixed = (statusCode: number): Action => ({ type: 'fixed-response', statusCode });
  const rules: ListenerRule[] = [
    { arn: 'default', priority: undefined, conditions: [], action: fixed(404) },
    {
      arn: 'p20',
      priority: 20,
      conditions: [{ field: 'path-pattern', values: ['/api/*'] }],
      action: fixed(200),
    },
    {
      arn: 'p10',
      priority: 10,
      conditions: [
        { field: 'path-pattern', values: ['/api/*'] },
        { field: 'http-header', name: 'x-team', values: ['red'] },
      ],
      action: fixed(201),
    },
    {
      arn: 'p5',
      priority: 5,
      conditions: [{ field: 'host-header', values: ['other.test'] }],
      action: fixed(202),
    },
  ];
  it.each([
    { reason: 'lowest priority whose conditions all hold wins', req: {}, want: 'p20' },
    {
      reason: 'every condition of a rule must hold (AND)',
      req: { headers: { 'x-team': 'red' } },
      want: 'p10',
    },
    {
      reason: 'the default rule is last, whatever order DescribeRules gave',
      req: { path: '/web' },
      want: 'default',
    },
    { reason: 'priority, not list order', req: { host: 'other.test' }, want: 'p5' },
  ])('$reason', ({ req, want }) => {
    expect(selectRule(rules, { ...base, ...req })?.arn).toBe(want);
  });

  it('reads DescribeRules answers: legacy Values, weighted forward, unknown conditions skip the rule', () => {
    expect(
      ruleOf({
        RuleArn: 'r1',
        Priority: '3',
        Conditions: [{ Field: 'path-pattern', Values: ['/a'] }],
        Actions: [
          {
            Type: 'forward',
            ForwardConfig: {
              TargetGroups: [
                { TargetGroupArn: 'a', Weight: 3 },
                { TargetGroupArn: 'b', Weight: 1 },
              ],
            },
          },
        ],
      }),
    ).toEqual({
      arn: 'r1',
      priority: 3,
      conditions: [{ field: 'path-pattern', values: ['/a'] }],
      action: {
        type: 'forward',
        targetGroups: [
          { arn: 'a', weight: 3 },
          { arn: 'b', weight: 1 },
        ],
      },
    });
    expect(
      ruleOf({
        RuleArn: 'd',
        Priority: 'default',
        IsDefault: true,
        Actions: [{ Type: 'forward', TargetGroupArn: 'tg' }],
      }),
    ).toMatchObject({ priority: undefined, action: { targetGroups: [{ arn: 'tg', weight: 1 }] } });
    expect(
      ruleOf({
        Priority: '1',
        Conditions: [{ Field: 'weird' }],
        Actions: [{ Type: 'forward', TargetGroupArn: 'tg' }],
      }),
    ).toBeUndefined();
  });
});

describe('renderRedirect', () => {
  const ctx = { protocol: 'HTTP', host: 'www.example.com', port: 80, path: '/a/b', query: 'x=1' };
  it.each([
    {
      reason: 'unset components keep the request’s values',
      a: {},
      want: 'http://www.example.com:80/a/b?x=1',
    },
    {
      reason: 'HTTP to HTTPS on 443',
      a: { protocol: 'HTTPS', port: '443' },
      want: 'https://www.example.com:443/a/b?x=1',
    },
    {
      reason: '#{path} drops its leading slash',
      a: { path: '/new/#{path}' },
      want: 'http://www.example.com:80/new/a/b?x=1',
    },
    {
      reason: '#{host} in the host',
      a: { host: 'example.#{host}' },
      want: 'http://example.www.example.com:80/a/b?x=1',
    },
    {
      reason: '#{query} extended',
      a: { query: '#{query}&value=xyz' },
      want: 'http://www.example.com:80/a/b?x=1&value=xyz',
    },
    {
      reason: '#{host} and #{port} in the path',
      a: { path: '/#{host}/#{port}' },
      want: 'http://www.example.com:80/www.example.com/80?x=1',
    },
    { reason: 'an empty query leaves no ?', a: { query: '' }, want: 'http://www.example.com:80/a/b' },
    {
      reason: '#{protocol} kept explicitly',
      a: { protocol: '#{protocol}', port: '8080' },
      want: 'http://www.example.com:8080/a/b?x=1',
    },
  ])('$reason', ({ a, want }) => {
    expect(renderRedirect({ type: 'redirect', statusCode: 301, ...a }, ctx)).toBe(want);
  });
});

describe('chooseWeighted', () => {
  const groups = [
    { arn: 'a', weight: 3 },
    { arn: 'zero', weight: 0 },
    { arn: 'b', weight: 1 },
  ];
  it.each([
    { reason: 'the first quarter… of a 3:1 split', r: 0, want: 'a' },
    { reason: 'just below 3/4 still a', r: 0.7499, want: 'a' },
    { reason: 'from 3/4 on b; weight 0 is never chosen', r: 0.75, want: 'b' },
    { reason: 'the top end', r: 0.9999, want: 'b' },
  ])('$reason', ({ r, want }) => {
    expect(chooseWeighted(groups, () => r)?.arn).toBe(want);
  });
  it('honours weights over many draws and answers undefined when all weights are 0', () => {
    let seed = 1;
    const rng = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const counts = { a: 0, b: 0, zero: 0 };
    for (let i = 0; i < 4000; i++) counts[chooseWeighted(groups, rng)?.arn as 'a' | 'b']++;
    expect(counts.zero).toBe(0);
    expect(counts.a / 4000).toBeGreaterThan(0.7);
    expect(counts.a / 4000).toBeLessThan(0.8);
    expect(chooseWeighted([{ weight: 0 }], rng)).toBeUndefined();
  });
});

describe('health', () => {
  const pass: CheckOutcome = { ok: true };
  const fail: CheckOutcome = {
    ok: false,
    reason: 'Target.ResponseCodeMismatch',
    description: 'codes: [500]',
  };
  const t = { healthy: 3, unhealthy: 2 };
  const run = (outcomes: CheckOutcome[], from: HealthRecord = registeredRecord): string[] => {
    let rec = from;
    return outcomes.map((o) => (rec = afterCheck(rec, o, t)).state);
  };

  it.each([
    {
      reason: 'a new target is healthy after one passed check, as AWS documents',
      seq: [pass],
      want: ['healthy'],
    },
    {
      reason: 'a new target failing the unhealthy threshold is unhealthy',
      seq: [fail, fail],
      want: ['initial', 'unhealthy'],
    },
    {
      reason: 'healthy → unhealthy after UnhealthyThresholdCount consecutive failures',
      seq: [pass, fail, pass, fail, fail],
      want: ['healthy', 'healthy', 'healthy', 'healthy', 'unhealthy'],
    },
    {
      reason: 'unhealthy → healthy after HealthyThresholdCount consecutive passes',
      seq: [fail, fail, pass, pass, fail, pass, pass, pass],
      want: [
        'initial',
        'unhealthy',
        'unhealthy',
        'unhealthy',
        'unhealthy',
        'unhealthy',
        'unhealthy',
        'healthy',
      ],
    },
  ])('$reason', ({ seq, want }) => {
    expect(run(seq)).toEqual(want);
  });

  it('initialPasses can require more than one pass for a new target', () => {
    let rec = registeredRecord;
    rec = afterCheck(rec, pass, { ...t, initialPasses: 2 });
    expect(rec).toMatchObject({ state: 'initial', reason: 'Elb.InitialHealthChecking' });
    expect(afterCheck(rec, pass, { ...t, initialPasses: 2 }).state).toBe('healthy');
  });

  it.each([
    { m: '200', s: 200, want: true },
    { m: '200', s: 204, want: false },
    { m: '200,202', s: 202, want: true },
    { m: '200-299', s: 299, want: true },
    { m: '200-299', s: 301, want: false },
    { m: '200-299, 404', s: 404, want: true },
  ])('matcher $m accepts $s: $want', ({ m, s, want }) => {
    expect(matcherAccepts(m, s)).toBe(want);
  });

  it('the monitor checks every interval on its clock, times out slow checks and drains', async () => {
    const clock = new FakeClock();
    const settings: HealthCheckSettings = {
      intervalMs: 10_000,
      timeoutMs: 5_000,
      healthy: 2,
      unhealthy: 2,
      path: '/',
      port: 'traffic-port',
      matcher: '200',
      protocol: 'HTTP',
    };
    const script: ('pass' | 'fail' | 'hang')[] = ['pass', 'fail', 'hang', 'pass', 'pass'];
    let calls = 0;
    const monitor = new HealthMonitor({
      clock,
      settings,
      probe: (signal) => {
        const step = script[calls++] ?? 'pass';
        if (step === 'hang')
          return new Promise((resolveHang) => {
            signal.addEventListener('abort', () => {
              resolveHang({ ok: false, reason: 'Target.FailedHealthChecks', description: 'aborted' });
            });
          });
        return Promise.resolve(step === 'pass' ? pass : fail);
      },
    });
    const flush = async (): Promise<void> => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    expect(monitor.record.state).toBe('initial');
    monitor.start();
    await flush();
    expect(monitor.record.state).toBe('healthy');
    clock.advance(10_000);
    await flush();
    expect(monitor.record).toMatchObject({ state: 'healthy', failures: 1 });
    clock.advance(10_000); // the third check hangs: no verdict before its timeout
    await flush();
    expect(monitor.record.failures).toBe(1);
    clock.advance(5_000);
    await flush();
    expect(monitor.record).toMatchObject({ state: 'unhealthy', reason: 'Target.Timeout' });
    clock.advance(5_000);
    await flush();
    expect(monitor.record.state).toBe('unhealthy');
    clock.advance(10_000);
    await flush();
    expect(monitor.record.state).toBe('healthy');
    expect(calls).toBe(5);
    monitor.drain();
    clock.advance(60_000);
    await flush();
    expect(calls).toBe(5);
    expect(monitor.record).toMatchObject({ state: 'draining', reason: 'Target.DeregistrationInProgress' });
    expect(clock.pending).toBe(0);
  });
});

describe('DescribeTargetHealth rewrite', () => {
  const member = (id: string, port: number, state: string): string =>
    `<member><Target><Id>${id}</Id><Port>${port}</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>${state}</State></TargetHealth></member>`;
  const xml = (members: string): string =>
    `<DescribeTargetHealthResponse><DescribeTargetHealthResult><TargetHealthDescriptions>${members}</TargetHealthDescriptions></DescribeTargetHealthResult></DescribeTargetHealthResponse>`;

  it('reports measured states, initial for unseen targets, and appends draining ones', () => {
    const out = rewriteTargetHealth(
      xml(
        member('10.0.0.1', 80, 'healthy') +
          member('10.0.0.2', 80, 'healthy') +
          member('10.0.0.3', 80, 'healthy'),
      ),
      [
        {
          id: '10.0.0.1',
          port: 80,
          state: 'unhealthy',
          reason: 'Target.Timeout',
          description: 'Request timed out',
        },
        { id: '10.0.0.2', port: 80, state: 'healthy' },
        { id: '10.0.0.9', port: 80, state: 'draining', reason: 'Target.DeregistrationInProgress' },
      ],
      undefined,
    );
    expect(out).toContain(
      '<Id>10.0.0.1</Id><Port>80</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>unhealthy</State><Reason>Target.Timeout</Reason><Description>Request timed out</Description></TargetHealth>',
    );
    expect(out).toContain(
      '<Id>10.0.0.2</Id><Port>80</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>healthy</State></TargetHealth>',
    );
    expect(out).toContain(
      '<Id>10.0.0.3</Id><Port>80</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>initial</State><Reason>Elb.RegistrationInProgress</Reason>',
    );
    expect(out).toContain(
      '<Id>10.0.0.9</Id><Port>80</Port></Target><HealthCheckPort>80</HealthCheckPort><TargetHealth><State>draining</State>',
    );
  });

  it('keeps a filtered answer to the targets asked for', () => {
    expect(
      requestedTargets('Action=DescribeTargetHealth&Targets.member.1.Id=10.0.0.1&Targets.member.1.Port=80'),
    ).toEqual([{ id: '10.0.0.1', port: 80 }]);
    const out = rewriteTargetHealth(
      xml(member('10.0.0.1', 80, 'unused')),
      [{ id: '10.0.0.9', port: 80, state: 'draining' }],
      [{ id: '10.0.0.1', port: 80 }],
    );
    expect(out).toContain('<State>unused</State>');
    expect(out).not.toContain('10.0.0.9');
    expect(rewriteTargetHealth('<ErrorResponse/>', [], undefined)).toBe('<ErrorResponse/>');
  });
});
