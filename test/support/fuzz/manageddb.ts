// ManagedDB specs for the fuzz test: valid small instances of the three
// engines and mutations of them. Valid specs never set deletionProtection
// (it would block the test's own cleanup) and skip the final snapshot.
import fc from 'fast-check';
import { hostileString, injectionSamples, unicodeSamples } from './hostile.ts';
import { fuzzCases, pinned, type FuzzCase, type Mutation } from './mutate.ts';
import { compact, dnsLabel, plainTags } from './values.ts';

const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const hhmm = (h: number, m: number): string => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;

const versions = {
  postgres: ['16', '15.4', '14'],
  mysql: ['8.0', '8.0.35'],
  mariadb: ['10.11', '10.6'],
} as const;

/**
 * Whether a valid spec may leave engineVersion out. moto 5.2.5 has no default
 * version for mariadb and answers CreateDBInstance with a 500 (KeyError), which
 * the operator rightly retries; real RDS picks its default version.
 */
const mayOmitVersion = { postgres: true, mysql: true, mariadb: false } as const;

// RDS refuses a backup window that overlaps the maintenance window. Valid specs
// keep backups in 00:00-11:30 and maintenance in 15:00-23:00, which also
// misses moto's default backup window (13:14-13:44; real RDS picks a free one).

/** A valid ManagedDB spec: engine and version, class, storage, backups, windows, tags, connection Secret. */
export function validManagedDbSpec(): fc.Arbitrary<Record<string, unknown>> {
  const engine = fc.constantFrom('postgres', 'mysql', 'mariadb');
  return fc
    .tuple(
      engine.chain((e) =>
        fc.tuple(
          fc.constant(e),
          mayOmitVersion[e]
            ? fc.option(fc.constantFrom(...versions[e]), { nil: undefined })
            : fc.constantFrom(...versions[e]),
        ),
      ),
      fc.constantFrom('db.t3.micro', 'db.t4g.small', 'db.m5.large'),
      fc.integer({ min: 20, max: 1000 }),
      fc.option(fc.constantFrom('gp2', 'gp3'), { nil: undefined }),
      fc.option(
        dnsLabel.map((l) => `d${l.replace(/[^a-z0-9]/g, '')}`),
        { nil: undefined },
      ),
      dnsLabel.map((l) => `u${l.slice(0, 10)}`),
      fc.option(
        fc
          .tuple(fc.integer({ min: 0, max: 35 }), fc.integer({ min: 0, max: 10 }), fc.constantFrom(0, 30))
          .map(([retentionDays, h, m]) => ({ retentionDays, window: `${hhmm(h, m)}-${hhmm(h + 1, m)}` })),
        { nil: undefined },
      ),
      fc.option(
        fc
          .tuple(fc.constantFrom(...days), fc.integer({ min: 15, max: 22 }))
          .map(([d, h]) => `${d}:${hhmm(h, 0)}-${d}:${hhmm(h + 1, 0)}`),
        { nil: undefined },
      ),
      fc.record({ multiAZ: fc.boolean(), publiclyAccessible: fc.boolean(), storageEncrypted: fc.boolean() }),
      fc.option(fc.record({ managedByAWS: fc.boolean() }), { nil: undefined }),
      fc.option(
        dnsLabel.map((l) => `${l}-db`),
        { nil: undefined },
      ),
      plainTags,
    )
    .map(
      ([
        [eng, engineVersion],
        instanceClass,
        allocatedStorage,
        storageType,
        dbName,
        masterUsername,
        backup,
        maintenanceWindow,
        flags,
        password,
        secret,
        tags,
      ]) =>
        compact({
          engine: eng,
          engineVersion,
          instanceClass,
          allocatedStorage,
          storageType,
          dbName,
          masterUsername,
          backup,
          maintenanceWindow,
          ...flags,
          password,
          writeConnectionSecretToRef: secret === undefined ? undefined : { name: secret },
          finalSnapshot: { enabled: false },
          tags: Object.keys(tags).length > 0 ? tags : undefined,
          deletionPolicy: 'Delete',
        }),
    );
}

/** The ManagedDB fields the mutations attack. */
const paths: readonly (readonly (string | number)[])[] = [
  ['engine'],
  ['engineVersion'],
  ['tags'],
  ['instanceClass'],
  ['allocatedStorage'],
  ['maxAllocatedStorage'],
  ['storageType'],
  ['iops'],
  ['dbName'],
  ['masterUsername'],
  ['password'],
  ['password', 'managedByAWS'],
  ['subnetGroupName'],
  ['vpcSecurityGroupIds'],
  ['vpcSecurityGroupIds', 0],
  ['backup'],
  ['backup', 'retentionDays'],
  ['backup', 'window'],
  ['backup', 'snapshotSchedule'],
  ['backup', 'keepSnapshots'],
  ['maintenanceWindow'],
  ['restoreFrom'],
  ['restoreFrom', 'snapshotIdentifier'],
  ['writeConnectionSecretToRef'],
  ['writeConnectionSecretToRef', 'name'],
  ['multiAZ'],
  ['externalName'],
];

const fits = (max: number): fc.Arbitrary<string> =>
  hostileString.filter((s) => s.length > 0 && s.length <= max);

/** A whitespace-free token, for the five fields of a cron schedule. */
const cronField = fc.oneof(
  fc.constantFrom(
    '*',
    '*/0',
    '99',
    '-1',
    '1-0',
    '0/0',
    '*/99999999999',
    'L',
    '?',
    'MON-FOO',
    '1,,2',
    '$(id)',
    '{{7*7}}',
  ),
  fits(12).map((s) => s.replace(/\s/g, '_')),
);

/** Values that pass the schema where it allows free text, so they reach the operator and RDS. */
const targeted: fc.Arbitrary<Mutation[]> = fc.oneof(
  fc
    .array(cronField, { minLength: 5, maxLength: 5 })
    .map((f): Mutation[] => [{ op: 'set', path: ['backup', 'snapshotSchedule'], value: f.join(' ') }]),
  fits(255).map((v): Mutation[] => [{ op: 'set', path: ['subnetGroupName'], value: v }]),
  fits(255).map((v): Mutation[] => [{ op: 'set', path: ['restoreFrom'], value: { snapshotIdentifier: v } }]),
  fc
    .constantFrom('postgres', 'rdsadmin', 'admin', 'select', 'user')
    .map((v): Mutation[] => [{ op: 'set', path: ['masterUsername'], value: v }]),
  fc
    .constantFrom('db.zzz.huge', 'db.x1e.32xlarge', 'db.t3.micro0')
    .map((v): Mutation[] => [{ op: 'set', path: ['instanceClass'], value: v }]),
  fc
    .constantFrom('0', '999', '16.99.99', '8.0', '10.11')
    .map((v): Mutation[] => [{ op: 'set', path: ['engineVersion'], value: v }]),
  fc
    .constantFrom(['sg-0'], ['sg-deadbeef', 'sg-deadbeef'])
    .map((v): Mutation[] => [{ op: 'set', path: ['vpcSecurityGroupIds'], value: v }]),
  fc
    .tuple(fc.constantFrom(...injectionSamples, ...unicodeSamples), fits(256))
    .map(([k, v]): Mutation[] => [
      { op: 'set', path: ['tags'], value: { [k]: v, [`${k}x`.repeat(70)]: 'x' } },
    ]),
  fc
    .constantFrom('sky-nope-000000', 'arn:aws:rds:us-east-1:123456789012:db:nope', ...injectionSamples)
    .map((v): Mutation[] => [{ op: 'set', path: ['externalName'], value: v }]),
  fc
    .constantFrom('mon:25:00-mon:26:00', 'sun:04:00-sun:03:00', 'mon:00:00-sun:23:59', 'sat:29:59-sun:00:00')
    .map((v): Mutation[] => [{ op: 'set', path: ['maintenanceWindow'], value: v }]),
  fc
    .tuple(
      fc.constantFrom('io1', 'io2', 'gp3'),
      fc.integer({ min: 1000, max: 256000 }),
      fc.integer({ min: 20, max: 100 }),
    )
    .map(([storageType, iops, allocatedStorage]): Mutation[] => [
      { op: 'set', path: ['storageType'], value: storageType },
      { op: 'set', path: ['iops'], value: iops },
      { op: 'set', path: ['allocatedStorage'], value: allocatedStorage },
    ]),
);

/** ManagedDB cases (valid, mutated, targeted). */
export function managedDbCases(): fc.Arbitrary<FuzzCase> {
  return fuzzCases(validManagedDbSpec(), paths, [['tags']], targeted);
}

const pinnedBase = {
  engine: 'postgres',
  engineVersion: '16',
  instanceClass: 'db.t3.micro',
  allocatedStorage: 20,
  masterUsername: 'app',
  finalSnapshot: { enabled: false },
};

/** ManagedDB inputs tried in every run: each injection category where the API takes free text. */
export const managedDbPinned: readonly FuzzCase[] = [
  pinned(pinnedBase, 'path traversal as subnet group', [
    { op: 'set', path: ['subnetGroupName'], value: '../../etc/passwd' },
  ]),
  pinned(pinnedBase, 'shell and template injection in a snapshot schedule', [
    { op: 'set', path: ['backup'], value: { snapshotSchedule: '$(rm -rf /) {{7*7}} * * *' } },
  ]),
  pinned(pinnedBase, 'SQL injection and NUL as restore snapshot', [
    { op: 'set', path: ['restoreFrom'], value: { snapshotIdentifier: "'; DROP TABLE users; --%00" } },
  ]),
  pinned(pinnedBase, 'CRLF in tags', [
    { op: 'set', path: ['tags'], value: { 'a\r\nb': 'c\r\nd', team: '{{7*7}}' } },
  ]),
];
