// TeamPolicy: the cluster-scoped kind a platform team writes to give namespaces an AWS identity,
// a region and guardrails. The generic part lives here; each kind contributes its own guardrail
// section (its schema, its checks) from its folder, and the CRD is assembled from those sections.
import type { KubeObject, ResourceType } from './meta.ts';
import type { Condition } from './managed.ts';
import { apiCategory, apiGroup, apiVersion, type CrdManifest } from './crd.ts';
import { arr, int, obj, str, stringMap, type Schema } from './schema.ts';
import type { FieldContract } from './fieldContract.ts';

export const teamPolicyType: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'teampolicies',
  kind: 'TeamPolicy',
  namespaced: false,
};

/** A label selector requirement (metav1.LabelSelectorRequirement). */
export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** metav1.LabelSelector. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Which namespaces a policy serves: these names, and/or the namespaces matching the selector. */
export interface NamespaceSelection {
  names?: string[];
  selector?: LabelSelector;
}

/** The AWS identity the namespaces' objects are reconciled with. */
export interface PolicyAwsIdentity {
  /** Assumed with STS from the operator's own identity; absent: the operator's own identity. */
  roleArn?: string;
  externalId?: string;
  /** Absent: the operator's --region. */
  region?: string;
  /**
   * The account's budget: requests per second Skylift may send to each service (by signing name)
   * for every namespace of this account and region; absent: the operator's default (Route 53: 10).
   * Two policies reaching one account: the lower budget holds.
   */
  requestsPerSecond?: Partial<Record<BudgetedService, number>>;
}

/** The services a TeamPolicy may set a request budget for (AWS signing names). */
export const budgetedServices = ['route53', 'elasticloadbalancing', 'rds', 'ec2'] as const;
/** One of {@link budgetedServices}. */
export type BudgetedService = (typeof budgetedServices)[number];

/** Allowed or Forbidden: how guardrails spell a permission. */
export type Permission = 'Allowed' | 'Forbidden';

/** The guardrails: the generic ones here, each kind's own section by its key. */
export interface Guardrails {
  /** Whether objects may name existing AWS resources (spec.externalName). Default Forbidden. */
  adoption?: Permission;
  readonly [section: string]: unknown;
}

export interface TeamPolicySpec {
  namespaces: NamespaceSelection;
  aws?: PolicyAwsIdentity;
  guardrails?: Guardrails;
}

export interface TeamPolicyStatus {
  /** The namespaces this policy selects now (sorted). */
  selectedNamespaces?: string[];
  /** How many (for the printer column). */
  namespaceCount?: number;
  /** The last AssumeRole of the policy's role. */
  assumeRole?: { result: 'Succeeded' | 'Failed'; message?: string; account?: string; time: string };
  conditions?: Condition[];
  observedGeneration?: number;
}

export interface TeamPolicy extends KubeObject {
  spec: TeamPolicySpec;
  status?: TeamPolicyStatus;
}

/** A kind's guardrail section: its key under spec.guardrails and its schema. */
export interface GuardrailSection {
  readonly key: string;
  readonly schema: Schema;
}

/** The Ready condition of a policy: why it cannot serve (overlap, AssumeRole failed). */
export const PolicyReason = {
  Serving: 'Serving',
  Overlap: 'Overlap',
  AssumeRoleFailed: 'AssumeRoleFailed',
  /** Throttled=True: AWS throttled the account's calls in most of the last minutes. */
  SustainedThrottling: 'SustainedThrottling',
  /** Throttled=False. */
  WithinBudget: 'WithinBudget',
} as const;

export const labelSelectorSchema = obj('A label selector over namespace labels (as in a NetworkPolicy).', {
  matchLabels: stringMap('Labels the namespace must carry, all of them.'),
  matchExpressions: arr(
    'Requirements the namespace labels must meet, all of them.',
    obj(
      'A requirement.',
      {
        key: str('The label key.', { minLength: 1, maxLength: 317 }),
        operator: str('In, NotIn, Exists or DoesNotExist.', {
          enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'],
        }),
        values: arr('The values (In, NotIn); empty for Exists and DoesNotExist.', str('A value.'), {
          maxItems: 64,
        }),
      },
      {
        required: ['key', 'operator'],
        'x-kubernetes-validations': [
          {
            rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
            message: 'In and NotIn need values; Exists and DoesNotExist take none',
          },
        ],
      },
    ),
    { maxItems: 16 },
  ),
});

/** The permission enum every guardrail uses. */
export const permission = (description: string): Schema =>
  str(`${description} Allowed or Forbidden (the default).`, { enum: ['Allowed', 'Forbidden'] });

function spec(sections: readonly GuardrailSection[]): Schema {
  return obj(
    'What the selected namespaces may do in AWS, and as whom.',
    {
      namespaces: obj(
        'The namespaces this policy serves: those named and those matching the selector. A namespace selected by two policies is refused until one lets go of it.',
        {
          names: arr(
            'Namespace names.',
            str('A namespace name.', { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }),
            { maxItems: 256, 'x-kubernetes-list-type': 'set' },
          ),
          selector: labelSelectorSchema,
        },
        {
          'x-kubernetes-validations': [
            {
              rule: '(has(self.names) && size(self.names) > 0) || has(self.selector)',
              message:
                'name namespaces in spec.namespaces.names or select them with spec.namespaces.selector',
            },
          ],
        },
      ),
      aws: obj('The AWS identity and region of the selected namespaces’ objects.', {
        roleArn: str(
          'IAM role Skylift assumes (sts:AssumeRole from its own identity) for these namespaces, e.g. arn:aws:iam::111122223333:role/skylift-team-a. Absent: the operator’s own identity.',
          { pattern: '^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\\w+=,.@/-]{1,512}$' },
        ),
        externalId: str('External ID the role’s trust policy requires (sts:ExternalId).', {
          minLength: 2,
          maxLength: 1224,
          pattern: '^[\\w+=,.@:/-]+$',
        }),
        region: str(
          'AWS region of these namespaces’ resources, e.g. eu-west-1. Absent: the operator’s --region.',
          {
            pattern: '^[a-z]{2}(-[a-z]+)+-[0-9]+$',
          },
        ),
        requestsPerSecond: obj(
          'The budget of the account and region these namespaces reach: requests per second Skylift sends to each service, for every namespace of that account together (AWS counts its quotas per account). Absent: the operator’s defaults (Route 53 10, the account quota since July 2026; Elastic Load Balancing 10; RDS 10; EC2 20). When several policies reach one account, the lowest budget holds.',
          Object.fromEntries(
            budgetedServices.map((service) => [
              service,
              int(`Requests per second to ${service}.`, { minimum: 1, maximum: 1000 }),
            ]),
          ),
        ),
      }),
      guardrails: obj(
        'Limits on what the namespaces may create, name or adopt. A section left out does not limit its kind.',
        {
          adoption: permission(
            'Whether objects may name existing AWS resources with spec.externalName (adoption, or ObserveOnly of a resource Skylift did not create).',
          ),
          ...Object.fromEntries(sections.map((s) => [s.key, s.schema])),
        },
      ),
    },
    { required: ['namespaces'] },
  );
}

const condition = obj(
  'A condition of this policy.',
  {
    type: str(
      'Ready: the policy serves its namespaces. Throttled: AWS throttled the calls of the account the policy reaches in at least 3 of the last 5 minutes.',
    ),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    reason: str(
      'Serving, Overlap or AssumeRoleFailed (Ready); SustainedThrottling or WithinBudget (Throttled).',
    ),
    message: str('A human-readable explanation.'),
    lastTransitionTime: str('When the status last changed.', { format: 'date-time' }),
    observedGeneration: int('The metadata.generation the condition was computed from.', { format: 'int64' }),
  },
  { required: ['type', 'status', 'lastTransitionTime'] },
);

const status = obj('What the operator observed of this policy.', {
  selectedNamespaces: arr('The namespaces this policy selects now.', str('A namespace.')),
  namespaceCount: int('How many namespaces this policy selects.'),
  assumeRole: obj('The last AssumeRole of spec.aws.roleArn.', {
    result: str('Succeeded or Failed.', { enum: ['Succeeded', 'Failed'] }),
    message: str('Why it failed.'),
    account: str('The AWS account of the role.'),
    time: str('When.', { format: 'date-time' }),
  }),
  conditions: arr('The Ready condition.', condition, {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  }),
  observedGeneration: int('The metadata.generation last acted on.', { format: 'int64' }),
});

/** `DNSRecords, MyIngresses and ManagedDBs`: kind names in the plural, as a sentence lists them. Pure. */
function pluralList(kinds: readonly string[]): string {
  const plurals = kinds.map((k) => (k.endsWith('s') ? `${k}es` : `${k}s`));
  const last = plurals.pop();
  if (last === undefined) return 'objects';
  return plurals.length === 0 ? last : `${plurals.join(', ')} and ${last}`;
}

/**
 * The TeamPolicy CRD with the kinds' guardrail sections; `guardedKinds` (Kind names, e.g.
 * DNSRecord) are the kinds those sections limit, named in its description. Pure.
 */
export function teamPolicyCrd(
  sections: readonly GuardrailSection[],
  guardedKinds: readonly string[],
): CrdManifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${teamPolicyType.plural}.${teamPolicyType.group}` },
    spec: {
      group: teamPolicyType.group,
      scope: 'Cluster',
      names: {
        plural: teamPolicyType.plural,
        singular: 'teampolicy',
        kind: teamPolicyType.kind,
        listKind: `${teamPolicyType.kind}List`,
        shortNames: ['tpol'],
        categories: [apiCategory],
      },
      versions: [
        {
          name: teamPolicyType.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Namespaces', type: 'integer', jsonPath: '.status.namespaceCount' },
            { name: 'Role', type: 'string', jsonPath: '.spec.aws.roleArn' },
            { name: 'Region', type: 'string', jsonPath: '.spec.aws.region' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            {
              name: 'Reason',
              type: 'string',
              jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
              priority: 1,
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: obj(
              `TeamPolicy gives namespaces an AWS identity (an IAM role Skylift assumes) and region, and limits what their ${pluralList(guardedKinds)} may use. Once any TeamPolicy exists, Skylift serves only namespaces a policy selects.`,
              {
                apiVersion: str('APIVersion of this object.'),
                kind: str('Kind of this object.'),
                spec: spec(sections),
                status,
              },
              { required: ['spec'] },
            ),
          },
        },
      ],
    },
  };
}

/** What becomes of each TeamPolicy spec field after create: all of it acts in Skylift only (src/apis/fieldContract.ts). */
export const teamPolicyFieldContract: FieldContract = {
  namespaces: { kubernetes: 'which namespaces the policy serves, from the next reconcile of their objects' },
  aws: {
    kubernetes:
      'the identity (AssumeRole) and region the namespaces’ AWS calls use from the next reconcile; objects already in another account or region are refused, not recreated; the request budget applies to the account’s next calls',
  },
  guardrails: { kubernetes: 'what the namespaces’ objects may ask for, checked before every AWS write' },
};
