// ManagedDB's part of a TeamPolicy: which engines, instance classes and how much storage a
// namespace's databases may use, whether they may be reachable from the internet, which network
// (security groups, DB subnet groups) they may join, and what costs money (storage type, IOPS,
// Multi-AZ, backup retention, scheduled snapshots).
import type { GuardrailSection, Permission, TeamPolicy } from '../../apis/teampolicy.ts';
import { permission } from '../../apis/teampolicy.ts';
import { arr, int, obj, str } from '../../apis/schema.ts';
import {
  celSection,
  celJoinOrNone,
  celListedOrPrefixed,
  celString,
  forbidsMessage,
  type AdmissionValidation,
  type KindAdmission,
} from '../../tenancy/admission.ts';
import { forbidden } from '../../tenancy/connector.ts';
import type { ManagedDBSpec } from './api.ts';

/** spec.guardrails.databases. */
export interface DatabaseGuardrails {
  engines?: ManagedDBSpec['engine'][];
  instanceClasses?: string[];
  maxAllocatedStorageGiB?: number;
  publicAccess?: Permission;
  restoreFrom?: { namespaces?: string[] };
  securityGroupIds?: string[];
  subnetGroups?: string[];
  storageTypes?: NonNullable<ManagedDBSpec['storageType']>[];
  maxIops?: number;
  multiAZ?: Permission;
  maxBackupRetentionDays?: number;
  maxScheduledSnapshots?: number;
}

export const databaseGuardrailSection: GuardrailSection = {
  key: 'databases',
  schema: obj('What ManagedDBs in the selected namespaces may use.', {
    engines: arr(
      'Allowed engines. Absent: any.',
      str('An engine.', { enum: ['postgres', 'mysql', 'mariadb'] }),
      {
        maxItems: 3,
      },
    ),
    instanceClasses: arr(
      'Allowed instance classes; an entry ending in * allows every class starting with the rest (db.t4g.* allows db.t4g.micro and db.t4g.large). Absent: any.',
      str('A class or a prefix with *.', { pattern: '^db\\.[a-z0-9.*]+$', maxLength: 64 }),
      { maxItems: 64 },
    ),
    maxAllocatedStorageGiB: int(
      'The most storage a database may have or grow to (spec.allocatedStorage and spec.maxAllocatedStorage), in GiB. Absent: no limit.',
      { minimum: 20, maximum: 65536 },
    ),
    publicAccess: permission('Whether a database may have a public address (spec.publiclyAccessible: true).'),
    securityGroupIds: arr(
      'The VPC security groups a database may be in (spec.vpcSecurityGroupIds, which must then be set: RDS’s default would be the VPC’s default group). Absent: any.',
      str('A security group ID.', { pattern: '^sg-[0-9a-f]+$' }),
      { maxItems: 64 },
    ),
    subnetGroups: arr(
      'The DB subnet groups a database may be in (spec.subnetGroupName; absent counts as RDS’s "default"); an entry ending in * allows every name starting with the rest. Absent: any.',
      str('A DB subnet group name or a prefix with *.', { minLength: 1, maxLength: 255 }),
      { maxItems: 64 },
    ),
    storageTypes: arr(
      'Allowed storage types (spec.storageType, default gp3). Absent: any.',
      str('A storage type.', { enum: ['gp2', 'gp3', 'io1', 'io2'] }),
      { maxItems: 4 },
    ),
    maxIops: int('The most provisioned IOPS a database may ask for (spec.iops). Absent: no limit.', {
      minimum: 1000,
      maximum: 256000,
    }),
    multiAZ: str(
      'Whether a database may run a standby in another Availability Zone (spec.multiAZ: true), which doubles its instance cost. Allowed (the default) or Forbidden.',
      { enum: ['Allowed', 'Forbidden'] },
    ),
    maxBackupRetentionDays: int(
      'The most days automated backups may be kept (spec.backup.retentionDays, default 7). Absent: no limit.',
      { minimum: 0, maximum: 35 },
    ),
    maxScheduledSnapshots: int(
      'The most scheduled snapshots a database may keep (spec.backup.keepSnapshots, when spec.backup.snapshotSchedule is set); 0 forbids scheduled snapshots. Absent: no limit.',
      { minimum: 0, maximum: 100 },
    ),
    restoreFrom: obj(
      'Which snapshots spec.restoreFrom may name. A ManagedDB always restores only snapshots Skylift made (in this cluster) for its own namespace; list other namespaces here to allow theirs too (e.g. a staging namespace restoring production’s).',
      {
        namespaces: arr(
          'Namespaces whose Skylift snapshots may also be restored.',
          str('A namespace name.', { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }),
          { maxItems: 64 },
        ),
      },
    ),
  }),
};

/** CEL: the policy's db section, as an optional. */
const DB = celSection(databaseGuardrailSection.key);

/** The policy's databases section, or undefined. Pure. */
export function databaseGuardrailsOf(policy: TeamPolicy): DatabaseGuardrails | undefined {
  return policy.spec.guardrails?.[databaseGuardrailSection.key] as DatabaseGuardrails | undefined;
}

/** True when `cls` is listed, or starts with an entry that ends in `*`. Pure. */
export function classAllowed(cls: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => (a.endsWith('*') ? cls.startsWith(a.slice(0, -1)) : a === cls));
}

/** Checks a ManagedDB against the policy's databases guardrails. Throws ForbiddenError. Pure. */
export function checkManagedDb(policy: TeamPolicy, spec: ManagedDBSpec): void {
  const g = databaseGuardrailsOf(policy);
  if (g === undefined) return;
  if (g.engines !== undefined && !g.engines.includes(spec.engine)) {
    throw forbidden(
      policy,
      'spec.engine',
      `${spec.engine} is not among the engines this namespace may use (${g.engines.join(', ') || 'none'})`,
      'the engine is fixed at create: delete this ManagedDB and create it with an allowed engine, or ask the platform team to add it to spec.guardrails.databases.engines',
    );
  }
  if (g.instanceClasses !== undefined && !classAllowed(spec.instanceClass, g.instanceClasses)) {
    throw forbidden(
      policy,
      'spec.instanceClass',
      `${spec.instanceClass} is not among the instance classes this namespace may use (${g.instanceClasses.join(', ')})`,
      'set spec.instanceClass to an allowed class, or ask the platform team to add it to spec.guardrails.databases.instanceClasses',
    );
  }
  const max = g.maxAllocatedStorageGiB;
  if (max !== undefined) {
    for (const [field, value] of [
      ['spec.allocatedStorage', spec.allocatedStorage],
      ['spec.maxAllocatedStorage', spec.maxAllocatedStorage],
    ] as const) {
      if (value !== undefined && value > max) {
        throw forbidden(
          policy,
          field,
          `${value} GiB is more than this namespace's databases may have (${max} GiB)`,
          `set ${field} to at most ${max}, or ask the platform team to raise spec.guardrails.databases.maxAllocatedStorageGiB`,
        );
      }
    }
  }
  for (const limit of databaseLimits) {
    const refused = limit.check(g, spec);
    if (refused !== undefined) throw forbidden(policy, limit.field, refused.detail, refused.fix);
  }
  if (spec.publiclyAccessible === true && g.publicAccess !== 'Allowed') {
    throw forbidden(
      policy,
      'spec.publiclyAccessible',
      'databases with a public address are not allowed in this namespace (spec.guardrails.databases.publicAccess is not Allowed)',
      'set spec.publiclyAccessible: false (reach the database from inside the VPC), or ask the platform team to allow public access',
    );
  }
}

/** A database guardrail decided by the object alone: the reconcile's check and the admission rule, saying the same words. */
interface DatabaseLimit {
  readonly field: string;
  /** Why the spec is refused (detail, fix), or undefined. Pure. */
  readonly check: (g: DatabaseGuardrails, s: ManagedDBSpec) => { detail: string; fix: string } | undefined;
  readonly admission: AdmissionValidation;
}

const ask = (what: string): string => `, or ask the platform team to ${what}`;

/** The limits issue 27 added (item 11): another team's network, and what costs money. */
const databaseLimits: readonly DatabaseLimit[] = [
  {
    field: 'spec.vpcSecurityGroupIds',
    check: (g, s) => {
      const allowed = g.securityGroupIds;
      if (allowed === undefined) return undefined;
      const groups = s.vpcSecurityGroupIds;
      const outside = (groups ?? []).filter((id) => !allowed.includes(id));
      if (groups !== undefined && outside.length === 0) return undefined;
      return {
        detail:
          groups === undefined
            ? `a database must name its security groups in this namespace (allowed: ${allowed.join(', ') || 'none'})`
            : `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not among the security groups this namespace’s databases may be in (${allowed.join(', ') || 'none'})`,
        fix: `set spec.vpcSecurityGroupIds to allowed groups${ask('add them to spec.guardrails.databases.securityGroupIds')}`,
      };
    },
    admission: {
      expression: `!${DB}.?securityGroupIds.hasValue() || (has(object.spec.vpcSecurityGroupIds) && object.spec.vpcSecurityGroupIds.all(g, g in variables.dbGroups))`,
      messageExpression: forbidsMessage(
        'spec.vpcSecurityGroupIds',
        `(has(object.spec.vpcSecurityGroupIds) ? object.spec.vpcSecurityGroupIds.filter(g, !(g in variables.dbGroups)).join(', ') + (size(object.spec.vpcSecurityGroupIds.filter(g, !(g in variables.dbGroups))) == 1 ? ' is' : ' are') + ' not among the security groups this namespace’s databases may be in (' : 'a database must name its security groups in this namespace (allowed: ') + ${celJoinOrNone('variables.dbGroups')} + ')'`,
        celString(
          `; set spec.vpcSecurityGroupIds to allowed groups${ask('add them to spec.guardrails.databases.securityGroupIds')}`,
        ),
      ),
      message:
        'a TeamPolicy forbids spec.vpcSecurityGroupIds: a security group this namespace’s databases may not be in',
    },
  },
  {
    field: 'spec.subnetGroupName',
    check: (g, s) => {
      const allowed = g.subnetGroups;
      const name = s.subnetGroupName ?? 'default';
      if (allowed === undefined || classAllowed(name, allowed)) return undefined;
      return {
        detail: `${name} is not among the DB subnet groups this namespace’s databases may be in (${allowed.join(', ') || 'none'})`,
        fix: `the subnet group is fixed at create: delete this ManagedDB and create it with spec.subnetGroupName set to an allowed group${ask('add it to spec.guardrails.databases.subnetGroups')}`,
      };
    },
    admission: {
      expression: `!${DB}.?subnetGroups.hasValue() || ${celListedOrPrefixed("object.spec.?subnetGroupName.orValue('default')", 'variables.dbSubnetGroups')}`,
      messageExpression: forbidsMessage(
        'spec.subnetGroupName',
        `object.spec.?subnetGroupName.orValue('default') + ' is not among the DB subnet groups this namespace’s databases may be in (' + ${celJoinOrNone('variables.dbSubnetGroups')} + ')'`,
        celString(
          `; the subnet group is fixed at create: delete this ManagedDB and create it with spec.subnetGroupName set to an allowed group${ask('add it to spec.guardrails.databases.subnetGroups')}`,
        ),
      ),
      message:
        'a TeamPolicy forbids spec.subnetGroupName: a DB subnet group this namespace’s databases may not be in',
    },
  },
  {
    field: 'spec.storageType',
    check: (g, s) => {
      const t = s.storageType ?? 'gp3';
      if (g.storageTypes === undefined || g.storageTypes.includes(t)) return undefined;
      return {
        detail: `${t} is not among the storage types this namespace’s databases may use (${g.storageTypes.join(', ') || 'none'})`,
        fix: `set spec.storageType to an allowed type${ask('add it to spec.guardrails.databases.storageTypes')}`,
      };
    },
    admission: {
      expression: `!${DB}.?storageTypes.hasValue() || object.spec.?storageType.orValue('gp3') in variables.dbStorageTypes`,
      messageExpression: forbidsMessage(
        'spec.storageType',
        `object.spec.?storageType.orValue('gp3') + ' is not among the storage types this namespace’s databases may use (' + ${celJoinOrNone('variables.dbStorageTypes')} + ')'`,
        celString(
          `; set spec.storageType to an allowed type${ask('add it to spec.guardrails.databases.storageTypes')}`,
        ),
      ),
      message: 'a TeamPolicy forbids spec.storageType: a storage type this namespace’s databases may not use',
    },
  },
  {
    field: 'spec.iops',
    check: (g, s) =>
      g.maxIops === undefined || s.iops === undefined || s.iops <= g.maxIops
        ? undefined
        : {
            detail: `${s.iops} IOPS are more than this namespace’s databases may provision (${g.maxIops})`,
            fix: `set spec.iops to at most ${g.maxIops}${ask('raise spec.guardrails.databases.maxIops')}`,
          },
    admission: {
      expression: `!${DB}.?maxIops.hasValue() || !has(object.spec.iops) || object.spec.iops <= ${DB}.?maxIops.value()`,
      messageExpression: forbidsMessage(
        'spec.iops',
        `string(object.spec.iops) + ' IOPS are more than this namespace’s databases may provision (' + string(${DB}.?maxIops.value()) + ')'`,
        `'; set spec.iops to at most ' + string(${DB}.?maxIops.value())`,
        celString(ask('raise spec.guardrails.databases.maxIops')),
      ),
      message: 'a TeamPolicy forbids spec.iops: more IOPS than this namespace’s databases may provision',
    },
  },
  {
    field: 'spec.multiAZ',
    check: (g, s) =>
      s.multiAZ === true && g.multiAZ === 'Forbidden'
        ? {
            detail:
              'Multi-AZ databases (a standby in another Availability Zone) are not allowed in this namespace',
            fix: `set spec.multiAZ: false${ask('allow spec.guardrails.databases.multiAZ')}`,
          }
        : undefined,
    admission: {
      expression: `${DB}.?multiAZ.orValue('Allowed') == 'Allowed' || !object.spec.?multiAZ.orValue(false)`,
      messageExpression: forbidsMessage(
        'spec.multiAZ',
        celString(
          `Multi-AZ databases (a standby in another Availability Zone) are not allowed in this namespace; set spec.multiAZ: false${ask('allow spec.guardrails.databases.multiAZ')}`,
        ),
      ),
      message: 'a TeamPolicy forbids spec.multiAZ: Multi-AZ databases are not allowed in this namespace',
    },
  },
  {
    field: 'spec.backup.retentionDays',
    check: (g, s) => {
      const days = s.backup?.retentionDays ?? 7;
      return g.maxBackupRetentionDays === undefined || days <= g.maxBackupRetentionDays
        ? undefined
        : {
            detail: `${days} days of automated backups are more than this namespace’s databases may keep (${g.maxBackupRetentionDays})`,
            fix: `set spec.backup.retentionDays to at most ${g.maxBackupRetentionDays}${ask('raise spec.guardrails.databases.maxBackupRetentionDays')}`,
          };
    },
    admission: {
      expression: `!${DB}.?maxBackupRetentionDays.hasValue() || object.spec.?backup.?retentionDays.orValue(7) <= ${DB}.?maxBackupRetentionDays.value()`,
      messageExpression: forbidsMessage(
        'spec.backup.retentionDays',
        `string(object.spec.?backup.?retentionDays.orValue(7)) + ' days of automated backups are more than this namespace’s databases may keep (' + string(${DB}.?maxBackupRetentionDays.value()) + ')'`,
        `'; set spec.backup.retentionDays to at most ' + string(${DB}.?maxBackupRetentionDays.value())`,
        celString(ask('raise spec.guardrails.databases.maxBackupRetentionDays')),
      ),
      message:
        'a TeamPolicy forbids spec.backup.retentionDays: longer than this namespace’s databases may keep backups',
    },
  },
  {
    field: 'spec.backup.keepSnapshots',
    check: (g, s) => {
      const keep = s.backup?.keepSnapshots ?? 7;
      const max = g.maxScheduledSnapshots;
      if (max === undefined || s.backup?.snapshotSchedule === undefined || keep <= max) return undefined;
      return max === 0
        ? {
            detail: 'scheduled snapshots are not allowed in this namespace',
            fix: `remove spec.backup.snapshotSchedule (RDS’s automated backups remain)${ask('raise spec.guardrails.databases.maxScheduledSnapshots')}`,
          }
        : {
            detail: `keeping ${keep} scheduled snapshots is more than this namespace’s databases may (${max})`,
            fix: `set spec.backup.keepSnapshots to at most ${max}${ask('raise spec.guardrails.databases.maxScheduledSnapshots')}`,
          };
    },
    admission: {
      expression: `!${DB}.?maxScheduledSnapshots.hasValue() || !has(object.spec.backup) || !has(object.spec.backup.snapshotSchedule) || object.spec.backup.?keepSnapshots.orValue(7) <= ${DB}.?maxScheduledSnapshots.value()`,
      messageExpression: forbidsMessage(
        'spec.backup.keepSnapshots',
        `(${DB}.?maxScheduledSnapshots.value() == 0 ? ${celString(`scheduled snapshots are not allowed in this namespace; remove spec.backup.snapshotSchedule (RDS’s automated backups remain)${ask('raise spec.guardrails.databases.maxScheduledSnapshots')}`)} : 'keeping ' + string(object.spec.backup.?keepSnapshots.orValue(7)) + ' scheduled snapshots is more than this namespace’s databases may (' + string(${DB}.?maxScheduledSnapshots.value()) + '); set spec.backup.keepSnapshots to at most ' + string(${DB}.?maxScheduledSnapshots.value()) + ${celString(ask('raise spec.guardrails.databases.maxScheduledSnapshots'))})`,
      ),
      message:
        'a TeamPolicy forbids spec.backup.keepSnapshots: more scheduled snapshots than this namespace’s databases may keep',
    },
  },
];

const storageRule = (field: 'allocatedStorage' | 'maxAllocatedStorage'): AdmissionValidation => ({
  expression: `!${DB}.?maxAllocatedStorageGiB.hasValue() || !has(object.spec.${field}) || object.spec.${field} <= ${DB}.?maxAllocatedStorageGiB.value()`,
  messageExpression: forbidsMessage(
    `spec.${field}`,
    `string(object.spec.${field}) + ' GiB is more than this namespace\\'s databases may have (' + string(${DB}.?maxAllocatedStorageGiB.value()) + ' GiB)'`,
    `'; set spec.${field} to at most ' + string(${DB}.?maxAllocatedStorageGiB.value())`,
    celString(', or ask the platform team to raise spec.guardrails.databases.maxAllocatedStorageGiB'),
  ),
  message: `a TeamPolicy forbids spec.${field}: more than this namespace's databases may have`,
});

/** The database guardrails at admission: all of them decide from the object alone. As {@link checkManagedDb}. */
export const managedDbAdmission: KindAdmission = {
  variables: [
    { name: 'engines', expression: `${DB}.?engines.orValue([])` },
    { name: 'classes', expression: `${DB}.?instanceClasses.orValue([])` },
    { name: 'dbGroups', expression: `${DB}.?securityGroupIds.orValue([])` },
    { name: 'dbSubnetGroups', expression: `${DB}.?subnetGroups.orValue([])` },
    { name: 'dbStorageTypes', expression: `${DB}.?storageTypes.orValue([])` },
  ],
  validations: [
    {
      expression: `!${DB}.?engines.hasValue() || object.spec.engine in variables.engines`,
      messageExpression: forbidsMessage(
        'spec.engine',
        `object.spec.engine + ' is not among the engines this namespace may use (' + ${celJoinOrNone('variables.engines')} + ')'`,
        celString(
          '; the engine is fixed at create: delete this ManagedDB and create it with an allowed engine, or ask the platform team to add it to spec.guardrails.databases.engines',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.engine: this engine is not among the engines this namespace may use',
    },
    {
      expression: `!${DB}.?instanceClasses.hasValue() || ${celListedOrPrefixed('object.spec.instanceClass', 'variables.classes')}`,
      messageExpression: forbidsMessage(
        'spec.instanceClass',
        "object.spec.instanceClass + ' is not among the instance classes this namespace may use (' + variables.classes.join(', ') + ')'",
        celString(
          '; set spec.instanceClass to an allowed class, or ask the platform team to add it to spec.guardrails.databases.instanceClasses',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.instanceClass: this class is not among the instance classes this namespace may use',
    },
    storageRule('allocatedStorage'),
    storageRule('maxAllocatedStorage'),
    {
      expression: `!${DB}.hasValue() || !object.spec.?publiclyAccessible.orValue(false) || ${DB}.?publicAccess.orValue('Forbidden') == 'Allowed'`,
      messageExpression: forbidsMessage(
        'spec.publiclyAccessible',
        celString(
          'databases with a public address are not allowed in this namespace (spec.guardrails.databases.publicAccess is not Allowed); set spec.publiclyAccessible: false (reach the database from inside the VPC), or ask the platform team to allow public access',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.publiclyAccessible: databases with a public address are not allowed in this namespace',
    },
    ...databaseLimits.map((l) => l.admission),
  ],
};
