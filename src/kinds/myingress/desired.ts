import type { Action, Listener, Rule, RuleCondition } from '@aws-sdk/client-elastic-load-balancing-v2';
import { planChildSet, type ChildSetResult } from '../../runtime/childSet.ts';
import {
  forwardBackends,
  maxSniCertificates,
  sniCertificatesPerCall,
  type ActionSpec,
  type BackendServiceSpec,
  type MyIngressSpec,
  type RuleSpec,
} from './api.ts';
import { targetGroupName } from './names.ts';

/** A target group the spec needs: one per backend Service port. */
export interface DesiredTargetGroup {
  /** `service:port` */
  readonly key: string;
  readonly name: string;
  readonly service: string;
  readonly port: number;
  /** ELBv2's ProtocolVersion: `GRPC` for a GRPCRoute's backends, else `HTTP1` (AWS's default). */
  readonly protocolVersion: 'HTTP1' | 'GRPC';
  /** Its health check; `matcher` is Matcher.GrpcCode for GRPC, Matcher.HttpCode otherwise. */
  readonly healthCheck: Required<NonNullable<BackendServiceSpec['healthCheck']>>;
  /** Its attributes (ModifyTargetGroupAttributes), with AWS's defaults where the spec says nothing. */
  readonly attributes: TargetGroupAttributes;
}

/** The target group attributes Skylift sets, by ELBv2 key: deregistration delay and slow start. */
export type TargetGroupAttributes = Readonly<Record<TargetGroupAttributeKey, string>>;

/** The ELBv2 keys of the target group attributes Skylift sets. */
export type TargetGroupAttributeKey = 'deregistration_delay.timeout_seconds' | 'slow_start.duration_seconds';

/**
 * AWS's defaults for the target group attributes Skylift sets ("Target group attributes",
 * ELBv2 API reference: deregistration delay 300 s, slow start 0 = off): what a new target group
 * has, and what an attribute AWS does not list counts as.
 */
export const targetGroupAttributeDefaults: TargetGroupAttributes = {
  'deregistration_delay.timeout_seconds': '300',
  'slow_start.duration_seconds': '0',
};

/** The target group attributes a backend asks for (AWS's defaults for those it leaves out). Pure. */
export function wantedTargetGroupAttributes(s: BackendServiceSpec): TargetGroupAttributes {
  const d = targetGroupAttributeDefaults;
  return {
    'deregistration_delay.timeout_seconds':
      s.deregistrationDelaySeconds !== undefined
        ? String(s.deregistrationDelaySeconds)
        : d['deregistration_delay.timeout_seconds'],
    'slow_start.duration_seconds':
      s.slowStartSeconds !== undefined ? String(s.slowStartSeconds) : d['slow_start.duration_seconds'],
  };
}

/**
 * The attributes among `want` that differ from `have` (ELBv2's answer, keys it leaves out counting
 * as AWS's defaults): what one ModifyTargetGroupAttributes must set. Pure.
 */
export function targetGroupAttributeChanges(
  want: TargetGroupAttributes,
  have: Readonly<Record<string, string>>,
): { Key: TargetGroupAttributeKey; Value: string }[] {
  return (Object.keys(want) as TargetGroupAttributeKey[])
    .filter((k) => (have[k] ?? targetGroupAttributeDefaults[k]) !== want[k])
    .map((k) => ({ Key: k, Value: want[k] }));
}

/**
 * The backends (service:port) a spec refers to, with their health checks and attributes: the
 * first forward's settings (admission refuses forwards to one Service port whose settings differ). Pure.
 */
export function desiredTargetGroups(spec: MyIngressSpec, uid: string): DesiredTargetGroup[] {
  const out = new Map<string, DesiredTargetGroup>();
  const visit = (a: ActionSpec): void => {
    for (const s of forwardBackends(a.forward)) {
      const key = `${s.name}:${s.port}`;
      if (out.has(key)) continue;
      out.set(key, {
        key,
        name: targetGroupName(uid, s.name, s.port),
        service: s.name,
        port: s.port,
        protocolVersion: s.protocolVersion ?? 'HTTP1',
        healthCheck: wantedHealthCheck(s),
        attributes: wantedTargetGroupAttributes(s),
      });
    }
  };
  for (const l of spec.listeners ?? []) visit(l.defaultAction);
  for (const r of spec.rules ?? []) visit(r.action);
  return [...out.values()];
}

/**
 * A gRPC target group's health check defaults, as AWS's: the call `/AWS.ALB/healthcheck`, healthy
 * when it answers gRPC status 12 (UNIMPLEMENTED: the server is up and speaks gRPC).
 */
export const grpcHealthCheckDefaults = { path: '/AWS.ALB/healthcheck', matcher: '12' } as const;

/** A backend's health check, AWS's defaults (a gRPC one's for GRPC) where the spec says nothing. Pure. */
function wantedHealthCheck(s: BackendServiceSpec): DesiredTargetGroup['healthCheck'] {
  const grpc = s.protocolVersion === 'GRPC';
  return {
    path: s.healthCheck?.path ?? (grpc ? grpcHealthCheckDefaults.path : '/'),
    intervalSeconds: s.healthCheck?.intervalSeconds ?? 15,
    timeoutSeconds: s.healthCheck?.timeoutSeconds ?? 5,
    healthyThresholdCount: s.healthCheck?.healthyThresholdCount ?? 2,
    unhealthyThresholdCount: s.healthCheck?.unhealthyThresholdCount ?? 2,
    matcher: s.healthCheck?.matcher ?? (grpc ? grpcHealthCheckDefaults.matcher : '200'),
  };
}

/**
 * Why two forwards to one Service port ask for different target group settings (health check,
 * deregistration delay, slow start; a setting left out counting as its default), naming both
 * fields; undefined when they agree. Admission refuses this between `forward.service`s; the
 * weighted `forward.services` are checked here, before any call (one target group per Service
 * port: the first forward's settings would silently win). Pure.
 */
export function backendSettingsRefusal(spec: MyIngressSpec): string | undefined {
  const seen = new Map<string, { field: string; settings: string }>();
  const visit = (a: ActionSpec, at: string): string | undefined => {
    const f = a.forward;
    const each =
      f?.services !== undefined
        ? f.services.map((s, j) => ({ s, field: `${at}.forward.services[${j}]` }))
        : f?.service !== undefined
          ? [{ s: f.service, field: `${at}.forward.service` }]
          : [];
    for (const { s, field } of each) {
      const key = `${s.name}:${s.port}`;
      const settings = JSON.stringify([
        wantedHealthCheck(s),
        wantedTargetGroupAttributes(s),
        s.protocolVersion ?? 'HTTP1',
      ]);
      const before = seen.get(key);
      if (before === undefined) seen.set(key, { field, settings });
      else if (before.settings !== settings)
        return `${before.field} and ${field} forward to Service ${s.name} port ${s.port} with different healthCheck, deregistrationDelaySeconds or slowStartSeconds (a setting left out counts as its default), but every forward to one Service port shares one target group: make them agree`;
    }
    return undefined;
  };
  const listeners = (spec.listeners ?? []).map((l, i) =>
    visit(l.defaultAction, `spec.listeners[${i}].defaultAction`),
  );
  const rules = (spec.rules ?? []).map((r, i) => visit(r.action, `spec.rules[${i}].action`));
  return [...listeners, ...rules].find((m) => m !== undefined);
}

/** The SDK actions for an action spec, given the ARNs of the target groups by `service:port`. Pure. */
export function sdkActions(a: ActionSpec, tgArns: ReadonlyMap<string, string>): Action[] {
  if (a.forward !== undefined) {
    const arnOf = (s: BackendServiceSpec): string => {
      const arn = tgArns.get(`${s.name}:${s.port}`);
      if (arn === undefined) throw new Error(`no target group for ${s.name}:${s.port}`);
      return arn;
    };
    const weighted = a.forward.services;
    if (weighted !== undefined)
      return [
        {
          Type: 'forward',
          ForwardConfig: {
            TargetGroups: weighted.map((s) => ({ TargetGroupArn: arnOf(s), Weight: s.weight })),
          },
        },
      ];
    const s = a.forward.service;
    if (s === undefined) throw new Error('a forward names neither service nor services');
    return [{ Type: 'forward', TargetGroupArn: arnOf(s) }];
  }
  if (a.fixedResponse !== undefined) {
    return [
      {
        Type: 'fixed-response',
        FixedResponseConfig: {
          StatusCode: String(a.fixedResponse.statusCode),
          ContentType: a.fixedResponse.contentType ?? 'text/plain',
          ...(a.fixedResponse.body !== undefined ? { MessageBody: a.fixedResponse.body } : {}),
        },
      },
    ];
  }
  const r = a.redirect ?? {};
  return [
    {
      Type: 'redirect',
      RedirectConfig: {
        Protocol: r.protocol ?? '#{protocol}',
        Port: r.port ?? '#{port}',
        Host: r.host ?? '#{host}',
        Path: r.path ?? '/#{path}',
        Query: r.query ?? '#{query}',
        StatusCode: r.statusCode ?? 'HTTP_301',
      },
    },
  ];
}

/** The conditions of a rule beside hosts and paths. */
export type RuleMatchSpec = Pick<RuleSpec, 'headers' | 'queryStrings' | 'methods'>;

/**
 * The SDK conditions of a rule: host-header, path-pattern, one http-header per header, one
 * query-string per pair (a rule's pairs must all be there; the values of one ALB condition would
 * be ORed), http-request-method. Pure.
 */
export function sdkConditions(
  hosts: readonly string[] | undefined,
  paths: readonly string[] | undefined,
  more: RuleMatchSpec = {},
): RuleCondition[] {
  const c: RuleCondition[] = [];
  if (hosts !== undefined && hosts.length > 0)
    c.push({ Field: 'host-header', HostHeaderConfig: { Values: [...hosts] } });
  if (paths !== undefined && paths.length > 0)
    c.push({ Field: 'path-pattern', PathPatternConfig: { Values: [...paths] } });
  for (const h of more.headers ?? [])
    c.push({ Field: 'http-header', HttpHeaderConfig: { HttpHeaderName: h.name, Values: [...h.values] } });
  for (const q of more.queryStrings ?? [])
    c.push({
      Field: 'query-string',
      QueryStringConfig: { Values: [{ ...(q.key !== undefined ? { Key: q.key } : {}), Value: q.value }] },
    });
  if (more.methods !== undefined && more.methods.length > 0)
    c.push({ Field: 'http-request-method', HttpRequestMethodConfig: { Values: [...more.methods] } });
  return c;
}

/** A canonical string of actions, for comparing what AWS has with what is wanted. Pure. */
export function actionsKey(actions: readonly Action[] | undefined): string {
  return JSON.stringify(
    (actions ?? []).map((a) => {
      switch (a.Type) {
        case 'forward': {
          // AWS describes a one-group forward with both TargetGroupArn and ForwardConfig (weight 1);
          // a weighted one with ForwardConfig only. One group gets every request whatever its weight.
          const groups = a.ForwardConfig?.TargetGroups ?? [];
          const pairs =
            groups.length > 0
              ? groups.map((g) => [g.TargetGroupArn ?? '', g.Weight ?? 1] as const)
              : [[a.TargetGroupArn ?? '', 1] as const];
          if (pairs.length === 1) return ['forward', pairs[0]?.[0] ?? ''];
          return ['forward', ...[...pairs].sort((x, y) => cmp(x[0], y[0])).map(([arn, w]) => `${arn}=${w}`)];
        }
        case 'fixed-response':
          return [
            'fixed',
            a.FixedResponseConfig?.StatusCode ?? '',
            a.FixedResponseConfig?.ContentType ?? '',
            a.FixedResponseConfig?.MessageBody ?? '',
          ];
        case 'redirect': {
          const r = a.RedirectConfig;
          return ['redirect', r?.Protocol, r?.Port, r?.Host, r?.Path, r?.Query, r?.StatusCode];
        }
        default:
          return [a.Type ?? ''];
      }
    }),
  );
}

/**
 * A canonical string of rule conditions (order-insensitive): hosts and header names in lower case
 * (ALB compares them so); header values, query pairs and methods as given. Pure.
 */
export function conditionsKey(conditions: readonly RuleCondition[] | undefined): string {
  const hosts: string[] = [];
  const paths: string[] = [];
  const headers: string[] = [];
  const queries: string[] = [];
  const methods: string[] = [];
  for (const c of conditions ?? []) {
    if (c.Field === 'host-header')
      hosts.push(...(c.HostHeaderConfig?.Values ?? c.Values ?? []).map((h) => h.toLowerCase()));
    if (c.Field === 'path-pattern') paths.push(...(c.PathPatternConfig?.Values ?? c.Values ?? []));
    if (c.Field === 'http-header')
      headers.push(
        JSON.stringify([
          (c.HttpHeaderConfig?.HttpHeaderName ?? '').toLowerCase(),
          [...(c.HttpHeaderConfig?.Values ?? [])].sort(),
        ]),
      );
    if (c.Field === 'query-string')
      queries.push(
        JSON.stringify(
          (c.QueryStringConfig?.Values ?? []).map((kv) => [kv.Key ?? null, kv.Value ?? '']).sort(),
        ),
      );
    if (c.Field === 'http-request-method') methods.push(...(c.HttpRequestMethodConfig?.Values ?? []));
  }
  return JSON.stringify([hosts.sort(), paths.sort(), headers.sort(), queries.sort(), methods.sort()]);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Whether a listener in AWS matches the wanted one (protocol, default certificate, SNI certificates,
 * policy, default action). Pure.
 */
export function listenerMatches(
  l: Listener,
  want: {
    protocol: string;
    certificateArn?: string | undefined;
    /** The SNI certificates; undefined: not compared (a listener described without them). */
    additionalCertificateArns?: readonly string[] | undefined;
    sslPolicy?: string | undefined;
    actions: Action[];
  },
): boolean {
  return (
    listenerBaseMatches(l, want) &&
    (want.additionalCertificateArns === undefined ||
      sameArnSet(sniCertificates(l), want.additionalCertificateArns))
  );
}

/**
 * The listener's SNI certificates as observe records them: every certificate after the first
 * (the default, see {@link defaultCertificate}). Pure.
 */
export function sniCertificates(l: Listener): string[] {
  const def = defaultCertificate(l);
  return (l.Certificates ?? []).map((c) => c.CertificateArn ?? '').filter((arn) => arn !== '' && arn !== def);
}

/**
 * The calls that bring a listener's SNI certificates (`have`, ARNs) to `want`: the missing ones
 * added before the unwanted ones are removed (clients keep being served), one certificate per
 * call (AWS's), never more than {@link maxSniCertificates} on the listener at any moment (a full
 * listener has some removed first to make room). Every SNI certificate of Skylift's listener is
 * Skylift's. `{ ok: false }` when `want` holds more than the quota. Pure.
 */
export function sniPlan(have: readonly string[], want: readonly string[]): ChildSetResult<string, string> {
  return planChildSet(
    want.map((arn) => [arn, arn] as const),
    have.map((arn) => [arn, { value: arn, ours: true }] as const),
    { limits: { perCall: sniCertificatesPerCall, total: maxSniCertificates } },
  );
}

/**
 * Why the listeners as applied (certificateHosts resolved) would take the load balancer over AWS's
 * quota of {@link maxSniCertificates} SNI certificates — counted per listener, as admission counts
 * them — naming each listener's count and a fix; undefined when they fit. Pure.
 */
export function sniQuotaRefusal(spec: MyIngressSpec): string | undefined {
  const counts = (spec.listeners ?? []).map((l) => ({
    port: l.port,
    n: l.additionalCertificateArns?.length ?? 0,
  }));
  const total = counts.reduce((sum, c) => sum + c.n, 0);
  if (total <= maxSniCertificates) return undefined;
  const each = counts
    .map((c, i) => (c.n > 0 ? `spec.listeners[${i}] (port ${c.port}): ${c.n}` : undefined))
    .filter((s) => s !== undefined)
    .join(', ');
  return `${total} SNI certificates on the load balancer (${each}, the certificates certificateHosts found included), more than AWS's default quota of ${maxSniCertificates} per Application Load Balancer: serve fewer names by SNI, or use certificates that cover several names`;
}

/** The listener's default certificate: the one marked IsDefault, else the first. Pure. */
export function defaultCertificate(l: Listener): string | undefined {
  const certs = l.Certificates ?? [];
  return (certs.find((c) => c.IsDefault === true) ?? certs[0])?.CertificateArn ?? undefined;
}

function sameArnSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/**
 * Whether what ModifyListener sets matches (protocol, default certificate, policy, default
 * action), SNI certificates aside. Pure.
 */
export function listenerBaseMatches(
  l: Listener,
  want: {
    protocol: string;
    certificateArn?: string | undefined;
    sslPolicy?: string | undefined;
    actions: Action[];
  },
): boolean {
  return (
    l.Protocol === want.protocol &&
    defaultCertificate(l) === want.certificateArn &&
    (want.sslPolicy === undefined || l.SslPolicy === want.sslPolicy) &&
    actionsKey(l.DefaultActions) === actionsKey(want.actions)
  );
}

/** Whether a rule in AWS matches the wanted one. Pure. */
export function ruleMatches(r: Rule, want: { conditions: RuleCondition[]; actions: Action[] }): boolean {
  return (
    conditionsKey(r.Conditions) === conditionsKey(want.conditions) &&
    actionsKey(r.Actions) === actionsKey(want.actions)
  );
}

/** A Service as the adapter reads it. */
export interface ServiceLike {
  spec?: { ports?: { name?: string; port: number; targetPort?: number | string }[] };
}

/** An EndpointSlice as the adapter reads it. */
export interface EndpointSliceLike {
  ports?: { name?: string | null; port?: number | null }[] | null;
  endpoints?:
    | {
        addresses: string[];
        conditions?: { ready?: boolean | null; terminating?: boolean | null } | null;
        targetRef?: { kind?: string | null; name?: string | null } | null;
      }[]
    | null;
}

/**
 * The IP targets for a Service port: ready endpoint addresses from its
 * EndpointSlices, on the slice port whose name matches the Service port (or
 * the numeric targetPort) — and those of endpoints not ready yet whose Pod
 * `registersEarly` names (a Pod waiting only for the target-health gate,
 * readinessGate.ts); never a terminating endpoint's. Undefined when the
 * Service or port does not exist. Pure given `registersEarly`.
 */
export function resolveTargets(
  service: ServiceLike | undefined,
  slices: readonly EndpointSliceLike[],
  servicePort: number,
  registersEarly: (pod: string) => boolean = () => false,
): { port: number; ips: string[] } | undefined {
  const sp = service?.spec?.ports?.find((p) => p.port === servicePort);
  if (sp === undefined) return undefined;
  const ips = new Set<string>();
  let port: number | undefined = typeof sp.targetPort === 'number' ? sp.targetPort : undefined;
  for (const slice of slices) {
    const match =
      (slice.ports ?? []).find((p) => (p.name ?? '') === (sp.name ?? '')) ??
      (slice.ports?.length === 1 ? slice.ports[0] : undefined);
    if (match?.port === undefined || match.port === null) continue;
    port = match.port;
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.terminating === true) continue;
      if (ep.conditions?.ready === false) {
        const pod = ep.targetRef?.kind === 'Pod' ? ep.targetRef.name : undefined;
        if (pod === undefined || pod === null || !registersEarly(pod)) continue;
      }
      for (const a of ep.addresses) ips.add(a);
    }
  }
  return { port: port ?? servicePort, ips: [...ips].sort() };
}
