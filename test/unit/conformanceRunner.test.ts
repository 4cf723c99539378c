// The pure parts of `make conformance` (dev/conformance.ts): its flags, the suite's command line,
// reading a run's outcome, where a passing report is kept.
import { describe, expect, it } from 'vitest';
import { skyliftGatewayClassName } from '../../src/apis/gatewayApi.ts';
import {
  classifySuiteRun,
  describeSuiteOutcome,
  goDurationMs,
  keptReportPath,
  outlineLine,
  parseConformanceArgs,
  suiteCommandLine,
} from '../../dev/conformance.ts';

describe('parseConformanceArgs', () => {
  it('takes --timeout as a Go duration and passes everything else to the suite', () => {
    expect(parseConformanceArgs([])).toEqual({ timeout: '30m', suiteArgs: [] });
    expect(parseConformanceArgs(['--timeout', '1h30m', '-run-test=HTTPRouteSimpleSameNamespace'])).toEqual({
      timeout: '1h30m',
      suiteArgs: ['-run-test=HTTPRouteSimpleSameNamespace'],
    });
    expect(parseConformanceArgs(['-debug', '--timeout=45s'])).toEqual({
      timeout: '45s',
      suiteArgs: ['-debug'],
    });
  });

  it('refuses a timeout that is not a Go duration', () => {
    expect(() => parseConformanceArgs(['--timeout', '30'])).toThrow(/Go duration/);
    expect(() => parseConformanceArgs(['--timeout'])).toThrow(/got nothing/);
  });
});

describe('goDurationMs', () => {
  it('adds up the units', () => {
    expect(goDurationMs('30m')).toBe(1_800_000);
    expect(goDurationMs('1h30m10s')).toBe(5_410_000);
    expect(goDurationMs('250ms')).toBe(250);
  });
});

describe('suiteCommandLine', () => {
  it('runs TestConformance on the skylift class, the GATEWAY-HTTP profile, with a complete report', () => {
    const line = suiteCommandLine(
      { timeout: '30m', suiteArgs: ['-debug'] },
      { kubeconfig: '/k', reportOutput: '/r.yaml', skyliftVersion: '0.1.0' },
    );
    expect(line).toEqual([
      '-test.run=^TestConformance$',
      '-test.v',
      '-test.timeout=30m',
      '-kubeconfig=/k',
      `-gateway-class=${skyliftGatewayClassName}`,
      '-conformance-profiles=GATEWAY-HTTP',
      '-report-output=/r.yaml',
      '-organization=skylift-dev',
      '-project=skylift',
      '-url=https://github.com/skylift-dev/skylift',
      '-version=v0.1.0',
      '-contact=https://github.com/skylift-dev/skylift/issues',
      // What an ALB cannot do or Skylift refuses on purpose, each with its reason.
      '-skip-tests=HTTPRouteRequestHeaderModifier,GRPCExactMethodMatching,GRPCRouteHeaderMatching,GRPCRouteListenerHostnameMatching,GRPCRouteNamedRule,GRPCRouteWeight',
      // The user's flags last: a repeated Go flag's last value wins.
      '-debug',
    ]);
    expect(skyliftGatewayClassName).toBe('skylift');
  });
});

describe('classifySuiteRun', () => {
  it('reads the outcomes the runner explains', () => {
    expect(classifySuiteRun(0, 'PASS\n', false)).toEqual({ kind: 'passed' });
    // Today's run: the class lists no supported features (no controller writes them yet).
    const noFeatures = [
      '        \tError:      \tReceived unexpected error:',
      '        \t            \tno supported features were determined for test suite',
      '--- FAIL: TestConformance (0.02s)',
    ].join('\n');
    expect(classifySuiteRun(1, noFeatures, false)).toEqual({
      kind: 'gateway-class-not-served',
      said: 'no supported features were determined for test suite',
    });
    const notAccepted =
      '  \tMessages:   \terror waiting for skylift GatewayClass to have Accepted condition to be set: context deadline exceeded\n';
    expect(classifySuiteRun(1, notAccepted, false)).toMatchObject({ kind: 'gateway-class-not-served' });
    expect(
      classifySuiteRun(
        1,
        'error initializing conformance suite: multiple gateway API CRDs versions detected',
        false,
      ),
    ).toEqual({
      kind: 'crds-mismatch',
    });
    // The class Accepted, setup waits for the base Gateways (no Gateway controller yet).
    const baseNotReady = [
      'helpers.go:273: …: Gateway gateway-conformance-infra/all-namespaces expected observedGeneration to be updated to 1 for all conditions, only 0/2 were updated. stale conditions are: Accepted (generation 0), Programmed (generation 0)',
      'helpers.go:273: …: Gateway gateway-conformance-infra/all-namespaces expected observedGeneration to be updated to 1 for all conditions',
      '  Messages:   \terror waiting for gateway-conformance-infra, gateway-conformance-app-backend, gateway-conformance-web-backend namespaces to be ready',
      '--- FAIL: TestConformance (305.06s)',
    ].join('\n');
    expect(classifySuiteRun(1, baseNotReady, false)).toEqual({
      kind: 'base-not-ready',
      gateways: ['gateway-conformance-infra/all-namespaces'],
    });
    expect(
      describeSuiteOutcome(
        { kind: 'base-not-ready', gateways: ['gateway-conformance-infra/all-namespaces'] },
        'conformance.log',
        undefined,
      ),
    ).toMatch(
      /Gateways to be Accepted and Programmed \(it named gateway-conformance-infra\/all-namespaces\)/,
    );
    expect(classifySuiteRun(2, 'panic: test timed out after 30m0s', false)).toEqual({ kind: 'timed-out' });
    expect(classifySuiteRun(null, '', true)).toEqual({ kind: 'timed-out' });
    expect(classifySuiteRun(1, '--- FAIL: TestConformance/HTTPRouteSimpleSameNamespace', false)).toEqual({
      kind: 'failed',
      exitCode: 1,
    });
  });

  it('explains a class no controller serves, naming the log', () => {
    const text = describeSuiteOutcome(
      { kind: 'gateway-class-not-served', said: 'no supported features were determined for test suite' },
      '.skylift/conformance/conformance.log',
      undefined,
    );
    expect(text).toContain('No controller serves GatewayClass skylift');
    expect(text).toContain('status.supportedFeatures');
    expect(text).toContain('.skylift/conformance/conformance.log');
  });
});

describe('keptReportPath', () => {
  it('is under conformance/reports/<Gateway API version>/', () => {
    expect(keptReportPath('v1.6.3', '0.1.0', '/repo')).toBe(
      '/repo/conformance/reports/v1.6.3/skylift-v0.1.0-gateway-http-report.yaml',
    );
  });
});

describe('outlineLine', () => {
  it('keeps setup steps and verdicts for the console, not the suite’s chatter', () => {
    expect(outlineLine('=== RUN   TestConformance/HTTPRouteSimpleSameNamespace')).toBe(true);
    expect(outlineLine('    --- PASS: TestConformance/HTTPRouteSimpleSameNamespace (3.01s)')).toBe(true);
    expect(outlineLine('    suite.go:392: 2026-11-27T10:30:54Z: Test Setup: Applying base manifests')).toBe(
      true,
    );
    expect(
      outlineLine('    helpers.go:300: Pod gateway-conformance-infra/infra-backend-v1 not ready yet'),
    ).toBe(false);
  });
});
