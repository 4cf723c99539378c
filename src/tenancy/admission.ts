// TeamPolicy guardrails at admission: one ValidatingAdmissionPolicy per kind, with TeamPolicy as its
// paramKind. The apiserver evaluates a policy once per TeamPolicy the binding's paramRef selects, so
// every rule first asks whether that TeamPolicy selects the request's namespace (names, or the label
// selector evaluated here in CEL) and passes otherwise. The reconcile stays authoritative: admission
// refuses only what a policy decides from the object alone (no AWS lookup), in the reconcile's words.
import type { ResourceType } from '../apis/meta.ts';
import { teamPolicyType } from '../apis/teampolicy.ts';

/** A named CEL expression of a ValidatingAdmissionPolicy (spec.variables[]). */
export interface AdmissionVariable {
  readonly name: string;
  readonly expression: string;
}

/**
 * One rule of a kind's ValidatingAdmissionPolicy (spec.validations[]), written for a namespace the
 * TeamPolicy `params` selects: {@link admissionPolicySpec} adds the selection guard in front.
 */
export interface AdmissionValidation {
  /** CEL over `object`, `params` and `variables`: true admits. */
  readonly expression: string;
  /** CEL string: `TeamPolicy <name> forbids <field>: …`, as the reconcile says it. */
  readonly messageExpression: string;
  /** The static message the apiserver falls back to when messageExpression fails. */
  readonly message: string;
}

/** A kind's part of the admission policy: its variables and its rules. */
export interface KindAdmission {
  readonly variables: readonly AdmissionVariable[];
  readonly validations: readonly AdmissionValidation[];
}

/** A ValidatingAdmissionPolicy's spec as Skylift renders it (the chart adds matchConditions). */
export interface AdmissionPolicySpec {
  readonly failurePolicy: 'Fail';
  readonly paramKind: { readonly apiVersion: string; readonly kind: string };
  readonly matchConstraints: {
    readonly resourceRules: readonly {
      readonly apiGroups: readonly string[];
      readonly apiVersions: readonly string[];
      readonly operations: readonly string[];
      readonly resources: readonly string[];
    }[];
  };
  readonly matchConditions: readonly { readonly name: string; readonly expression: string }[];
  readonly variables: readonly AdmissionVariable[];
  readonly validations: readonly (AdmissionValidation & { readonly reason: 'Forbidden' })[];
}

/** A CEL string literal (single-quoted). Pure. */
export function celString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * CEL: the policy's guardrail section `key`, as an optional (`params.spec.?guardrails.?<key>`).
 * Written out in each expression: an optional kept in a variable does not chain (`.?` on it finds
 * nothing), so variables hold only plain values. Pure.
 */
export function celSection(key: string): string {
  return `params.spec.?guardrails.?${key}`;
}

/** `'TeamPolicy ' + params.metadata.name + ' forbids <field>: '` followed by `rest` (CEL). Pure. */
export function forbidsMessage(field: string, ...rest: string[]): string {
  return [`'TeamPolicy ' + params.metadata.name + ${celString(` forbids ${field}: `)}`, ...rest].join(' + ');
}

/** CEL: a DNS name in canonical form (lower case, one trailing dot), as normalizeName. Pure. */
export function celFqdn(name: string): string {
  return `(${name}.lowerAscii().endsWith('.') ? ${name}.lowerAscii() : ${name}.lowerAscii() + '.')`;
}

/** CEL: `value` is listed in `list`, or starts with an entry ending in `*`. Pure. */
export function celListedOrPrefixed(value: string, list: string): string {
  return `${list}.exists(a, a.endsWith('*') ? ${value}.startsWith(a.substring(0, size(a) - 1)) : a == ${value})`;
}

/** CEL: a DNS name without its trailing dot (for messages). Pure. */
export function celNoDot(name: string): string {
  return `(${name}.endsWith('.') ? ${name}.substring(0, size(${name}) - 1) : ${name})`;
}

/** CEL: a list of strings joined with ', ', or 'none' when empty (as the reconcile's messages). Pure. */
export function celJoinOrNone(list: string): string {
  return `(size(${list}) == 0 ? 'none' : ${list}.join(', '))`;
}

/**
 * Whether the TeamPolicy `params` selects the request's namespace: by name, or by its label
 * selector (matchLabels and the four matchExpressions operators, as selectorMatches).
 */
const selectionVariables: readonly AdmissionVariable[] = [
  { name: 'nsLabels', expression: 'namespaceObject.metadata.?labels.orValue({})' },
  {
    name: 'byName',
    expression: 'namespaceObject.metadata.name in params.spec.namespaces.?names.orValue([])',
  },
  {
    name: 'bySelector',
    expression: [
      'has(params.spec.namespaces.selector) &&',
      'params.spec.namespaces.selector.?matchLabels.orValue({}).all(k, k in variables.nsLabels && variables.nsLabels[k] == params.spec.namespaces.selector.matchLabels[k]) &&',
      'params.spec.namespaces.selector.?matchExpressions.orValue([]).all(r,',
      "  r.operator == 'In' ? r.key in variables.nsLabels && variables.nsLabels[r.key] in r.?values.orValue([]) :",
      "  r.operator == 'NotIn' ? !(r.key in variables.nsLabels) || !(variables.nsLabels[r.key] in r.?values.orValue([])) :",
      "  r.operator == 'Exists' ? r.key in variables.nsLabels :",
      "  r.operator == 'DoesNotExist' ? !(r.key in variables.nsLabels) :",
      '  false)',
    ].join('\n'),
  },
  { name: 'selected', expression: 'variables.byName || variables.bySelector' },
];

/** spec.externalName needs spec.guardrails.adoption: Allowed (as checkAdoption). */
const adoption: AdmissionValidation = {
  expression:
    "object.spec.?externalName.orValue('') == '' || params.spec.?guardrails.?adoption.orValue('Forbidden') == 'Allowed'",
  messageExpression: forbidsMessage(
    'spec.externalName',
    "'adopting or observing an existing AWS resource (' + object.spec.externalName + ') is not allowed in namespace ' + namespaceObject.metadata.name",
    celString(
      ' (spec.guardrails.adoption is not Allowed); delete this object and create it without spec.externalName so Skylift creates its own resource, or ask the platform team to set spec.guardrails.adoption: Allowed',
    ),
  ),
  message:
    'a TeamPolicy forbids spec.externalName: adopting or observing an existing AWS resource is not allowed in this namespace (spec.guardrails.adoption is not Allowed)',
};

/** The apiVersion/kind of TeamPolicy, the policies' paramKind. */
export const admissionParamKind = {
  apiVersion: `${teamPolicyType.group}/${teamPolicyType.version}`,
  kind: teamPolicyType.kind,
} as const;

/**
 * The ValidatingAdmissionPolicy spec of one kind: CREATE and UPDATE of that resource (never DELETE),
 * the selection variables, then adoption and the kind's rules, each passing unless `params` selects
 * the namespace. One policy per kind so that the apiserver type-checks every expression against
 * that kind's schema (status.typeChecking). Pure.
 */
export function admissionPolicySpec(type: ResourceType, kind: KindAdmission): AdmissionPolicySpec {
  const guard = (v: AdmissionValidation) => ({
    expression: `!variables.selected || (${v.expression})`,
    messageExpression: v.messageExpression,
    message: v.message,
    reason: 'Forbidden' as const,
  });
  return {
    failurePolicy: 'Fail',
    paramKind: admissionParamKind,
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [type.group],
          apiVersions: [type.version],
          operations: ['CREATE', 'UPDATE'],
          resources: [type.plural],
        },
      ],
    },
    // An object being deleted only loses finalizers (by the operator or by hand): never refused.
    matchConditions: [{ name: 'not-being-deleted', expression: '!has(object.metadata.deletionTimestamp)' }],
    variables: [...selectionVariables, ...kind.variables],
    validations: [adoption, ...kind.validations].map(guard),
  };
}
