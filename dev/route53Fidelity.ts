// Route 53 behaviour the emulator lacks, as fault-proxy rules: where moto answers differently from
// Route 53, a rule answers as Route 53 does.
import { randomUUID } from 'node:crypto';
import {
  ListResourceRecordSetsCommand,
  Route53Client,
  type ListResourceRecordSetsCommandOutput,
} from '@aws-sdk/client-route-53';
import { normalizeName, recordKey } from '../src/providers/route53/names.ts';
import type { FaultRule, ProxyAnswer } from './awsFaultProxy.ts';
import { errorResponse, type AwsCall } from './awsOperation.ts';
import { awsClientConfig } from './emulator.ts';

/** One change of a ChangeResourceRecordSets request, as far as the rules here need it. */
export interface WireChange {
  readonly action: string;
  /** As sent, e.g. `www.example.com.` */
  readonly name: string;
  readonly type: string;
  readonly setIdentifier?: string;
}

/** The hosted zone a Route 53 REST call names in its path (`/2013-04-01/hostedzone/<id>/…`). Pure. */
export function zoneIdOf(call: Pick<AwsCall, 'path'>): string | undefined {
  return /\/hostedzone\/([^/]+)/.exec(call.path)?.[1];
}

/** The changes of a ChangeResourceRecordSets request body (the SDK's XML), in order. Pure. */
export function parseChangeBatch(body: string): WireChange[] {
  const out: WireChange[] = [];
  for (const m of body.matchAll(/<Change>([\s\S]*?)<\/Change>/g)) {
    const change = m[1] ?? '';
    const rrset = /<ResourceRecordSet>([\s\S]*?)<\/ResourceRecordSet>/.exec(change)?.[1] ?? '';
    const field = (xml: string, tag: string): string | undefined => {
      const v = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(xml)?.[1];
      return v !== undefined ? unescapeXml(v) : undefined;
    };
    const setIdentifier = field(rrset, 'SetIdentifier');
    out.push({
      action: field(change, 'Action') ?? '',
      name: field(rrset, 'Name') ?? '',
      type: field(rrset, 'Type') ?? '',
      ...(setIdentifier !== undefined ? { setIdentifier } : {}),
    });
  }
  return out;
}

/**
 * Route 53's refusals of CREATE changes in one batch, given the record keys the zone holds: the
 * batch is validated change by change against the zone as the earlier changes left it (a DELETE
 * then a CREATE of one name and type is allowed). Empty when Route 53 would accept the batch. Pure.
 */
export function createRefusals(existing: ReadonlySet<string>, changes: readonly WireChange[]): string[] {
  const keys = new Set(existing);
  const refusals: string[] = [];
  for (const c of changes) {
    const key = recordKey(c.name, c.type, c.setIdentifier);
    if (c.action === 'DELETE') keys.delete(key);
    else if (c.action === 'CREATE' && keys.has(key))
      refusals.push(
        `Tried to create resource record set [name='${normalizeName(c.name)}', type='${c.type}'${c.setIdentifier !== undefined ? `, set-identifier='${c.setIdentifier}'` : ''}] but it already exists`,
      );
    else keys.add(key);
  }
  return refusals;
}

/**
 * Route 53 refuses a CREATE of a record set that already exists, and with it the whole change
 * batch (a batch is one transaction): HTTP 400, `InvalidChangeBatch`, "[Tried to create resource
 * record set [name='www.example.com.', type='A'] but it already exists]" (Route 53 puts its
 * messages in brackets, several joined by ", "), in its XML error shape. moto instead accepts such
 * a CREATE silently and then lists two record sets of that name and type. This rule reads the
 * zone from the emulator (unrecorded) before each ChangeResourceRecordSets carrying a CREATE and
 * answers the refusal itself, so nothing of the batch reaches the emulator; other calls go through.
 * Install it after rules that should win over it (the first matching rule applies).
 */
export function route53RefuseExistingCreate(): FaultRule {
  return {
    service: 'route53',
    operation: 'ChangeResourceRecordSets',
    fault: {
      kind: 'respond',
      respond: async (call, emulator): Promise<ProxyAnswer | undefined> => {
        const changes = parseChangeBatch(call.body);
        const zoneId = zoneIdOf(call);
        if (zoneId === undefined || !changes.some((c) => c.action === 'CREATE')) return undefined;
        // A zone the emulator cannot list (deleted, say) is the emulator's to answer: NoSuchHostedZone.
        const existing = await recordKeysIn(emulator, zoneId).catch(() => undefined);
        if (existing === undefined) return undefined;
        const refusals = createRefusals(existing, changes);
        if (refusals.length === 0) return undefined;
        return errorResponse('route53', 400, 'InvalidChangeBatch', `[${refusals.join(', ')}]`, randomUUID());
      },
    },
  };
}

/** The record keys (name|type|setIdentifier) of every record set in a zone of the emulator. */
async function recordKeysIn(emulator: string, zoneId: string): Promise<Set<string>> {
  const r53 = new Route53Client(awsClientConfig(emulator));
  const keys = new Set<string>();
  try {
    let start: { name?: string; type?: string; id?: string } | undefined = {};
    while (start !== undefined) {
      const out: ListResourceRecordSetsCommandOutput = await r53.send(
        new ListResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          ...(start.name !== undefined ? { StartRecordName: start.name } : {}),
          ...(start.type !== undefined ? { StartRecordType: start.type as 'A' } : {}),
          ...(start.id !== undefined ? { StartRecordIdentifier: start.id } : {}),
        }),
      );
      for (const rr of out.ResourceRecordSets ?? [])
        keys.add(recordKey(rr.Name ?? '', rr.Type ?? '', rr.SetIdentifier));
      start =
        out.IsTruncated === true
          ? {
              ...(out.NextRecordName !== undefined ? { name: out.NextRecordName } : {}),
              ...(out.NextRecordType !== undefined ? { type: out.NextRecordType } : {}),
              ...(out.NextRecordIdentifier !== undefined ? { id: out.NextRecordIdentifier } : {}),
            }
          : undefined;
    }
  } finally {
    r53.destroy();
  }
  return keys;
}

function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
