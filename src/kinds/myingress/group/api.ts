// MyIngressGroup: a shared Application Load Balancer (cluster-scoped, owned by the platform team)
// whose rules come from the MyIngresses that name it (spec.group). Its load balancer fields are
// MyIngress's (the same schema and rules); its listeners answer what no member's rule matches.
import type { ManagedObject, ManagedSpec } from '../../../apis/managed.ts';
import type { ResourceType } from '../../../apis/meta.ts';
import { managedSpecProperties, managedSpecRules, managedStatusProperties } from '../../../apis/common.ts';
import { apiGroup, apiVersion, managedCrd, type CrdManifest } from '../../../apis/crd.ts';
import { arr, int, obj, str, type Schema } from '../../../apis/schema.ts';
import { managedFieldContract, type FieldContract } from '../../../apis/fieldContract.ts';
import { labelSelectorSchema, type LabelSelector } from '../../../apis/teampolicy.ts';
import {
  loadBalancerRules,
  myIngressFieldContract,
  myIngressSpecSchema,
  myIngressStatusSchema,
  type ActionSpec,
  type ListenerSpec,
  type MyIngressSpec,
  type MyIngressStatus,
} from '../api.ts';

/** The MyIngressGroup resource type (cluster-scoped). */
export const myIngressGroupType: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'myingressgroups',
  kind: 'MyIngressGroup',
  namespaced: false,
};

/** A `kubernetes.io/tls` Secret an HTTPS group listener serves, imported into ACM by Skylift. */
export interface CertificateSecretRef {
  namespace: string;
  name: string;
}

/** A group listener: MyIngress's, with a default action that answers (never forwards). */
export interface GroupListenerSpec extends Omit<ListenerSpec, 'defaultAction'> {
  /** Default: a fixed 404 response. */
  defaultAction?: Omit<ActionSpec, 'forward'>;
  /**
   * TLS Secrets the HTTPS listener serves, imported into ACM (owned by the group, re-imported into
   * the same ARN when the Secret changes, deleted with the group): the first is the default
   * certificate unless certificateArn is set, the others are served by SNI.
   */
  certificateRefs?: CertificateSecretRef[];
}

/** Which namespaces' MyIngresses may join. */
export interface AllowedNamespaces {
  /** All: any namespace. Selector: the namespaces whose labels match `selector`. */
  from: 'All' | 'Selector';
  selector?: LabelSelector;
}

/** The shared load balancer: MyIngress's load balancer fields, the listeners, and who may join. */
export interface MyIngressGroupSpec
  extends
    ManagedSpec,
    Pick<
      MyIngressSpec,
      | 'subnets'
      | 'subnetSelector'
      | 'securityGroups'
      | 'inboundCIDRs'
      | 'scheme'
      | 'ipAddressType'
      | 'attributes'
      | 'tags'
      | 'waf'
    > {
  listeners: GroupListenerSpec[];
  allowedNamespaces: AllowedNamespaces;
}

/** How a member stands in its group. */
export const MemberState = {
  /** Its rules are on the load balancer. */
  Attached: 'Attached',
  /** A host and path it claims is another member's (who claimed it first). */
  Conflict: 'Conflict',
  /** The group does not admit its namespace. */
  NotAdmitted: 'NotAdmitted',
  /** Its rules cannot be served: they name a port the group has no listener on, or AWS refused them. */
  Invalid: 'Invalid',
  /**
   * Its namespace's tenancy refuses it: no (or two) TeamPolicies select the namespace, its policy
   * serves it with another identity or region than the group's, or the group's load balancer does
   * not meet its policy's guardrails.
   */
  Forbidden: 'Forbidden',
  /** It left (deleted, or moved to another group) and its rules and target groups are being removed. */
  Leaving: 'Leaving',
} as const;
export type MemberState = (typeof MemberState)[keyof typeof MemberState];

/** One member as the group reports it. */
export interface GroupMemberStatus {
  namespace: string;
  name: string;
  uid: string;
  /** The member's generation whose rules this status judges. */
  observedGeneration?: number | undefined;
  state: MemberState;
  message?: string | undefined;
  /** Its rules on the load balancer (0 unless Attached). */
  rules: number;
}

/** The shared load balancer as MyIngress reports one, and its members. */
export interface MyIngressGroupStatus extends MyIngressStatus {
  members?: GroupMemberStatus[] | undefined;
}

export type MyIngressGroup = ManagedObject<MyIngressGroupSpec, MyIngressGroupStatus>;

/** MyIngress's rule that an HTTPS listener names its certificate (a group's may name a Secret instead). */
const myIngressHttpsNeedsCertificate =
  "self.protocol != 'HTTPS' || has(self.certificateArn) || has(self.certificateHosts)";

/** The load balancer fields of MyIngress a group has too (their schema and rules are MyIngress's). */
const sharedFields = [
  'subnets',
  'subnetSelector',
  'securityGroups',
  'inboundCIDRs',
  'scheme',
  'ipAddressType',
  'attributes',
  'tags',
  'waf',
] as const;

function properties(s: Schema): Record<string, Schema> {
  return s.properties ?? {};
}

/** The group's spec schema: MyIngress's load balancer fields, listeners without forward, allowedNamespaces. */
function specSchema(): Schema {
  const ming = properties(myIngressSpecSchema());
  const pick = Object.fromEntries(sharedFields.flatMap((f) => (ming[f] !== undefined ? [[f, ming[f]]] : [])));
  const listeners = ming['listeners'];
  const item = listeners?.items;
  if (listeners === undefined || item === undefined)
    throw new Error('MyIngress spec has no listeners schema');
  const itemProps = properties(item);
  const groupListener: Schema = {
    ...item,
    properties: {
      ...itemProps,
      certificateRefs: arr(
        'kubernetes.io/tls Secrets the HTTPS listener serves, imported into ACM by Skylift (tagged as the group’s, re-imported into the same ARN when a Secret changes — looked at every resync — and deleted with the group): the first is the default certificate unless certificateArn is set, the others are served by SNI.',
        obj(
          'A TLS Secret.',
          {
            namespace: str('Its namespace.', { minLength: 1, maxLength: 63 }),
            name: str('Its name.', { minLength: 1, maxLength: 253 }),
          },
          { required: ['namespace', 'name'] },
        ),
        { maxItems: 25, 'x-kubernetes-list-type': 'atomic' },
      ),
      defaultAction: {
        ...(itemProps['defaultAction'] ?? { description: '' }),
        description:
          'What requests matching no member’s rule get: a fixed response or a redirect (a group’s listener forwards to no Service: Services belong to the members). Default: a fixed 404.',
        'x-kubernetes-validations': [
          ...(itemProps['defaultAction']?.['x-kubernetes-validations'] ?? []),
          {
            rule: '!has(self.forward)',
            message:
              'a MyIngressGroup’s default action answers (fixedResponse or redirect); forwarding to a Service is a member’s rule (a MyIngress with spec.group)',
          },
        ],
      },
    },
    required: (item.required ?? []).filter((r) => r !== 'defaultAction'),
    'x-kubernetes-validations': [
      // MyIngress's rules, but an HTTPS listener may have its certificate from a Secret.
      ...(item['x-kubernetes-validations'] ?? []).filter((v) => v.rule !== myIngressHttpsNeedsCertificate),
      {
        rule: "self.protocol != 'HTTPS' || has(self.certificateArn) || has(self.certificateHosts) || has(self.certificateRefs)",
        message: 'an HTTPS listener needs certificateArn, certificateHosts or certificateRefs',
      },
      {
        rule: "self.protocol == 'HTTPS' || !has(self.certificateRefs)",
        message: 'certificateRefs is only for HTTPS listeners',
      },
    ],
  };

  return obj(
    'The shared Application Load Balancer: its own fields as in a MyIngress, its listeners, and which namespaces’ MyIngresses may join it (spec.group).',
    {
      ...pick,
      listeners: { ...listeners, items: groupListener },
      allowedNamespaces: obj(
        'Which namespaces’ MyIngresses may join (spec.group): a member of a namespace not admitted is refused (NotAdmitted) and nothing of it reaches the load balancer. Any member can route the hosts and paths it claims first, so admit only the namespaces you trust with the load balancer.',
        {
          from: str('All: any namespace. Selector: the namespaces whose labels match selector.', {
            enum: ['All', 'Selector'],
          }),
          selector: labelSelectorSchema,
        },
        {
          required: ['from'],
          'x-kubernetes-validations': [
            {
              rule: "(self.from == 'Selector') == has(self.selector)",
              message: 'allowedNamespaces.selector is set with from: Selector, and only then',
            },
          ],
        },
      ),
      ...managedSpecProperties,
    },
    {
      required: ['listeners', 'allowedNamespaces'],
      'x-kubernetes-validations': [
        ...managedSpecRules,
        {
          rule: '!has(self.externalName)',
          message:
            'a MyIngressGroup cannot adopt an existing load balancer (not yet): remove externalName to have Skylift create the shared one',
        },
        {
          rule: 'has(self.subnets) != has(self.subnetSelector)',
          message: 'set exactly one of subnets and subnetSelector',
        },
        ...loadBalancerRules,
      ],
    },
  );
}

function statusSchema(): Schema {
  const ming = properties(myIngressStatusSchema());
  return obj('What Skylift observed in AWS, and how each member stands.', {
    ...ming,
    members: arr(
      'The MyIngresses that name this group (spec.group), and those leaving it while their rules and target groups are removed.',
      obj('A member.', {
        namespace: str('Its namespace.'),
        name: str('Its name.'),
        uid: str('Its uid.'),
        observedGeneration: int('The generation of the member this entry judges.'),
        state: str(
          'Attached (its rules are on the load balancer), Conflict (a host and path it claims is another member’s), NotAdmitted (allowedNamespaces does not admit its namespace), Invalid (a rule names a port the group has no listener on, or AWS refused its rules: they are left off the load balancer), Forbidden (its namespace’s TeamPolicy refuses it, or the shared load balancer does not meet its guardrails: the message says why), Leaving (deleted or moved: its rules and target groups are being removed).',
          { enum: Object.values(MemberState) },
        ),
        message: str('Why, when not Attached.'),
        rules: int('Its rules on the load balancer.'),
      }),
    ),
    ...managedStatusProperties,
  });
}

/** The MyIngressGroup CRD (cluster-scoped). Pure. */
export function myIngressGroupCrd(): CrdManifest {
  const crd = managedCrd({
    type: myIngressGroupType,
    shortName: 'mingg',
    description:
      'A shared AWS Application Load Balancer managed by Skylift: its listeners carry the rules of the MyIngresses that join it (spec.group), from the namespaces it admits.',
    columns: [
      { name: 'DNS Name', type: 'string', jsonPath: '.status.dnsName' },
      { name: 'Scheme', type: 'string', jsonPath: '.spec.scheme' },
    ],
    spec: specSchema(),
    status: statusSchema(),
  });
  return { ...crd, spec: { ...crd.spec, scope: 'Cluster' } };
}

/** What becomes of each MyIngressGroup spec field after create (as MyIngress's same fields). */
export const myIngressGroupFieldContract: FieldContract = {
  ...Object.fromEntries(
    Object.entries(myIngressFieldContract).filter(
      ([k]) => sharedFields.some((f) => k === f) || (k.startsWith('listeners[]') && !k.includes('.forward')),
    ),
  ),
  'listeners[].certificateRefs': {
    applied:
      'the Secrets are imported into ACM (ImportCertificate, tagged as the group’s) and served by the listener (ModifyListener, AddListenerCertificates); imports no longer named are deleted (DeleteCertificate)',
  },
  allowedNamespaces: {
    applied:
      'the members’ rules: a member no longer admitted has its rules removed (DeleteRule, DeleteTargetGroup); one admitted now gets them (CreateRule, CreateTargetGroup)',
  },
  ...managedFieldContract,
};
