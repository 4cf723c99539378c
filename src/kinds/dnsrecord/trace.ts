// DNSRecord → hosted zone → record set and its ownership TXT record, plus the
// MyIngress an alias follows.
import {
  GetHostedZoneCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
  type RRType,
} from '@aws-sdk/client-route-53';
import type { DNSRecord } from './api.ts';
import { myIngressType, type MyIngress } from '../myingress/api.ts';
import { awsErrorCode } from '../../providers/aws/errors.ts';
import { normalizeName, ownerRecordName, parseOwnerValue } from '../../providers/route53/names.ts';
import { KubeApiError } from '../../runtime/kube/client.ts';
import { resourcePath } from '../../apis/meta.ts';
import type { ManagedObject } from '../../apis/managed.ts';
import type { Collector, TraceContext } from '../../trace/context.ts';
import { describeSafely, errorNode, node, notFoundNode, NotFoundInAws } from '../../trace/tree.ts';
import type { TraceNode } from '../../trace/tree.ts';

function isZoneNotFound(err: unknown): boolean {
  return awsErrorCode(err) === 'NoSuchHostedZone';
}

/**
 * The DNSRecord collector: the zone and record set recorded in status, listed
 * live, and the alias's MyIngress; ownership TXT records are named with
 * `ownerPrefix` (the operator's --txt-owner-prefix).
 */
export const traceDnsRecord =
  (ownerPrefix: string): Collector =>
  async (obj: ManagedObject, ctx: TraceContext) => {
    const mr = obj as DNSRecord;
    const zoneId = mr.status?.zoneId;
    const fqdn = mr.status?.fqdn;
    const nodes: TraceNode[] = [];
    if (zoneId === undefined || fqdn === undefined) {
      nodes.push(
        node('RecordSet', '-', 'NotCreated', false, ['no hosted zone or record recorded in status yet']),
      );
    } else {
      nodes.push(
        await describeSafely(
          'HostedZone',
          zoneId,
          async () => {
            const zone = await (await ctx.aws.route53()).send(new GetHostedZoneCommand({ Id: zoneId }));
            const zoneName = zone.HostedZone?.Name ?? '?';
            const ownerName = ownerRecordName(fqdn, mr.spec.type, mr.spec.setIdentifier, ownerPrefix);
            return node(
              'HostedZone',
              zoneId,
              'exists',
              true,
              [`name=${zoneName}`],
              [await recordNode(ctx, zoneId, fqdn, mr), await ownerNode(ctx, zoneId, ownerName, mr)],
            );
          },
          isZoneNotFound,
        ),
      );
    }
    const ref = mr.spec.aliasTarget?.myIngressRef?.name;
    if (ref !== undefined) nodes.push(await followedMyIngress(ctx, mr, ref));
    return nodes;
  };

/** The record set of `name` and `type` (and set identifier), listed live; undefined when absent. */
async function findRecordSet(
  ctx: TraceContext,
  zoneId: string,
  name: string,
  type: string,
  setIdentifier: string | undefined,
): Promise<ResourceRecordSet | undefined> {
  const out = await (
    await ctx.aws.route53()
  ).send(
    new ListResourceRecordSetsCommand({
      HostedZoneId: zoneId,
      StartRecordName: name,
      StartRecordType: type as RRType,
      MaxItems: 100,
    }),
  );
  return (out.ResourceRecordSets ?? []).find(
    (r) =>
      normalizeName(r.Name ?? '') === normalizeName(name) &&
      r.Type === type &&
      (r.SetIdentifier ?? '') === (setIdentifier ?? ''),
  );
}

async function recordNode(
  ctx: TraceContext,
  zoneId: string,
  fqdn: string,
  mr: DNSRecord,
): Promise<TraceNode> {
  const name = `${fqdn} ${mr.spec.type}`;
  return describeSafely('RecordSet', name, async () => {
    const rr = await findRecordSet(ctx, zoneId, fqdn, mr.spec.type, mr.spec.setIdentifier);
    if (rr === undefined) throw new NotFoundInAws(name);
    const alias = rr.AliasTarget;
    const details =
      alias !== undefined
        ? [`alias=${alias.DNSName ?? '?'}`, `zone=${alias.HostedZoneId ?? '?'}`]
        : [
            `ttl=${rr.TTL ?? '?'}`,
            `values=${(rr.ResourceRecords ?? []).map((v) => v.Value ?? '').join(',')}`,
          ];
    return node('RecordSet', name, 'exists', true, [
      ...details,
      ...(rr.SetIdentifier !== undefined ? [`set=${rr.SetIdentifier}`, `weight=${rr.Weight ?? '?'}`] : []),
    ]);
  });
}

/** The ownership TXT record beside it: which CR owns the record. Another owner is a Conflict. */
async function ownerNode(
  ctx: TraceContext,
  zoneId: string,
  ownerName: string,
  mr: DNSRecord,
): Promise<TraceNode> {
  return describeSafely('OwnershipTXT', ownerName, async () => {
    const rr = await findRecordSet(ctx, zoneId, ownerName, 'TXT', undefined);
    if (rr === undefined) throw new NotFoundInAws(ownerName);
    const owner = parseOwnerValue((rr.ResourceRecords ?? []).map((v) => v.Value ?? '').join(' '));
    if (owner === undefined)
      return node('OwnershipTXT', ownerName, 'NotSkylift', false, ['not a Skylift ownership record']);
    const ours = owner.uid === mr.metadata.uid;
    return node('OwnershipTXT', ownerName, ours ? 'exists' : 'Conflict', ours, [
      `owner=${owner.owner}`,
      `cluster=${owner.cluster}`,
      ...(ours ? [] : [`uid ${owner.uid} is not this resource's`]),
    ]);
  });
}

/** The MyIngress an alias follows: its readiness and DNS name, and whether the record points at it. */
async function followedMyIngress(ctx: TraceContext, mr: DNSRecord, ref: string): Promise<TraceNode> {
  const ns = mr.metadata.namespace ?? '';
  try {
    const ming = await ctx.kube.get<MyIngress>(resourcePath(myIngressType, { namespace: ns, name: ref }));
    const ready = ming.status?.conditions?.find((c) => c.type === 'Ready');
    const dnsName = ming.status?.dnsName;
    const aliased = mr.status?.aliasDNSName;
    const follows =
      dnsName !== undefined && aliased !== undefined && normalizeName(dnsName) === normalizeName(aliased);
    return node(
      'MyIngress',
      ref,
      ready?.status === 'True' ? 'Ready' : 'NotReady',
      ready?.status === 'True' && follows,
      [
        `dns=${dnsName ?? '-'}`,
        follows ? 'the alias points here' : `the alias points at ${aliased ?? 'nothing yet'}`,
      ],
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) {
      return { ...notFoundNode('MyIngress', ref), details: ['the referenced MyIngress does not exist'] };
    }
    return errorNode('MyIngress', ref, err);
  }
}
