// Issue 14, items 12 and 13: RDS moves some things by itself (automatic minor upgrades, storage
// autoscaling); the spec's version and size are floors, not pins, and a downgrade is refused clearly.
import type { DBInstance } from '@aws-sdk/client-rds';
import { describe, expect, it } from 'vitest';
import type { ManagedDB, ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import {
  acceptedEngineVersion,
  engineVersionToAccept,
  modificationsFor,
  versionSatisfied,
} from '../../src/kinds/manageddb/modifications.ts';
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

// Issue 14, item 12: a spec lowered from 16.4 to 16.1 on an instance running 16.4 was "in sync"
// silently. What the user asked before (status.acceptedEngineVersion) tells a lowered spec from a
// floor that RDS's automatic minor upgrade moved past.
describe('modificationsFor: engineVersion against the version accepted before', () => {
  const withAccepted = (engineVersion: string | undefined, accepted: string | undefined): ManagedDB => {
    const { engineVersion: _default, ...rest } = spec();
    return {
      metadata: { name: 'x' },
      spec: engineVersion !== undefined ? { ...rest, engineVersion } : rest,
      ...(accepted !== undefined ? { status: { acceptedEngineVersion: accepted } } : {}),
    };
  };
  const downgrade = (want: string, running: string): RegExp =>
    new RegExp(
      `spec\\.engineVersion ${want.replace(/\./g, '\\.')} is older than the running ${running.replace(/\./g, '\\.')}: RDS cannot downgrade an instance; set spec\\.engineVersion to ${running.replace(/\./g, '\\.')} or newer \\(to go back, restore a snapshot .* into a new ManagedDB`,
    );

  it.each([
    {
      reason: 'a spec lowered within the major on an instance running the old spec is refused',
      want: '16.1',
      running: '16.4',
      accepted: '16.4',
      refused: true,
    },
    {
      reason: 'a spec lowered below the accepted version after an automatic upgrade is refused',
      want: '16.2',
      running: '16.6',
      accepted: '16.4',
      refused: true,
    },
    {
      reason: 'an unchanged spec after an automatic minor upgrade stays in sync',
      want: '16.4',
      running: '16.6',
      accepted: '16.4',
      refused: false,
    },
    {
      reason: 'a spec raised but still below an automatically upgraded version stays in sync',
      want: '16.5',
      running: '16.6',
      accepted: '16.4',
      refused: false,
    },
    {
      reason: 'a spec set back to the running version (the advice of the message) is in sync',
      want: '16.4',
      running: '16.4',
      accepted: '16.4',
      refused: false,
    },
    {
      reason: 'a major-only spec is not older than any of its minors',
      want: '16',
      running: '16.4',
      accepted: '16.4',
      refused: false,
    },
    {
      reason: 'no accepted version (adoption, or an object from before it was recorded): the spec is a floor',
      want: '16.1',
      running: '16.4',
      accepted: undefined,
      refused: false,
    },
    {
      reason: 'no accepted version, another major: still refused',
      want: '15',
      running: '16.4',
      accepted: undefined,
      refused: true,
    },
  ])('$reason ($want, running $running, accepted $accepted)', ({ want, running, accepted, refused }) => {
    const run = () => modificationsFor(withAccepted(want, accepted), { ...db, EngineVersion: running });
    if (refused) {
      expect(run).toThrow(TerminalError);
      expect(run).toThrow(downgrade(want, running));
    } else {
      expect(run().changes).toEqual([]);
    }
  });

  it('issues the upgrade as before when the spec is raised to a newer minor', () => {
    expect(modificationsFor(withAccepted('16.8', '16.4'), db)).toEqual({
      input: { EngineVersion: '16.8' },
      changes: ['engine 16.4 → 16.8'],
    });
  });

  it.each([
    { reason: 'the spec’s value once accepted', want: '16.1', accepted: '16.4', record: '16.1' },
    { reason: 'the spec’s value with none recorded', want: '16.4', accepted: undefined, record: '16.4' },
    {
      reason: 'the previous value when the spec names none',
      want: undefined,
      accepted: '16.4',
      record: '16.4',
    },
    { reason: 'nothing when neither names one', want: undefined, accepted: undefined, record: undefined },
  ])('records $reason', ({ want, accepted, record }) => {
    const mr = withAccepted(want, accepted);
    expect(acceptedEngineVersion(mr)).toBe(accepted);
    expect(engineVersionToAccept(mr)).toBe(record);
  });
});

describe('modificationsFor: fields issue 27 found accepted and ignored', () => {
  const gp3: DBInstance = { ...db, StorageType: 'gp3' };
  it.each([
    {
      reason: 'storageType changed',
      spec: { storageType: 'io1' as const, iops: 3000 },
      have: gp3,
      input: { StorageType: 'io1', Iops: 3000 },
    },
    {
      reason: 'iops changed',
      spec: { storageType: 'io1' as const, iops: 4000 },
      have: { ...db, StorageType: 'io1', Iops: 3000 },
      input: { Iops: 4000 },
    },
    {
      reason: 'maxAllocatedStorage removed (autoscaling off: the limit set to the allocated storage)',
      spec: {},
      have: { ...gp3, MaxAllocatedStorage: 100 },
      input: { MaxAllocatedStorage: 20 },
    },
    {
      reason: 'password.managedByAWS turned on',
      spec: { password: { managedByAWS: true } },
      have: gp3,
      input: { ManageMasterUserPassword: true },
    },
    { reason: 'nothing changed', spec: {}, have: gp3, input: {} },
    {
      reason: 'AWS already manages the password',
      spec: { password: { managedByAWS: true } },
      have: { ...gp3, MasterUserSecret: { SecretArn: 'arn:aws:secretsmanager:x' } },
      input: {},
    },
    {
      reason: 'a storage type change already pending',
      spec: { storageType: 'gp2' as const },
      have: { ...gp3, PendingModifiedValues: { StorageType: 'gp2' } },
      input: {},
    },
  ])('$reason', ({ spec: extra, have, input }) => {
    expect(modificationsFor(mdb(extra), have).input).toEqual(input);
  });
});
