import { describe, expect, it } from 'vitest';
import { parseBudget, parseDuration, parseRunOptions, UsageError } from '../../src/operator/options.ts';

describe('parseRunOptions', () => {
  it('applies defaults', () => {
    const o = parseRunOptions([], { AWS_REGION: 'eu-west-1' });
    expect(o).toMatchObject({
      region: 'eu-west-1',
      namespaces: [],
      workers: 16,
      resyncPeriodMs: 600_000,
      probeAddress: ':8080',
      leaderElection: true,
      leaderElectionNamespace: 'skylift-system',
      leaderElectionId: 'skylift-leader',
      logLevel: 'info',
      logFormat: 'json',
      clusterId: 'default',
      shutdownDeadlineMs: 20_000,
      awsTimeoutMs: 15_000,
      kubeTimeoutMs: 30_000,
      teamPolicyRequired: false,
    });
  });

  it('reads --team-policy-required from the flag or SKYLIFT_TEAM_POLICY_REQUIRED', () => {
    expect(parseRunOptions(['--team-policy-required=true'], { AWS_REGION: 'x' }).teamPolicyRequired).toBe(
      true,
    );
    expect(
      parseRunOptions([], { AWS_REGION: 'x', SKYLIFT_TEAM_POLICY_REQUIRED: 'yes' }).teamPolicyRequired,
    ).toBe(true);
    expect(() => parseRunOptions(['--team-policy-required', 'sometimes'], { AWS_REGION: 'x' })).toThrow(
      /--team-policy-required: want true or false/,
    );
  });

  it('reads the environment and lets flags win', () => {
    const env = {
      AWS_DEFAULT_REGION: 'us-west-2',
      SKYLIFT_WORKERS: '8',
      SKYLIFT_NAMESPACES: 'a, b,,c',
      POD_NAMESPACE: 'ops',
      SKYLIFT_LEADER_ELECT: 'false',
    };
    const o = parseRunOptions(
      ['--workers', '2', '--resync-period=30s', '--log-format', 'text', '--aws-timeout', '5s'],
      { ...env, SKYLIFT_KUBE_TIMEOUT: '10s' },
    );
    expect(o).toMatchObject({
      region: 'us-west-2',
      workers: 2,
      namespaces: ['a', 'b', 'c'],
      leaderElectionNamespace: 'ops',
      leaderElection: false,
      resyncPeriodMs: 30_000,
      logFormat: 'text',
      awsTimeoutMs: 5000,
      kubeTimeoutMs: 10_000,
    });
  });

  it.each([
    { reason: 'no region', argv: [], env: {}, msg: /no AWS region/ },
    { reason: 'unknown flag', argv: ['--wat'], env: { AWS_REGION: 'x' }, msg: /wat/ },
    { reason: 'zero workers', argv: ['--workers', '0'], env: { AWS_REGION: 'x' }, msg: /--workers/ },
    {
      reason: 'bad duration',
      argv: ['--resync-period', '10 minutes'],
      env: { AWS_REGION: 'x' },
      msg: /invalid duration/,
    },
    { reason: 'bad bool', argv: ['--leader-elect', 'maybe'], env: { AWS_REGION: 'x' }, msg: /true or false/ },
    { reason: 'bad format', argv: ['--log-format', 'xml'], env: { AWS_REGION: 'x' }, msg: /json or text/ },
    { reason: 'bad level', argv: ['--log-level', 'loud'], env: { AWS_REGION: 'x' }, msg: /unknown level/ },
    { reason: 'no AWS deadline', argv: ['--aws-timeout', '0s'], env: { AWS_REGION: 'x' }, msg: /above zero/ },
  ])('rejects $reason with a usage error', ({ argv, env, msg }) => {
    expect(() => parseRunOptions(argv, env)).toThrow(UsageError);
    expect(() => parseRunOptions(argv, env)).toThrow(msg);
  });

  it('parses durations', () => {
    expect([
      parseDuration('1500ms'),
      parseDuration('2s'),
      parseDuration('1.5m'),
      parseDuration('1h'),
    ]).toEqual([1500, 2000, 90_000, 3_600_000]);
  });
});

describe('--aws-requests-per-second', () => {
  it('parses service=rate pairs', () => {
    expect(parseBudget('route53=5, rds=8')).toEqual({ route53: 5, rds: 8 });
    expect(parseBudget('')).toEqual({});
  });
  it.each(['dynamodb=5', 'route53=0', 'route53=1001', 'route53', 'route53=2.5'])(
    'refuses %s naming the flag, the services and an example',
    (text) => {
      expect(() => parseBudget(text)).toThrow(
        /--aws-requests-per-second: want SERVICE=N pairs with SERVICE one of route53, elasticloadbalancing, rds, ec2 and N from 1 to 1000, e\.g\. route53=5,rds=10/,
      );
    },
  );
});
