// The record of the user's tag keys on an AWS resource, and the changes that follow a spec's tags.
import { describe, expect, it } from 'vitest';
import {
  appliedUserTagKeys,
  hasUserTagChanges,
  userTagChanges,
  userTagKeysTag,
  userTagRecord,
} from '../../src/providers/aws/tags.ts';

const owner = { 'skylift.dev/uid': 'u1', 'skylift.dev/owner': 'ns/a' };

describe('user tags', () => {
  it('records the keys Skylift applied, and nothing when the spec has none', () => {
    expect(userTagRecord([])).toEqual({});
    expect(userTagRecord(['team', 'cost-center'])).toEqual({ [userTagKeysTag]: 'cost-center,team' });
    expect(appliedUserTagKeys({ [userTagKeysTag]: 'cost-center,team', team: 'web' })).toEqual([
      'cost-center',
      'team',
    ]);
  });

  it('never records or removes Skylift’s or AWS’s own keys, even when the spec names them', () => {
    expect(userTagRecord(['skylift.dev/uid', 'aws:cloudformation:stack-name', 'team'])).toEqual({
      [userTagKeysTag]: 'team',
    });
    const forged = { ...owner, [userTagKeysTag]: 'skylift.dev/uid,aws:x,team', team: 'web', 'aws:x': '1' };
    const c = userTagChanges({}, forged);
    expect(c.remove).toEqual(['team']);
  });

  it('removes a key Skylift applied once the spec drops it, and leaves tags others added', () => {
    const have = { ...owner, [userTagKeysTag]: 'team,tier', team: 'web', tier: 'gold', backup: 'daily' };
    const c = userTagChanges({ team: 'web' }, have);
    expect(c).toEqual({ remove: ['tier'], add: { [userTagKeysTag]: 'team' }, removeAfter: [] });
    expect(userTagChanges({ team: 'web', tier: 'gold' }, have)).toEqual({
      remove: [],
      add: {},
      removeAfter: [],
    });
    expect(hasUserTagChanges(userTagChanges({ team: 'web', tier: 'gold' }, have))).toBe(false);
  });

  it('adds and changes tags with the new record, and drops the record when no user tag is left', () => {
    const have = { ...owner, [userTagKeysTag]: 'team', team: 'web' };
    expect(userTagChanges({ team: 'api', env: 'prod' }, have)).toEqual({
      remove: [],
      add: { team: 'api', env: 'prod', [userTagKeysTag]: 'env,team' },
      removeAfter: [],
    });
    expect(userTagChanges(undefined, have)).toEqual({
      remove: ['team'],
      add: {},
      removeAfter: [userTagKeysTag],
    });
  });

  it('splits a long record over several tags of at most 256 characters, and reads it back whole', () => {
    const keys = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}-${'x'.repeat(20)}`);
    const record = userTagRecord(keys);
    expect(Object.keys(record).length).toBeGreaterThan(1);
    for (const v of Object.values(record)) expect(v.length).toBeLessThanOrEqual(256);
    expect(appliedUserTagKeys(record).sort()).toEqual([...keys].sort());
    // Shrunk to one key: the extra record tags go last.
    const have = { ...record, ...Object.fromEntries(keys.map((k) => [k, 'v'])) };
    const c = userTagChanges({ [keys[0] ?? '']: 'v' }, have);
    expect(c.remove).toHaveLength(29);
    expect(c.removeAfter).toEqual(Object.keys(record).filter((k) => k !== userTagKeysTag));
  });

  it('reads a record a crash left half-applied (keys removed, record not yet rewritten) as done', () => {
    const have = { ...owner, [userTagKeysTag]: 'team,tier', team: 'web' };
    expect(userTagChanges({ team: 'web' }, have)).toEqual({
      remove: [],
      add: { [userTagKeysTag]: 'team' },
      removeAfter: [],
    });
  });
});
