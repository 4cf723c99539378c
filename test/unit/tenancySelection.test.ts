import { describe, expect, it } from 'vitest';
import type { TeamPolicy, TeamPolicySpec } from '../../src/apis/teampolicy.ts';
import { policySelections, policySelects, selectorMatches, tenancyOf } from '../../src/tenancy/selection.ts';

const policy = (name: string, namespaces: TeamPolicySpec['namespaces']): TeamPolicy => ({
  metadata: { name },
  spec: { namespaces },
});
const ns = (name: string, labels: Record<string, string> = {}) => ({ name, labels });

describe('selectorMatches', () => {
  it('needs every matchLabels entry', () => {
    expect(selectorMatches({ matchLabels: { team: 'a' } }, { team: 'a', x: 'y' })).toBe(true);
    expect(selectorMatches({ matchLabels: { team: 'a', env: 'prod' } }, { team: 'a' })).toBe(false);
  });
  it('applies In, NotIn, Exists and DoesNotExist', () => {
    const labels = { team: 'a', env: 'prod' };
    expect(
      selectorMatches({ matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }, labels),
    ).toBe(true);
    expect(
      selectorMatches({ matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }] }, labels),
    ).toBe(false);
    expect(
      selectorMatches({ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, labels),
    ).toBe(false);
    expect(
      selectorMatches({ matchExpressions: [{ key: 'gone', operator: 'NotIn', values: ['x'] }] }, labels),
    ).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: 'team', operator: 'Exists' }] }, labels)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, labels)).toBe(
      false,
    );
    expect(
      selectorMatches({ matchExpressions: [{ key: 'gone', operator: 'In', values: ['x'] }] }, labels),
    ).toBe(false);
  });
  it('matches everything when empty', () => {
    expect(selectorMatches({}, {})).toBe(true);
  });
});

describe('tenancyOf', () => {
  const a = policy('team-a', { names: ['a'] });
  const b = policy('team-b', { selector: { matchLabels: { team: 'b' } } });
  it('is unrestricted when no policy exists', () => {
    expect(tenancyOf(ns('a'), [])).toEqual({ kind: 'unrestricted' });
  });
  it('refuses every namespace while no policy exists when policies are required (fails closed)', () => {
    const t = tenancyOf(ns('a'), [], { required: true });
    expect(t).toEqual({
      kind: 'refused',
      message:
        "namespace a is not selected by any TeamPolicy, and this installation serves only namespaces a TeamPolicy selects (--team-policy-required), also while none exists: ask the platform team to add a to a TeamPolicy's spec.namespaces",
    });
    expect(tenancyOf(ns('a'), [a, b], { required: true })).toEqual({ kind: 'policy', policy: a });
  });
  it('says why policies are required when told (the installation has served teams)', () => {
    const t = tenancyOf(ns('a'), [], { required: true, because: 'it has served teams' });
    expect(t.kind === 'refused' ? t.message : '').toContain(
      'serves only namespaces a TeamPolicy selects (it has served teams), also while none exists',
    );
    expect(tenancyOf(ns('a'), [], { because: 'ignored unless required' })).toEqual({ kind: 'unrestricted' });
  });
  it('gives the one selecting policy, by name or by label', () => {
    expect(tenancyOf(ns('a'), [a, b])).toEqual({ kind: 'policy', policy: a });
    expect(tenancyOf(ns('b1', { team: 'b' }), [a, b])).toEqual({ kind: 'policy', policy: b });
    expect(policySelects(a, ns('ab'))).toBe(false);
  });
  it('refuses a namespace no policy selects, naming it and the fix', () => {
    const t = tenancyOf(ns('c'), [a, b]);
    expect(t.kind).toBe('refused');
    expect(t.kind === 'refused' && t.message).toBe(
      "namespace c is not selected by any TeamPolicy; once a TeamPolicy exists Skylift serves only the namespaces one selects: ask the platform team to add c to a TeamPolicy's spec.namespaces",
    );
  });
  it('refuses a namespace two policies select, naming both', () => {
    const t = tenancyOf(ns('a', { team: 'b' }), [a, b]);
    expect(t.kind === 'refused' && t.message).toBe(
      "namespace a is selected by 2 TeamPolicies (team-a, team-b); a namespace must have exactly one: remove it from all but one policy's spec.namespaces",
    );
  });
});

describe('policySelections', () => {
  it('lists each policy’s namespaces and the overlaps on both sides', () => {
    const a = policy('team-a', { names: ['a', 'shared'] });
    const b = policy('team-b', { selector: { matchLabels: { team: 'b' } } });
    const sel = policySelections(
      [a, b],
      [ns('a'), ns('shared', { team: 'b' }), ns('b1', { team: 'b' }), ns('x')],
    );
    expect(sel.get('team-a')?.namespaces).toEqual(['a', 'shared']);
    expect(sel.get('team-b')?.namespaces).toEqual(['b1', 'shared']);
    expect([...(sel.get('team-a')?.overlaps ?? [])]).toEqual([['team-b', ['shared']]]);
    expect([...(sel.get('team-b')?.overlaps ?? [])]).toEqual([['team-a', ['shared']]]);
  });
});
