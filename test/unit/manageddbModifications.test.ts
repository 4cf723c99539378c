// Issue 14, items 12 and 13: RDS moves some things by itself (automatic minor upgrades, storage
// autoscaling); the spec's version and size are floors, not pins, and a downgrade is refused clearly.
import type { DBInstance } from '@aws-sdk/client-rds';
import { describe, expect, it } from 'vitest';
import type { ManagedDB, ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import { modificationsFor, versionSatisfied } from '../../src/kinds/manageddb/modifications.ts';
import { TerminalError } from '../../src/runtime/errors.ts';

const spec = (extra: Partial<ManagedDBSpec> = {}): ManagedDBSpec => ({
  engine: 'postgres',
  engineVersion: '16.4',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  masterUsername: 'app',
  ...extra,
});
const mdb = (extra: Partial<ManagedDBSpec> = {}): ManagedDB => ({
  metadata: { name: 'x' },
  spec: spec(extra),
});
const db: DBInstance = {
  DBInstanceClass: 'db.t3.micro',
  AllocatedStorage: 20,
  EngineVersion: '16.4',
  BackupRetentionPeriod: 7,
  MultiAZ: false,
  DeletionProtection: false,
  PubliclyAccessible: false,
};

describe('versionSatisfied: the spec is a floor within its major version', () => {
  it.each([
    { reason: 'the same version', want: '16.4', have: '16.4', ok: true },
    { reason: 'a major version only', want: '16', have: '16.4', ok: true },
    { reason: 'an automatic minor upgrade', want: '16.4', have: '16.6', ok: true },
    { reason: 'a newer patch', want: '8.0.35', have: '8.0.36', ok: true },
    { reason: 'a two-digit minor', want: '16.9', have: '16.10', ok: true },
    { reason: 'an older minor', want: '16.6', have: '16.4', ok: false },
    { reason: 'another major', want: '16', have: '160.1', ok: false },
    { reason: 'a newer major', want: '16.4', have: '17.1', ok: false },
    { reason: 'no spec', want: undefined, have: '8.0.35', ok: true },
  ])('$reason: $want vs $have → $ok', ({ want, have, ok }) => {
    expect(versionSatisfied(want, have)).toBe(ok);
  });
});

describe('modificationsFor with what RDS changed by itself', () => {
  it('asks for nothing after an automatic minor upgrade', () => {
    expect(modificationsFor(mdb(), { ...db, EngineVersion: '16.6' }).changes).toEqual([]);
  });

  it('asks for nothing after storage autoscaling grew the volume within maxAllocatedStorage', () => {
    expect(
      modificationsFor(mdb({ maxAllocatedStorage: 100 }), {
        ...db,
        AllocatedStorage: 42,
        MaxAllocatedStorage: 100,
      }).changes,
    ).toEqual([]);
  });

  it('still refuses shrinking storage the spec lowered without autoscaling', () => {
    expect(() => modificationsFor(mdb({ allocatedStorage: 20 }), { ...db, AllocatedStorage: 50 })).toThrow(
      /cannot shrink/,
    );
  });

  it('refuses a major downgrade as a downgrade, naming the field and the running version', () => {
    const err = (() => {
      try {
        modificationsFor(mdb({ engineVersion: '15' }), { ...db, EngineVersion: '16.4' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(TerminalError);
    expect(String(err)).toContain('spec.engineVersion 15 is older than the running 16.4');
    expect(String(err)).not.toContain('major upgrade');
  });

  it('still upgrades when the spec asks for a newer minor version', () => {
    expect(modificationsFor(mdb({ engineVersion: '16.8' }), db).input).toMatchObject({
      EngineVersion: '16.8',
    });
  });
});
