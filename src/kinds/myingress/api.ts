import type { ManagedObject, ManagedSpec, ManagedStatus } from '../../apis/managed.ts';
import type { ResourceType } from '../../apis/meta.ts';
import { managedSpecProperties, managedSpecRules, managedStatusProperties } from '../../apis/common.ts';
import { apiGroup, apiVersion, managedCrd, type CrdManifest } from '../../apis/crd.ts';
import {
  arr,
  bool,
  immutable,
  int,
  obj,
  str,
  stringMap,
  type CelRule,
  type Schema,
} from '../../apis/schema.ts';
import { managedFieldContract, type FieldContract } from '../../apis/fieldContract.ts';

/** The MyIngress resource type (DNSRecord aliases follow a MyIngress's load balancer too). */
export const myIngressType: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'myingresses',
  kind: 'MyIngress',
  namespaced: true,
};

/** The MyIngress status fields a DNS alias needs. */
export interface MyIngressAliasStatus {
  dnsName?: string;
  canonicalHostedZoneId?: string;
}

/** Where a rule or default action sends requests. Exactly one member is set. */
export interface ActionSpec {
  /** Exactly one of `service` (all requests to one Service) and `services` (split by weight). */
  forward?: ForwardSpec;
  fixedResponse?: { statusCode: number; contentType?: string; body?: string };
  redirect?: {
    protocol?: string;
    port?: string;
    host?: string;
    path?: string;
    query?: string;
    statusCode?: 'HTTP_301' | 'HTTP_302';
  };
}

/** A Kubernetes Service in the same namespace whose ready endpoints become IP targets. */
export interface BackendServiceSpec {
  name: string;
  port: number;
  healthCheck?: {
    path?: string;
    intervalSeconds?: number;
    timeoutSeconds?: number;
    healthyThresholdCount?: number;
    unhealthyThresholdCount?: number;
    matcher?: string;
  };
  /**
   * Seconds a deregistered target keeps its in-flight requests before it is removed (the target
   * group's `deregistration_delay.timeout_seconds`; AWS's default 300).
   */
  deregistrationDelaySeconds?: number;
  /**
   * Seconds over which a newly healthy target's share of requests ramps up (the target group's
   * `slow_start.duration_seconds`): 0 (AWS's default) is off, else 30 to 900.
   */
  slowStartSeconds?: number;
  /**
   * The target group's protocol version (ELBv2 `ProtocolVersion`, fixed at create): `HTTP1` by
   * default, `GRPC` for a GRPCRoute's backends (health checked with a gRPC call, matcher a gRPC
   * status code). Not in the CRD: only the Gateway API front end sets it, on the members it makes
   * of routes (gateway/routes.ts), so a stored MyIngress never carries it.
   */
  protocolVersion?: 'GRPC';
}

/**
 * A forward action: to one Service (`service`), or to several by weight (`services`, one ALB
 * forward with a target group per Service). Exactly one of the two is set.
 */
export interface ForwardSpec {
  service?: BackendServiceSpec;
  services?: WeightedBackendSpec[];
}

/**
 * A backend of a weighted forward: a Service port with its share of requests, `weight` out of the
 * sum of the action's weights (0 to 999, AWS's range; 0 sends it nothing).
 */
export interface WeightedBackendSpec extends BackendServiceSpec {
  weight: number;
}

/** An HTTP header condition: the header `name` has one of `values` (case-insensitive; `*`, `?` wildcards). */
export interface HeaderMatchSpec {
  name: string;
  values: string[];
}

/**
 * A query string condition: the query string holds the pair `key`=`value` (any key when `key` is
 * absent); case-insensitive, `*` and `?` wildcards (`\*`, `\?` match them literally).
 */
export interface QueryStringMatchSpec {
  key?: string;
  value: string;
}

export interface ListenerSpec {
  port: number;
  protocol: 'HTTP' | 'HTTPS';
  certificateArn?: string;
  /** Further certificates of an HTTPS listener, served by SNI (certificateArn stays the default). */
  additionalCertificateArns?: string[];
  /**
   * Host names whose ACM certificates (ISSUED, in the load balancer's account and region) the
   * listener serves: without certificateArn the first host's is the default, the rest are SNI.
   */
  certificateHosts?: string[];
  sslPolicy?: string;
  defaultAction: ActionSpec;
}

export interface RuleSpec {
  priority: number;
  /** Listener the rule belongs to (default: the first listener). */
  listenerPort?: number;
  hosts?: string[];
  paths?: string[];
  /** HTTP header conditions, all of which must hold (each one: any of its values). */
  headers?: HeaderMatchSpec[];
  /** Query string conditions, all of which must hold (each pair its own condition). */
  queryStrings?: QueryStringMatchSpec[];
  /** Request methods, any of which matches (case-sensitive, e.g. GET). */
  methods?: string[];
  action: ActionSpec;
}

/**
 * AWS's limits on a listener rule's conditions ("Condition types for listener rules", ELB
 * Application Load Balancers guide): up to three comparison strings per condition and up to five
 * per rule (hosts, paths, header values, query pairs and methods together); an HTTP header name is
 * at most 40 characters, a header value, query key or value at most 128.
 */
export const ruleConditionLimits = {
  valuesPerCondition: 3,
  valuesPerRule: 5,
  headerNameLength: 40,
  valueLength: 128,
} as const;

/** AWS's limit of target groups in one forward action ("target-groups-per-action-on-application-load-balancer"). */
export const maxTargetGroupsPerForward = 5;

/** The largest weight of a target group in a forward action (AWS accepts 0 to 999). */
export const maxForwardWeight = 999;

/** The Service backends of a forward action, in spec order (one for `service`). Pure. */
export function forwardBackends(f: ForwardSpec | undefined): BackendServiceSpec[] {
  if (f === undefined) return [];
  return f.services !== undefined ? [...f.services] : f.service !== undefined ? [f.service] : [];
}

/**
 * The AWS WAF web ACL of the load balancer. `Managed` (the default): `webAclArn` is associated and
 * kept; without it, only an ACL Skylift itself associated is disassociated (Skylift records the ACL
 * it associated in the load balancer's `skylift.dev/waf-acl` tag), so one attached by someone else
 * (Firewall Manager, another tool) stays. `LeaveAlone`: whatever ACL is attached is never touched.
 */
export interface WafSpec {
  webAclArn?: string;
  policy?: 'Managed' | 'LeaveAlone';
}

export interface MyIngressSpec extends ManagedSpec {
  subnets?: string[];
  subnetSelector?: { tags: Record<string, string> };
  securityGroups?: string[];
  scheme?: 'internet-facing' | 'internal';
  ipAddressType?: 'ipv4' | 'dualstack';
  listeners?: ListenerSpec[];
  rules?: RuleSpec[];
  attributes?: {
    idleTimeoutSeconds?: number;
    deletionProtection?: boolean;
    http2?: boolean;
    accessLogs?: { bucket: string; prefix?: string };
  };
  tags?: Record<string, string>;
  waf?: WafSpec;
  /**
   * Who may connect to the listeners through the security group Skylift manages (only without
   * securityGroups). Absent: anywhere for internet-facing, the VPC's CIDRs for internal.
   */
  inboundCIDRs?: string[];
  /**
   * Joins the shared load balancer of a MyIngressGroup instead of having one of its own: the
   * object brings rules only; the group's load balancer carries them (group/, docs/myingress.md).
   */
  group?: GroupMembershipSpec;
}

/** A MyIngress's membership of a MyIngressGroup. */
export interface GroupMembershipSpec {
  /** The MyIngressGroup (cluster-scoped) whose load balancer carries this object's rules. */
  name: string;
  /** Where its rules go among the members' (lower first; default 0), then by namespace and name. */
  order?: number;
}

/** What Skylift reports of a MyIngress's load balancer (the status schema below lists the same fields). */
export interface MyIngressStatus extends ManagedStatus {
  arn?: string | undefined;
  dnsName?: string | undefined;
  canonicalHostedZoneId?: string | undefined;
  /** provisioning, active, active_impaired or failed. */
  state?: string | undefined;
  listeners?: { port?: number | undefined; arn?: string | undefined }[] | undefined;
  rules?:
    | { listenerPort?: number | undefined; priority?: number | undefined; arn?: string | undefined }[]
    | undefined;
  securityGroups?: string[] | undefined;
  managedSecurityGroup?: string | undefined;
  targetGroups?:
    | {
        service?: string | undefined;
        port?: number | undefined;
        arn?: string | undefined;
        registeredTargets?: number | undefined;
      }[]
    | undefined;
}

export type MyIngress = ManagedObject<MyIngressSpec, MyIngressStatus>;

// Fields inside list items carry no schema defaults (Skylift applies them, see desired.ts): a
// client-side `kubectl apply` or Argo CD's default diff replaces a list whole, so a defaulted item
// would never match its manifest and show a perpetual diff.
const backendProperties: Record<string, Schema> = {
  name: str('Service name.', { minLength: 1, maxLength: 63 }),
  port: int('Service port number.', { minimum: 1, maximum: 65535 }),
  healthCheck: obj(
    'Target group health check.',
    {
      path: str('HTTP path probed (default /).', { maxLength: 1024, pattern: '^/' }),
      intervalSeconds: int('Seconds between probes (default 15).', { minimum: 5, maximum: 300 }),
      timeoutSeconds: int('Seconds before a probe fails (default 5).', { minimum: 2, maximum: 120 }),
      healthyThresholdCount: int('Probes to pass before healthy (default 2).', { minimum: 2, maximum: 10 }),
      unhealthyThresholdCount: int('Probes to fail before unhealthy (default 2).', {
        minimum: 2,
        maximum: 10,
      }),
      matcher: str('HTTP codes that mean healthy, e.g. 200 or 200-399 (default 200).', {
        pattern: '^[0-9]{3}([-,][0-9]{3})*$',
        maxLength: 128,
      }),
    },
    {
      // ELBv2 refuses a timeout that is not below the interval; say so at admission, defaults included.
      'x-kubernetes-validations': [
        {
          rule: '(has(self.timeoutSeconds) ? self.timeoutSeconds : 5) < (has(self.intervalSeconds) ? self.intervalSeconds : 15)',
          message:
            'healthCheck.timeoutSeconds (default 5) must be below healthCheck.intervalSeconds (default 15): lower timeoutSeconds or raise intervalSeconds',
        },
      ],
    },
  ),
  deregistrationDelaySeconds: int(
    'Seconds a target being deregistered (a Pod going away) keeps its in-flight requests before the load balancer cuts them; it gets no new ones meanwhile (the target group’s deregistration_delay.timeout_seconds). Absent: AWS’s default, 300.',
    { minimum: 0, maximum: 3600 },
  ),
  slowStartSeconds: int(
    'Seconds over which the load balancer ramps a newly healthy target’s share of requests up linearly from none to its full share (the target group’s slow_start.duration_seconds): 0 is off, else 30 to 900. Absent: AWS’s default, 0 (off).',
    {
      minimum: 0,
      maximum: 900,
      'x-kubernetes-validations': [
        {
          rule: 'self == 0 || self >= 30',
          message: 'slowStartSeconds is 0 (off) or 30 to 900',
        },
      ],
    },
  ),
};

const backendDescription =
  'A Service in the same namespace; its ready endpoints (EndpointSlices) are registered as IP targets of a target group Skylift manages.';

const backend = obj(backendDescription, backendProperties, { required: ['name', 'port'] });

const weightedBackend = obj(
  `${backendDescription} Gets weight out of the sum of the action’s weights of the requests.`,
  {
    ...backendProperties,
    weight: int(
      `Its share of the requests, relative to the others’ (0 to ${maxForwardWeight}; 0 sends it nothing).`,
      { minimum: 0, maximum: maxForwardWeight },
    ),
  },
  { required: ['name', 'port', 'weight'] },
);

const forward = obj(
  'Forward to a backend Service (service), or to several by weight (services). Set exactly one.',
  {
    service: backend,
    services: arr(
      `Services that share the requests by weight: one forward action with a target group per Service port (at most ${maxTargetGroupsPerForward}, AWS’s limit per action), each getting weight out of the sum of the weights.`,
      weightedBackend,
      { minItems: 1, maxItems: maxTargetGroupsPerForward },
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: 'has(self.service) != has(self.services)',
        message: 'set exactly one of forward.service and forward.services',
      },
      {
        rule: '!has(self.services) || self.services.exists(s, s.weight > 0)',
        message:
          'forward.services needs a weight above 0 (with every weight 0 no Service gets a request: use fixedResponse instead)',
      },
      {
        rule: '!has(self.services) || self.services.all(a, self.services.exists_one(b, a.name == b.name && a.port == b.port))',
        message:
          'forward.services names a Service port twice (one target group per Service port): merge them into one with the sum of their weights',
      },
    ],
  },
);

const action = (what: string): Schema =>
  obj(
    `${what}: forward to a Service, answer with a fixed response, or redirect. Set exactly one.`,
    {
      forward,
      fixedResponse: obj(
        'Answer directly.',
        {
          statusCode: int('HTTP status code: 2XX, 4XX or 5XX (a 3XX is a redirect: use redirect).', {
            minimum: 200,
            maximum: 599,
            // ELBv2 refuses 3XX fixed responses (ValidationError); say so at admission instead.
            'x-kubernetes-validations': [
              {
                rule: 'self < 300 || self >= 400',
                message: 'a fixed response status code is 2XX, 4XX or 5XX; use redirect for 3XX',
              },
            ],
          }),
          contentType: str('Content type (default text/plain).', {
            enum: ['text/plain', 'text/css', 'text/html', 'application/javascript', 'application/json'],
          }),
          body: str('Response body.', { maxLength: 1024 }),
        },
        { required: ['statusCode'] },
      ),
      redirect: obj('Redirect the client.', {
        protocol: str('HTTP, HTTPS or #{protocol} (the default).', {
          pattern: '^(HTTP|HTTPS|#\\{protocol\\})$',
        }),
        port: str('Port or #{port} (the default).', { maxLength: 16 }),
        host: str('Host or #{host} (the default).', { maxLength: 128 }),
        path: str('Path or /#{path} (the default).', { maxLength: 128 }),
        query: str('Query or #{query} (the default).', { maxLength: 128 }),
        statusCode: str('HTTP_301 (permanent, the default) or HTTP_302.', { enum: ['HTTP_301', 'HTTP_302'] }),
      }),
    },
    {
      'x-kubernetes-validations': [
        {
          rule: '[has(self.forward), has(self.fixedResponse), has(self.redirect)].filter(x, x).size() == 1',
          message: 'set exactly one of forward, fixedResponse and redirect',
        },
      ],
    },
  );

/**
 * AWS's default quota of inbound (and, separately, outbound) rules per security group: "Inbound or
 * outbound rules per security group", 60 (docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html#vpc-limits-security-groups).
 * Each CIDR of each port range is one rule.
 */
export const maxRulesPerGroup = 60;

/**
 * AWS's default quota of certificates per Application Load Balancer, the default certificates not
 * counted: 25 ("Certificates per Application Load Balancer"). Counted per listener (a certificate
 * served by SNI on two listeners counts twice: AWS does not say it counts once), for the whole load
 * balancer: admission holds the spec to it (an upper bound: certificateHosts may resolve to one
 * certificate), and an update the listeners as applied (sniQuotaRefusal in desired.ts).
 */
export const maxSniCertificates = 25;

/**
 * Certificates per AddListenerCertificates or RemoveListenerCertificates call: AWS's API reference
 * says "You can specify one certificate per call".
 */
export const sniCertificatesPerCall = 1;

/**
 * The target group settings of a backend and their defaults (desired.ts): two forwards to one
 * Service port share one target group, so these must agree, a setting left out counting as its default.
 */
const targetGroupSettings: readonly (readonly [string, string])[] = [
  ['healthCheck.path', "'/'"],
  ['healthCheck.intervalSeconds', '15'],
  ['healthCheck.timeoutSeconds', '5'],
  ['healthCheck.healthyThresholdCount', '2'],
  ['healthCheck.unhealthyThresholdCount', '2'],
  ['healthCheck.matcher', "'200'"],
  ['deregistrationDelaySeconds', '300'],
  ['slowStartSeconds', '0'],
];

/** CEL: backends `a` and `b` (expressions) are other Service ports, or agree on every target group setting. */
const sameTargetGroupSettings = (a: string, b: string): string =>
  `${a}.name != ${b}.name || ${a}.port != ${b}.port || (${targetGroupSettings
    .map(([f, d]) => {
      // has() and ?: rather than optionals (.?x.orValue()), whose cost the apiserver cannot bound.
      const value = (o: string): string => {
        const parts = f.split('.');
        const present = parts.map((_, i) => `has(${o}.${parts.slice(0, i + 1).join('.')})`).join(' && ');
        return `(${present} ? ${o}.${f} : ${d})`;
      };
      return `${value(a)} == ${value(b)}`;
    })
    .join(' && ')})`;

const conflictMessage = (where: string): string =>
  `every forward to the same Service name and port shares one target group, so healthCheck, deregistrationDelaySeconds and slowStartSeconds must agree (a setting left out counts as its default): ${where} name one Service port with different settings`;

/** CEL rules refusing two forwards to one Service port with different target group settings. */
const conflictingBackends = [
  {
    rule: `!has(self.listeners) || self.listeners.all(x, !has(x.defaultAction.forward) || !has(x.defaultAction.forward.service) || self.listeners.all(y, !has(y.defaultAction.forward) || !has(y.defaultAction.forward.service) || ${sameTargetGroupSettings('x.defaultAction.forward.service', 'y.defaultAction.forward.service')}))`,
    message: conflictMessage('two spec.listeners[].defaultAction.forward.service'),
  },
  {
    rule: `!has(self.rules) || self.rules.all(x, !has(x.action.forward) || !has(x.action.forward.service) || self.rules.all(y, !has(y.action.forward) || !has(y.action.forward.service) || ${sameTargetGroupSettings('x.action.forward.service', 'y.action.forward.service')}))`,
    message: conflictMessage('two spec.rules[].action.forward.service'),
  },
  {
    rule: `!has(self.rules) || !has(self.listeners) || self.listeners.all(x, !has(x.defaultAction.forward) || !has(x.defaultAction.forward.service) || self.rules.all(y, !has(y.action.forward) || !has(y.action.forward.service) || ${sameTargetGroupSettings('x.defaultAction.forward.service', 'y.action.forward.service')}))`,
    message: conflictMessage(
      'a spec.listeners[].defaultAction.forward.service and a spec.rules[].action.forward.service',
    ),
  },
];

/** The load-balancer-level fields a member of a group may not set (the group's are used). */
const groupForbids = [
  'listeners',
  'subnets',
  'subnetSelector',
  'securityGroups',
  'inboundCIDRs',
  'attributes',
  'waf',
  'tags',
  'externalName',
] as const;

const hostPattern =
  '^(\\*\\.)?[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$';

/**
 * The spec rules of a load balancer's own fields, shared with MyIngressGroup (group/api.ts): the
 * managed security group's CIDRs, SNI certificates and inbound rules within AWS's quotas.
 */
export const loadBalancerRules: CelRule[] = [
  {
    rule: '!has(self.inboundCIDRs) || !has(self.securityGroups)',
    message:
      'inboundCIDRs configures the security group Skylift manages, which a load balancer with securityGroups does not get: remove inboundCIDRs and open the groups you name yourself, or remove securityGroups to have Skylift manage one',
  },
  {
    rule: "!has(self.inboundCIDRs) || self.?ipAddressType.orValue('ipv4') == 'dualstack' || self.inboundCIDRs.all(c, !c.contains(':'))",
    message:
      'an IPv6 CIDR in inboundCIDRs needs ipAddressType dualstack (an ipv4 load balancer has no IPv6 address to reach)',
  },
  {
    rule: `!has(self.listeners) || self.listeners.map(l, (has(l.additionalCertificateArns) ? size(l.additionalCertificateArns) : 0) + (has(l.certificateHosts) ? size(l.certificateHosts) : 0) - (!has(l.certificateArn) && has(l.certificateHosts) && size(l.certificateHosts) > 0 ? 1 : 0)).sum() <= ${maxSniCertificates}`,
    message: `more than ${maxSniCertificates} SNI certificates on the load balancer: additionalCertificateArns and certificateHosts of all listeners together (less each listener's default certificate) exceed AWS's default quota of ${maxSniCertificates} certificates per Application Load Balancer; serve fewer names by SNI, or use certificates that cover several names`,
  },
  {
    rule: `!has(self.inboundCIDRs) || !has(self.listeners) || size(self.listeners) * size(self.inboundCIDRs) <= ${maxRulesPerGroup}`,
    message: `listeners × inboundCIDRs is more than ${maxRulesPerGroup} inbound rules (one per listener port and CIDR), AWS’s default quota per security group: use fewer or wider CIDRs, or fewer listeners`,
  },
];

const spec: Schema = obj(
  'The desired Application Load Balancer.',
  {
    subnets: arr(
      'Subnet IDs in at least two Availability Zones. Set subnets or subnetSelector.',
      str('A subnet ID.', { pattern: '^subnet-[0-9a-f]+$' }),
      {
        minItems: 2,
        maxItems: 20,
      },
    ),
    subnetSelector: obj(
      'Select subnets by tags instead of listing them (every tag must match; at least two subnets must be found).',
      { tags: stringMap('Tag key/value pairs.') },
      { required: ['tags'] },
    ),
    securityGroups: arr(
      'Security group IDs for the load balancer, which Skylift sets but never changes. Absent: Skylift creates and manages one for the load balancer (ingress to the listener ports from inboundCIDRs, egress to the targets), and deletes it with the object or when groups are given here.',
      str('A security group ID.', { pattern: '^sg-[0-9a-f]+$' }),
      {
        maxItems: 5,
      },
    ),
    scheme: str('internet-facing or internal. Immutable.', {
      enum: ['internet-facing', 'internal'],
      default: 'internet-facing',
      'x-kubernetes-validations': [immutable('scheme')],
    }),
    ipAddressType: str('ipv4 or dualstack.', { enum: ['ipv4', 'dualstack'], default: 'ipv4' }),
    listeners: arr(
      'Listeners (ports the load balancer accepts connections on).',
      obj(
        'A listener.',
        {
          port: int('Port.', { minimum: 1, maximum: 65535 }),
          protocol: str('HTTP or HTTPS.', { enum: ['HTTP', 'HTTPS'] }),
          certificateArn: str(
            'ACM certificate ARN; an HTTPS listener needs it or certificateHosts. The default certificate: served to clients that send no server name (SNI) or one no certificate covers.',
            {
              pattern: '^arn:aws[a-z-]*:acm:',
            },
          ),
          additionalCertificateArns: arr(
            'Further ACM certificates of an HTTPS listener, served by SNI to clients asking for a name they cover (AddListenerCertificates). At most 25 (AWS’s quota per load balancer, the default certificates not counted).',
            str('ACM certificate ARN.', { pattern: '^arn:aws[a-z-]*:acm:' }),
            { maxItems: maxSniCertificates, 'x-kubernetes-list-type': 'set' },
          ),
          certificateHosts: arr(
            'Host names (e.g. shop.example.com, or *.example.com) whose ACM certificate the HTTPS listener serves: for each host, the ISSUED certificate in the load balancer’s account and region whose domain name or a subject alternative name covers it (the same name, or a *. wildcard covering exactly one label), an exact name before a wildcard, then the one expiring last, then the smallest ARN. Without certificateArn the first host’s certificate is the default and the others are served by SNI, with additionalCertificateArns. Looked up again at later looks, so a renewed or new certificate is picked up; a host no certificate covers leaves the listener as it is and the object not Ready.',
            str('A host name.', { pattern: hostPattern, maxLength: 253 }),
            { maxItems: 10, 'x-kubernetes-list-type': 'set' },
          ),
          sslPolicy: str('Security policy for HTTPS, e.g. ELBSecurityPolicy-TLS13-1-2-2021-06.', {
            maxLength: 128,
          }),
          defaultAction: action('What requests matching no rule get'),
        },
        {
          required: ['port', 'protocol', 'defaultAction'],
          'x-kubernetes-validations': [
            {
              rule: "self.protocol != 'HTTPS' || has(self.certificateArn) || has(self.certificateHosts)",
              message: 'an HTTPS listener needs certificateArn or certificateHosts',
            },
            {
              rule: "self.protocol == 'HTTPS' || !has(self.certificateHosts)",
              message: 'certificateHosts is only for HTTPS listeners',
            },
            {
              rule: '(has(self.additionalCertificateArns) ? size(self.additionalCertificateArns) : 0) + (has(self.certificateHosts) ? size(self.certificateHosts) : 0) <= (has(self.certificateArn) ? 25 : 26)',
              message:
                'at most 25 SNI certificates per listener: additionalCertificateArns and certificateHosts together (less the default certificate) exceed 25',
            },
            {
              rule: "self.protocol == 'HTTPS' || !has(self.certificateArn)",
              message: 'certificateArn is only for HTTPS listeners',
            },
            {
              rule: "self.protocol == 'HTTPS' || !has(self.additionalCertificateArns)",
              message: 'additionalCertificateArns is only for HTTPS listeners',
            },
            {
              rule: '!has(self.additionalCertificateArns) || !has(self.certificateArn) || !(self.certificateArn in self.additionalCertificateArns)',
              message:
                'additionalCertificateArns must not repeat certificateArn (it is the default certificate already)',
            },
          ],
        },
      ),
      { minItems: 1, maxItems: 10, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port'] },
    ),
    rules: arr(
      'Routing rules, evaluated by priority (lowest first). In a group (spec.group): this object’s rules, placed among the other members’ by spec.group.order, then namespace and name, then priority.',
      obj(
        'A rule: host and/or path conditions and an action.',
        {
          priority: int('Priority, unique per listener (1-50000).', { minimum: 1, maximum: 50000 }),
          listenerPort: int(
            'Port of the listener the rule belongs to (default: the first listener; in a group, the first of the group’s listeners).',
            {
              minimum: 1,
              maximum: 65535,
            },
          ),
          hosts: arr(
            'Host header values (wildcards like *.example.com allowed).',
            str('A host.', { pattern: hostPattern, maxLength: 128 }),
            { maxItems: 5 },
          ),
          paths: arr(
            'Path patterns, e.g. /api/*.',
            str('A path pattern.', { pattern: '^/', maxLength: 128 }),
            { maxItems: 5 },
          ),
          headers: arr(
            `HTTP header conditions (http-header), all of which must hold: each one, that the header has one of its values. At most ${ruleConditionLimits.valuesPerCondition} values each, and ${ruleConditionLimits.valuesPerRule} values of all conditions of the rule together (AWS’s limits).`,
            obj(
              'An HTTP header condition: the header has one of the values (any occurrence of it may match).',
              {
                name: str(
                  `The header’s name (case-insensitive; at most ${ruleConditionLimits.headerNameLength} characters, no wildcards).`,
                  {
                    minLength: 1,
                    maxLength: ruleConditionLimits.headerNameLength,
                    pattern: "^[A-Za-z0-9!#$%&'+.^_`|~-]+$",
                  },
                ),
                values: arr(
                  'Values, any of which matches: compared case-insensitively, * matches any run of characters and ? one.',
                  str('A value.', { minLength: 1, maxLength: ruleConditionLimits.valueLength }),
                  { minItems: 1, maxItems: ruleConditionLimits.valuesPerCondition },
                ),
              },
              { required: ['name', 'values'] },
            ),
            {
              minItems: 1,
              maxItems: ruleConditionLimits.valuesPerRule,
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
            },
          ),
          queryStrings: arr(
            'Query string conditions (query-string), all of which must hold: each, that the query string holds its pair (or, without key, its value under any key).',
            obj(
              'A query string pair: compared case-insensitively, * matches any run of characters and ? one (\\* and \\? match them literally).',
              {
                key: str('The key (absent: any key).', {
                  minLength: 1,
                  maxLength: ruleConditionLimits.valueLength,
                }),
                value: str('The value.', { minLength: 1, maxLength: ruleConditionLimits.valueLength }),
              },
              { required: ['value'] },
            ),
            { minItems: 1, maxItems: ruleConditionLimits.valuesPerRule },
          ),
          methods: arr(
            'Request methods (http-request-method), any of which matches; case-sensitive, e.g. GET, POST.',
            str('A method: A-Z, - and _.', { pattern: '^[A-Z_-]+$', maxLength: 40 }),
            {
              minItems: 1,
              maxItems: ruleConditionLimits.valuesPerCondition,
              'x-kubernetes-list-type': 'set',
            },
          ),
          action: action('What matching requests get'),
        },
        {
          required: ['priority', 'action'],
          'x-kubernetes-validations': [
            {
              rule: 'has(self.hosts) || has(self.paths) || has(self.headers) || has(self.queryStrings) || has(self.methods)',
              message: 'a rule needs a condition: hosts, paths, headers, queryStrings or methods',
            },
            {
              rule: `(has(self.hosts) ? size(self.hosts) : 0) + (has(self.paths) ? size(self.paths) : 0) + (has(self.headers) ? self.headers.map(h, size(h.values)).sum() : 0) + (has(self.queryStrings) ? size(self.queryStrings) : 0) + (has(self.methods) ? size(self.methods) : 0) <= ${ruleConditionLimits.valuesPerRule}`,
              message: `more than ${ruleConditionLimits.valuesPerRule} condition values in one rule: hosts, paths, headers[].values, queryStrings and methods together exceed AWS’s limit of ${ruleConditionLimits.valuesPerRule} per rule; split the rule into several`,
            },
          ],
        },
      ),
      { maxItems: 100, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['priority'] },
    ),
    attributes: obj('Load balancer attributes.', {
      idleTimeoutSeconds: int('Idle connection timeout.', { minimum: 1, maximum: 4000, default: 60 }),
      deletionProtection: bool(
        'When true, AWS refuses to delete the load balancer (and Skylift says so instead of deleting).',
        { default: false },
      ),
      http2: bool('Whether HTTP/2 is enabled.', { default: true }),
      accessLogs: obj(
        'Write access logs to an S3 bucket (the bucket policy must allow ELB to write).',
        {
          bucket: str('S3 bucket name.', { minLength: 3, maxLength: 63 }),
          prefix: str('Key prefix inside the bucket.', { maxLength: 256 }),
        },
        { required: ['bucket'] },
      ),
    }),
    tags: stringMap(
      'Extra tags on the load balancer and its target groups (skylift.dev/* keys are reserved).',
      {
        'x-kubernetes-validations': [
          {
            rule: "self.all(k, !k.startsWith('skylift.dev/'))",
            message: 'tag keys starting with skylift.dev/ are reserved',
          },
        ],
      },
    ),
    waf: obj(
      'The AWS WAF (v2) web ACL protecting the load balancer. Absent: Skylift removes only an ACL it associated itself; an ACL someone else associated is left alone.',
      {
        webAclArn: str(
          'The ARN of a REGIONAL WAFv2 web ACL in the load balancer’s account and region, associated with the load balancer (AssociateWebACL). Changing it associates the new ACL in place of the old; removing it disassociates the ACL Skylift associated (never one someone else did).',
          {
            pattern: '^arn:aws[a-z-]*:wafv2:',
            maxLength: 2048,
            'x-kubernetes-validations': [
              {
                rule: "self.matches('^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:[0-9]{12}:regional/webacl/')",
                message:
                  'waf.webAclArn must be the ARN of a REGIONAL WAFv2 web ACL (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>); a CLOUDFRONT (global) ACL cannot protect a load balancer',
              },
            ],
          },
        ),
        policy: str(
          'Managed (the default): Skylift associates webAclArn and puts it back if it is removed or replaced by hand, and without webAclArn removes only the ACL it associated itself. LeaveAlone: Skylift never associates, replaces or removes a web ACL of this load balancer (e.g. when Firewall Manager manages it), and forgets the one it associated.',
          { enum: ['Managed', 'LeaveAlone'] },
        ),
      },
      {
        'x-kubernetes-validations': [
          {
            rule: "!has(self.policy) || self.policy != 'LeaveAlone' || !has(self.webAclArn)",
            message:
              'waf.policy LeaveAlone leaves the web ACL to others: remove waf.webAclArn, or set waf.policy to Managed to have Skylift associate it',
          },
        ],
      },
    ),
    group: obj(
      'Joins the shared load balancer of a MyIngressGroup (cluster-scoped, set up by a cluster administrator) instead of having one of its own: this object brings its rules (and their backend Services), the group’s load balancer carries them beside the other members’. The group must admit this namespace (its spec.allowedNamespaces); a host and path another member claimed first is refused (Synced=False, Conflict) and nothing of the other member’s is changed. May be changed: moving to another group removes this object’s rules and target groups from the old load balancer.',
      {
        name: str('The MyIngressGroup’s name.', {
          minLength: 1,
          maxLength: 253,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
        }),
        order: int(
          'Where this object’s rules go among the members’: lower first (default 0); members with the same order go by namespace, then name; each member’s rules keep their own priority order.',
          { minimum: -1000, maximum: 1000 },
        ),
      },
      { required: ['name'] },
    ),
    inboundCIDRs: arr(
      `Who may connect: the IPv4 (and, with ipAddressType dualstack, IPv6) CIDRs the security group Skylift manages lets in, on every listener port (one inbound rule per port and CIDR: listeners × CIDRs at most ${maxRulesPerGroup}, AWS’s default quota of inbound rules per security group). Absent: 0.0.0.0/0 (and ::/0 with dualstack) for internet-facing, the VPC’s CIDRs for internal. Not with securityGroups: groups you name are yours to configure.`,
      str('A CIDR in canonical form, e.g. 203.0.113.0/24 or 2001:db8::/32.', {
        maxLength: 43,
        'x-kubernetes-validations': [
          { rule: 'isCIDR(self)', message: 'must be a CIDR such as 203.0.113.0/24 or 2001:db8::/32' },
          {
            rule: '!isCIDR(self) || string(cidr(self).masked()) == self',
            message: 'must be a network address in canonical form, e.g. 10.0.0.0/8 rather than 10.1.2.3/8',
          },
        ],
      }),
      { minItems: 1, maxItems: maxRulesPerGroup, 'x-kubernetes-list-type': 'set' },
    ),
    ...managedSpecProperties,
  },
  {
    'x-kubernetes-validations': [
      ...managedSpecRules,
      {
        rule: 'has(self.group) || has(self.listeners)',
        message: 'spec.listeners is required (or spec.group, to join a MyIngressGroup’s load balancer)',
      },
      {
        rule: 'has(self.group) || has(self.subnets) != has(self.subnetSelector)',
        message: 'set exactly one of subnets and subnetSelector',
      },
      {
        rule: `!has(self.group) || [${groupForbids.map((f) => `has(self.${f})`).join(', ')}].all(x, !x)`,
        message: `a member of a MyIngressGroup (spec.group) brings rules only: the group’s load balancer has its own ${groupForbids.join(', ')} (set them on the MyIngressGroup, which a cluster administrator owns), so remove them here, or remove spec.group to have a load balancer of this object’s own`,
      },
      {
        rule: 'has(self.group) == has(oldSelf.group)',
        message:
          'whether spec.group is set is immutable: a MyIngress with a load balancer of its own cannot join a group (its load balancer would be left behind), nor a member leave its group for a load balancer of its own, so create a new MyIngress instead; spec.group.name and spec.group.order may change (a new name moves the member to another group)',
      },
      {
        rule: "!has(self.group) || (self.?deletionPolicy.orValue('Delete') == 'Delete' && self.?managementPolicy.orValue('Manage') == 'Manage')",
        message:
          'a member of a MyIngressGroup (spec.group) is always managed and its rules always deleted with it: its rules live on a load balancer others share, so remove deletionPolicy Orphan and managementPolicy ObserveOnly, or remove spec.group',
      },
      {
        rule: '!has(self.rules) || !has(self.listeners) || self.rules.all(r, !has(r.listenerPort) || self.listeners.exists(l, l.port == r.listenerPort))',
        message: 'a rule’s listenerPort must be the port of one of the listeners',
      },
      // One target group per Service port: two forwards to it with different settings would have
      // the first one's applied and the other's silently ignored.
      ...conflictingBackends,
      ...loadBalancerRules,
    ],
  },
);

const status: Schema = obj('What Skylift observed in AWS.', {
  arn: str('Load balancer ARN.'),
  dnsName: str('The load balancer’s DNS name.'),
  canonicalHostedZoneId: str('The hosted zone ID to use in Route 53 aliases to this load balancer.'),
  state: str('AWS state: provisioning, active, active_impaired or failed.'),
  listeners: arr(
    'Listeners and their ARNs.',
    obj('A listener.', { port: int('Port.'), arn: str('Listener ARN.') }),
  ),
  rules: arr(
    'Rules and their ARNs.',
    obj('A rule.', {
      listenerPort: int('Listener port.'),
      priority: int('Priority.'),
      arn: str('Rule ARN.'),
    }),
  ),
  securityGroups: arr(
    'The load balancer’s security groups, as AWS reports them.',
    str('A security group ID.'),
  ),
  managedSecurityGroup: str(
    'The security group Skylift manages for this load balancer (absent with spec.securityGroups). Let it in on the target ports in the security group of the nodes or Pods behind the load balancer.',
  ),
  targetGroups: arr(
    'One target group per backend Service port, with the targets registered.',
    obj('A target group.', {
      service: str('Service name.'),
      port: int('Service port.'),
      arn: str('Target group ARN.'),
      registeredTargets: int('IP targets registered.'),
    }),
  ),
  ...managedStatusProperties,
});

/** The MyIngress spec schema (MyIngressGroup takes its load balancer's fields from it). Pure. */
export function myIngressSpecSchema(): Schema {
  return spec;
}

/** The MyIngress status schema (MyIngressGroup reports the same load balancer fields). Pure. */
export function myIngressStatusSchema(): Schema {
  return status;
}

/** The myingress CRD. Pure. */
export function myIngressCrd(): CrdManifest {
  return managedCrd({
    type: myIngressType,
    shortName: 'ming',
    description:
      'An AWS Application Load Balancer managed by Skylift: listeners, rules, target groups and IP targets that follow Kubernetes Services.',
    columns: [
      { name: 'DNS Name', type: 'string', jsonPath: '.status.dnsName' },
      { name: 'Scheme', type: 'string', jsonPath: '.spec.scheme' },
    ],
    spec,
    status,
  });
}

const listenerCall = 'CreateListener or ModifyListener';
const actionCall =
  'ModifyListener or ModifyRule with the new action (a forward creates or reuses the target group of its Service and port, RegisterTargets)';
const weightCall = (call: string): string =>
  `${call} with the new weights in the forward action (ForwardConfig.TargetGroups[].Weight); the target groups stay`;
const healthCheckCall = 'ModifyTargetGroup (health check settings of the target group)';
const deregistrationCall =
  'ModifyTargetGroupAttributes (deregistration_delay.timeout_seconds of the target group; at create only when not AWS’s default)';
const slowStartCall =
  'ModifyTargetGroupAttributes (slow_start.duration_seconds of the target group; at create only when not AWS’s default)';

/** What becomes of each MyIngress spec field after create (src/apis/fieldContract.ts). */
export const myIngressFieldContract: FieldContract = {
  scheme: { fixed: 'AWS sets a load balancer’s scheme at create only' },
  subnets: { applied: 'SetSubnets' },
  subnetSelector: { applied: 'SetSubnets with the subnets its tags match (DescribeSubnets)' },
  securityGroups: {
    applied:
      'SetSecurityGroups; given after create, the managed security group is detached and deleted (DeleteSecurityGroup); removed, a managed group is created (CreateSecurityGroup) and set',
  },
  inboundCIDRs: {
    applied:
      'AuthorizeSecurityGroupIngress and RevokeSecurityGroupIngress on the managed security group (only the rules that differ)',
  },
  ipAddressType: { applied: 'SetIpAddressType' },
  'listeners[].port': { applied: listenerCall },
  'listeners[].protocol': { applied: listenerCall },
  'listeners[].certificateArn': { applied: listenerCall },
  'listeners[].additionalCertificateArns': {
    applied: 'AddListenerCertificates and RemoveListenerCertificates (SNI certificates)',
  },
  'listeners[].certificateHosts': {
    applied:
      'ModifyListener (the default certificate) and AddListenerCertificates / RemoveListenerCertificates (SNI) with the certificates ACM lists for the hosts (ListCertificates)',
  },
  'listeners[].sslPolicy': { applied: listenerCall },
  'listeners[].defaultAction': { applied: actionCall },
  'listeners[].defaultAction.forward.service.healthCheck': { applied: healthCheckCall },
  'listeners[].defaultAction.forward.service.deregistrationDelaySeconds': { applied: deregistrationCall },
  'listeners[].defaultAction.forward.service.slowStartSeconds': { applied: slowStartCall },
  'listeners[].defaultAction.forward.services[].healthCheck': { applied: healthCheckCall },
  'listeners[].defaultAction.forward.services[].deregistrationDelaySeconds': { applied: deregistrationCall },
  'listeners[].defaultAction.forward.services[].slowStartSeconds': { applied: slowStartCall },
  'listeners[].defaultAction.forward.services[].weight': { applied: weightCall('ModifyListener') },
  'rules[].priority': { applied: 'SetRulePriorities' },
  'rules[].listenerPort': { applied: 'CreateRule on the new listener, DeleteRule on the old one' },
  'rules[].hosts': { applied: 'ModifyRule (conditions)' },
  'rules[].paths': { applied: 'ModifyRule (conditions)' },
  'rules[].headers': { applied: 'ModifyRule (conditions: http-header)' },
  'rules[].queryStrings': { applied: 'ModifyRule (conditions: query-string)' },
  'rules[].methods': { applied: 'ModifyRule (conditions: http-request-method)' },
  'rules[].action': { applied: actionCall },
  'rules[].action.forward.service.healthCheck': { applied: healthCheckCall },
  'rules[].action.forward.service.deregistrationDelaySeconds': { applied: deregistrationCall },
  'rules[].action.forward.service.slowStartSeconds': { applied: slowStartCall },
  'rules[].action.forward.services[].healthCheck': { applied: healthCheckCall },
  'rules[].action.forward.services[].deregistrationDelaySeconds': { applied: deregistrationCall },
  'rules[].action.forward.services[].slowStartSeconds': { applied: slowStartCall },
  'rules[].action.forward.services[].weight': { applied: weightCall('ModifyRule') },
  attributes: { applied: 'ModifyLoadBalancerAttributes' },
  tags: { applied: 'AddTags and RemoveTags (only tag keys Skylift applied are removed)' },
  group: {
    fixed:
      'whether it is set is fixed at create (a MyIngress with its own load balancer cannot join a group, nor a member leave for one of its own); spec.group.name and spec.group.order may change: the old group’s load balancer loses the member’s rules and target groups (DeleteRule, DeleteTargetGroup; DeleteLoadBalancer when it was the last member), the new group’s gains them (CreateTargetGroup, CreateRule), and an order change moves its rules (ModifyRule)',
  },
  waf: {
    applied:
      'AssociateWebACL (a changed ACL replaces the old one) and DisassociateWebACL (only the ACL Skylift associated, recorded in the skylift.dev/waf-acl tag: AddTags, RemoveTags); LeaveAlone calls neither',
  },
  ...managedFieldContract,
};
