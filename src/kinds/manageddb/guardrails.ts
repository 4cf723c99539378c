// ManagedDB's part of a TeamPolicy: which engines, instance classes and how much storage a
// namespace's databases may use, and whether they may be reachable from the internet.
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
  if (spec.publiclyAccessible === true && g.publicAccess !== 'Allowed') {
    throw forbidden(
      policy,
      'spec.publiclyAccessible',
      'databases with a public address are not allowed in this namespace (spec.guardrails.databases.publicAccess is not Allowed)',
      'set spec.publiclyAccessible: false (reach the database from inside the VPC), or ask the platform team to allow public access',
    );
  }
}

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
  ],
};
