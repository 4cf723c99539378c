// DescribeTargetHealth as the data plane measured it: a fault-proxy rule that rewrites the
// emulator's answer (moto calls every registered target healthy and forgets deregistered ones).
import type { FaultRule } from '../awsFaultProxy.ts';
import type { TargetState } from './health.ts';

/** One target's health as the data plane measured it. */
export interface MeasuredTarget {
  readonly id: string;
  readonly port: number;
  readonly state: TargetState | 'unused';
  readonly reason?: string;
  readonly description?: string;
}

/** The targets of one target group the data plane knows, registered and draining; undefined if it does not know the group. */
export type MeasuredHealth = (targetGroupArn: string) => readonly MeasuredTarget[] | undefined;

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function healthXml(t: Pick<MeasuredTarget, 'state' | 'reason' | 'description'>): string {
  return (
    `<TargetHealth><State>${t.state}</State>` +
    (t.reason !== undefined ? `<Reason>${escapeXml(t.reason)}</Reason>` : '') +
    (t.description !== undefined ? `<Description>${escapeXml(t.description)}</Description>` : '') +
    `</TargetHealth>`
  );
}

/** The targets a DescribeTargetHealth request names (`Targets.member.N.Id` / `.Port`), or undefined for all. Pure. */
export function requestedTargets(body: string): { id: string; port?: number }[] | undefined {
  const params = new URLSearchParams(body);
  const out: { id: string; port?: number }[] = [];
  for (let n = 1; n <= 1000; n++) {
    const id = params.get(`Targets.member.${n}.Id`);
    if (id === null) break;
    const port = params.get(`Targets.member.${n}.Port`);
    out.push({ id, ...(port !== null ? { port: Number(port) } : {}) });
  }
  return out.length > 0 ? out : undefined;
}

/**
 * Rewrites a DescribeTargetHealth answer: each listed target gets the state the data plane measured
 * (`initial`/`Elb.RegistrationInProgress` for one it has not seen yet), and draining targets the
 * emulator no longer lists are added, as AWS lists them until the deregistration delay ends. Answers
 * without `<TargetHealthDescriptions>` (errors) are returned unchanged. Pure.
 */
export function rewriteTargetHealth(
  xml: string,
  measured: readonly MeasuredTarget[],
  requested: readonly { id: string; port?: number }[] | undefined,
): string {
  const list = /<TargetHealthDescriptions>([\s\S]*?)<\/TargetHealthDescriptions>/.exec(xml);
  if (list === null) return xml;
  const key = (id: string, port: number): string => `${id}:${port}`;
  const byKey = new Map(measured.map((m) => [key(m.id, m.port), m]));
  const listed = new Set<string>();
  const members = (list[1] ?? '').replace(/<member>([\s\S]*?)<\/member>/g, (whole, inner: string) => {
    const id = /<Target>[\s\S]*?<Id>([^<]*)<\/Id>/.exec(inner)?.[1] ?? '';
    const port = Number(/<Target>[\s\S]*?<Port>([^<]*)<\/Port>/.exec(inner)?.[1] ?? NaN);
    const k = key(id, port);
    listed.add(k);
    const m = byKey.get(k);
    const health = m ?? {
      state: 'initial' as const,
      reason: 'Elb.RegistrationInProgress',
      description: 'Target registration is in progress',
    };
    // The emulator answers `unused` for a target it no longer holds: keep that unless we drain it.
    if (m === undefined && /<State>unused<\/State>/.test(inner)) return whole;
    return `<member>${inner.replace(/<TargetHealth>[\s\S]*?<\/TargetHealth>|<TargetHealth\/>/, healthXml(health))}</member>`;
  });
  let extra = '';
  for (const m of measured) {
    if (m.state !== 'draining' || listed.has(key(m.id, m.port))) continue;
    if (
      requested !== undefined &&
      !requested.some((r) => r.id === m.id && (r.port === undefined || r.port === m.port))
    )
      continue;
    extra += `<member><Target><Id>${escapeXml(m.id)}</Id><Port>${m.port}</Port></Target><HealthCheckPort>${m.port}</HealthCheckPort>${healthXml(m)}</member>`;
  }
  return xml.replace(list[0], `<TargetHealthDescriptions>${members}${extra}</TargetHealthDescriptions>`);
}

/**
 * A fault-proxy rule (install with `proxy.inject(...)`) that makes DescribeTargetHealth answer
 * with what `measured` reports. A target group it does not know (yet: created since its last sync)
 * has its targets answered `initial`, as AWS answers a target whose checks have not run: the
 * emulator's own answer (every target healthy at once) would open readiness gates early.
 */
export function describeTargetHealthRule(measured: MeasuredHealth): FaultRule {
  return {
    service: 'elasticloadbalancing',
    operation: 'DescribeTargetHealth',
    fault: {
      kind: 'rewrite',
      rewrite: (body, call) => {
        const arn = new URLSearchParams(call.body).get('TargetGroupArn') ?? '';
        return rewriteTargetHealth(body, measured(arn) ?? [], requestedTargets(call.body));
      },
    },
  };
}
