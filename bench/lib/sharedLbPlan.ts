// The objects of the shared load balancer scenarios (`myingress-group`, `gateway`): the
// MyIngressGroups and their member MyIngresses, or one Gateway and its HTTPRoutes, each member with
// one rule to its own Service (and a stand-in EndpointSlice, as the `myingress` scenario makes
// them), and the change of one member's rule the scenario measures. Pure.
import type { KubeObject } from '../../src/apis/meta.ts';
import type { Condition } from '../../src/apis/managed.ts';
import {
  gatewayApiGroup,
  skyliftGatewayClassName,
  skyliftGatewayControllerName,
  type Gateway,
  type HTTPRoute,
} from '../../src/apis/gatewayApi.ts';
import type { MyIngressSpec, RuleSpec } from '../../src/kinds/myingress/api.ts';
import type { MyIngressGroupSpec } from '../../src/kinds/myingress/group/api.ts';
import { standInEndpointSlices } from '../../dev/samples.ts';
import type { Scenario, SharedLbShape } from '../scenarios.ts';

/** Everything a shared load balancer scenario makes, in the order it is made. */
export interface SharedLbPlan {
  readonly front: SharedLbShape['front'];
  /** The members' namespaces (and the Gateway's, first, for `gateway`). */
  readonly namespaces: readonly string[];
  /** Services and EndpointSlices, created before the operator starts; not measured. */
  readonly supporting: readonly KubeObject[];
  /** The MyIngressGroups (cluster-scoped), or the one Gateway. */
  readonly parents: readonly KubeObject[];
  /** The MyIngresses or HTTPRoutes, in creation order. */
  readonly members: readonly KubeObject[];
  /** The member whose rule the change phase changes (the first), and the merge patch doing it. */
  readonly change: {
    readonly member: KubeObject;
    readonly patch: Record<string, unknown>;
    /** The path its rule matches before and after. */
    readonly fromPath: string;
    readonly toPath: string;
  };
}

/** The Gateway's name in a `gateway` scenario (in namespace `<prefix>-gw`). */
export const benchGatewayName = 'shared';

/**
 * Service `svc-<i>` in `namespace` (port 80 → 8080) and its stand-in EndpointSlice. Headless: the
 * local stack's Service range is a /24, which 200 Services and the previous scenario's, still being
 * deleted with their namespace, overflow ("range is full"); Skylift reads only a Service's ports and
 * its EndpointSlices.
 */
function serviceWithSlice(i: number, namespace: string): KubeObject[] {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace },
    spec: { clusterIP: 'None', selector: { app: `svc-${i}` }, ports: [{ port: 80, targetPort: 8080 }] },
  } as KubeObject;
  return [service, ...standInEndpointSlices([service], namespace)];
}

/** The groups, members and namespaces a scenario of `size` members has. Pure. */
export function sharedLbCounts(
  shape: SharedLbShape,
  size: number,
): { groups: number; namespaces: number; membersPerGroup: number } {
  const namespaces = Math.max(
    1,
    Math.min(shape.maxNamespaces, Math.ceil(size / shape.membersPerNamespace), size),
  );
  if (shape.front === 'gateway') return { groups: 1, namespaces, membersPerGroup: size };
  const perGroup = Math.max(1, shape.membersPerGroup ?? size);
  return { groups: Math.ceil(size / perGroup), namespaces, membersPerGroup: perGroup };
}

/** One rule forwarding `path` to Service `svc-<i>`, as a MyIngress member has it. */
function memberRules(i: number, path: string): RuleSpec[] {
  return [{ priority: 1, paths: [path], action: { forward: { service: { name: `svc-${i}`, port: 80 } } } }];
}

/** One rule matching the path prefix `path`, to Service `svc-<i>`, as an HTTPRoute has it. */
function routeRules(i: number, path: string): NonNullable<HTTPRoute['spec']['rules']> {
  return [
    {
      matches: [{ path: { type: 'PathPrefix', value: path } }],
      backendRefs: [{ name: `svc-${i}`, port: 80 }],
    },
  ];
}

/**
 * The objects of a shared load balancer scenario, names starting with `prefix` (unique,
 * DNS-label-safe). `myingress-group`: MyIngressGroups `<prefix>-g<k>` (internet-facing, in the
 * subnets tagged `kubernetes.io/role/elb=1`, one HTTP listener on port 80, admitting every
 * namespace); member `i` is MyIngress `ing-<i>` of group `floor(i / membersPerGroup)`, in namespace
 * `<prefix>-n<i mod namespaces>`, one rule for path `/m<i>` to Service `svc-<i>` there. `gateway`:
 * Gateway {@link benchGatewayName} in `<prefix>-gw` (class `skylift`, one HTTP listener on port 80
 * admitting routes from All namespaces); route `i` is HTTPRoute `route-<i>` in namespace
 * `<prefix>-n<i mod namespaces>`, one rule for path prefix `/r<i>` to Service `svc-<i>` there. The
 * change: the first member's path gains `-changed`. Throws for a scenario without
 * {@link SharedLbShape}. Pure.
 */
export function sharedLbPlan(scenario: Scenario, prefix: string): SharedLbPlan {
  const shape = scenario.group.shared;
  if (shape === undefined) throw new Error(`${scenario.id}: not a shared load balancer scenario`);
  const { groups, namespaces: nsCount, membersPerGroup } = sharedLbCounts(shape, scenario.size);
  const memberNamespaces = Array.from({ length: nsCount }, (_, k) => `${prefix}-n${k}`);
  const nsOf = (i: number): string => memberNamespaces[i % nsCount] as string;
  const supporting = Array.from({ length: scenario.size }, (_, i) => serviceWithSlice(i, nsOf(i))).flat();

  if (shape.front === 'myingress-group') {
    const groupNames = Array.from({ length: groups }, (_, k) => `${prefix}-g${k}`);
    const parents = groupNames.map((name) => {
      const spec: MyIngressGroupSpec = {
        scheme: 'internet-facing',
        subnetSelector: { tags: { 'kubernetes.io/role/elb': '1' } },
        listeners: [{ port: 80, protocol: 'HTTP' }],
        allowedNamespaces: { from: 'All' },
      };
      return { apiVersion: 'aws.skylift.dev/v1alpha1', kind: 'MyIngressGroup', metadata: { name }, spec };
    }) as KubeObject[];
    const members = Array.from({ length: scenario.size }, (_, i) => {
      const spec: MyIngressSpec = {
        group: { name: groupNames[Math.floor(i / membersPerGroup)] as string },
        rules: memberRules(i, `/m${i}`),
      };
      return {
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngress',
        metadata: { name: `ing-${i}`, namespace: nsOf(i) },
        spec,
      } as KubeObject;
    });
    return {
      front: shape.front,
      namespaces: memberNamespaces,
      supporting,
      parents,
      members,
      change: {
        member: members[0] as KubeObject,
        patch: { spec: { rules: memberRules(0, '/m0-changed') } },
        fromPath: '/m0',
        toPath: '/m0-changed',
      },
    };
  }

  const gatewayNamespace = `${prefix}-gw`;
  const gateway: Gateway = {
    apiVersion: `${gatewayApiGroup}/v1`,
    kind: 'Gateway',
    metadata: { name: benchGatewayName, namespace: gatewayNamespace },
    spec: {
      gatewayClassName: skyliftGatewayClassName,
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
      ],
    },
  };
  const members = Array.from({ length: scenario.size }, (_, i) => {
    const route: HTTPRoute = {
      apiVersion: `${gatewayApiGroup}/v1`,
      kind: 'HTTPRoute',
      metadata: { name: `route-${i}`, namespace: nsOf(i) },
      spec: {
        parentRefs: [{ name: benchGatewayName, namespace: gatewayNamespace }],
        rules: routeRules(i, `/r${i}`),
      },
    };
    return route;
  });
  return {
    front: shape.front,
    namespaces: [gatewayNamespace, ...memberNamespaces],
    supporting,
    parents: [gateway],
    members,
    change: {
      member: members[0] as KubeObject,
      patch: { spec: { rules: routeRules(0, '/r0-changed') } },
      fromPath: '/r0',
      toPath: '/r0-changed',
    },
  };
}

/** An object's conditions, as Skylift and the Gateway API write them. */
interface WithConditions {
  readonly metadata: { readonly generation?: number };
  readonly status?: {
    readonly conditions?: readonly Condition[];
    readonly members?: readonly { readonly state?: string; readonly observedGeneration?: number }[];
    readonly listeners?: readonly { readonly attachedRoutes?: number }[];
    readonly parents?: readonly {
      readonly controllerName?: string;
      readonly parentRef?: { readonly name?: string; readonly namespace?: string };
      readonly conditions?: readonly Condition[];
    }[];
  };
}

/** `type` is True in `conditions` and judged this `generation`. Pure. */
function trueAt(
  conditions: readonly Condition[] | undefined,
  type: string,
  generation: number | undefined,
): boolean {
  const c = conditions?.find((x) => x.type === type);
  return c?.status === 'True' && c.observedGeneration === generation;
}

/**
 * A member is done: a MyIngress Ready at its generation; an HTTPRoute Accepted at its generation by
 * Skylift's controller for the Gateway {@link benchGatewayName} of `gatewayNamespace` (Skylift says
 * a route Accepted once its group carries this generation of its rules). Pure.
 */
export function memberDone(
  front: SharedLbShape['front'],
  obj: KubeObject,
  gatewayNamespace?: string,
): boolean {
  const o = obj as unknown as WithConditions;
  const generation = o.metadata.generation;
  if (front === 'myingress-group') return trueAt(o.status?.conditions, 'Ready', generation);
  return (o.status?.parents ?? []).some(
    (p) =>
      p.controllerName === skyliftGatewayControllerName &&
      p.parentRef?.name === benchGatewayName &&
      (p.parentRef.namespace ?? obj.metadata.namespace) === gatewayNamespace &&
      trueAt(p.conditions, 'Accepted', generation),
  );
}

/**
 * A parent is done with `members` members: a MyIngressGroup Ready at its generation listing that
 * many members, every one Attached; the Gateway Programmed at its generation with that many routes
 * attached to its listener (`members` undefined: Programmed alone). Pure.
 */
export function parentDone(
  front: SharedLbShape['front'],
  obj: KubeObject,
  members: number | undefined,
): boolean {
  const o = obj as unknown as WithConditions;
  const generation = o.metadata.generation;
  if (front === 'myingress-group') {
    const listed = o.status?.members ?? [];
    return (
      trueAt(o.status?.conditions, 'Ready', generation) &&
      listed.length === members &&
      listed.every((m) => m.state === 'Attached')
    );
  }
  if (!trueAt(o.status?.conditions, 'Programmed', generation)) return false;
  return members === undefined || o.status?.listeners?.[0]?.attachedRoutes === members;
}
