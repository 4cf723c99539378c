// The pure parts of the rollout driver (bench/lib/rollouts.ts) and its load: the app's manifest,
// the loopback-only and bounded load, the median.
import { describe, expect, it } from 'vitest';
import { medianOf, rolloutCases, rolloutManifest } from '../../bench/lib/rollouts.ts';
import { isLoopback, startLoad } from '../../bench/lib/trafficLoad.ts';

describe('rollout driver', () => {
  it('gives the gated app a preStop pause and a grace period 10 s longer, the plain one neither', () => {
    const tag = { key: 'kubernetes.io/role/elb', value: '1' };
    const gated = rolloutManifest('img:1', 8, tag);
    expect(gated).toContain('sleep: { seconds: 8 }');
    expect(gated).toContain('terminationGracePeriodSeconds: 18');
    expect(gated).toContain("kubernetes.io/role/elb: '1'");
    const plain = rolloutManifest('img:1', undefined, tag);
    expect(plain).not.toContain('preStop');
    expect(plain).toContain('terminationGracePeriodSeconds: 2');
  });

  it('measures five changes, rolling updates first', () => {
    expect(rolloutCases).toEqual([
      'rolling maxSurge 1 / maxUnavailable 0',
      'rolling maxSurge 0 / maxUnavailable 1',
      'scale 3→1',
      'scale 1→3',
      'a Pod deleted',
    ]);
  });

  it('takes the nearest-rank median, null for none', () => {
    expect(medianOf([])).toBeNull();
    expect(medianOf([3000, 1000, 2000])).toBe(2000);
    expect(medianOf([1000, 2000])).toBe(1000);
  });

  it('sends load to loopback only, and only bounded', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('10.244.0.2')).toBe(false);
    expect(isLoopback('127.0.0.1.example.com')).toBe(false);
    expect(() => startLoad({ host: '10.0.0.1', port: 80 }, 10, 1000)).toThrow(/loopback only/);
    expect(() => startLoad({ host: '127.0.0.1', port: 80 }, Infinity, 1000)).toThrow(/bounded/);
  });
});
