// The inventory of Skylift-owned AWS resources, read directly from AWS (the
// emulator, not the fault proxy): everything tagged `skylift.dev/uid`, and
// every Route 53 record guarded by an ownership TXT record.
import { DescribeSecurityGroupsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { ListResourcesForWebACLCommand, ListWebACLsCommand, type WAFV2Client } from '@aws-sdk/client-wafv2';
import {
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  type ElasticLoadBalancingV2Client,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeDBInstancesCommand, type RDSClient } from '@aws-sdk/client-rds';
import {
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
  type Route53Client,
} from '@aws-sdk/client-route-53';
import { ownershipTagKeys, type OwnershipTags } from '../../src/apis/managed.ts';
import { sharedMemberTagKey } from '../../src/runtime/sharedResource.ts';
import { markedRecord, normalizeName, parseOwnerValue } from '../../src/providers/route53/names.ts';
import type {
  InventoryDbInstance,
  InventoryLoadBalancer,
  InventoryOwned,
  InventoryRecord,
  InventoryTargetGroup,
  InventoryUnownedRecord,
  SkyliftInventory,
} from './invariants.ts';

/** SDK clients pointed straight at AWS (or the emulator), never through a fault proxy. */
export interface InventoryClients {
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly rds: RDSClient;
  readonly route53: Route53Client;
  /** With it, managed security groups are inventoried too. */
  readonly ec2?: EC2Client;
  /** With it, web ACL associations of Skylift's load balancers are inventoried too. */
  readonly wafv2?: WAFV2Client;
}

/** A hosted zone whose records are inventoried. */
export interface InventoryZone {
  /** Zone ID without `/hostedzone/`. */
  readonly id: string;
  /**
   * Only Skylift writes records here (a test zone): any record without an
   * ownership TXT, apex SOA/NS aside, is reported as unowned.
   */
  readonly exclusive: boolean;
}

/** Options for {@link collectInventory}. */
export interface InventoryOptions {
  readonly zones: readonly InventoryZone[];
  /** Name prefix of ownership TXT records (the operator's --txt-owner-prefix). */
  readonly txtOwnerPrefix?: string;
}

/** Reads Skylift's ownership tags from an AWS tag list; undefined without a `skylift.dev/uid` tag. Pure. */
export function ownershipFromTags(
  tags: readonly { Key?: string | undefined; Value?: string | undefined }[],
): OwnershipTags | undefined {
  const get = (key: string): string | undefined => tags.find((t) => t.Key === key)?.Value;
  const uid = get(ownershipTagKeys.uid);
  if (uid === undefined || uid === '') return undefined;
  return { uid, owner: get(ownershipTagKeys.owner) ?? '', cluster: get(ownershipTagKeys.cluster) ?? '' };
}

/**
 * Splits one zone's record sets into Skylift-owned records (an ownership TXT
 * named `<prefix>.<type>[-<set hash>].<fqdn>` whose value parses, and whether
 * the guarded record exists) and, for an exclusive zone, records nothing
 * guards (apex SOA and NS excluded). Pure.
 */
export function inventoryRecords(
  zoneId: string,
  recordSets: readonly ResourceRecordSet[],
  prefix: string,
  exclusive: boolean,
): { owned: InventoryRecord[]; unowned: InventoryUnownedRecord[] } {
  const present = new Set<string>();
  const guarded: { fqdn: string; type: string; owner: OwnershipTags }[] = [];
  const plain: { fqdn: string; type: string }[] = [];
  for (const rs of recordSets) {
    const name = normalizeName(rs.Name ?? '');
    const type = rs.Type ?? '';
    const marked = type === 'TXT' ? markedRecord(name, prefix) : undefined;
    if (marked !== undefined) {
      const value = (rs.ResourceRecords ?? []).map((r) => r.Value ?? '').join(' ');
      const owner = parseOwnerValue(value);
      if (owner !== undefined) {
        // The mark names the record as Skylift does (names.ts): a wildcard's `-wildcard` type label,
        // a literal `_wildcard` name kept as it is.
        guarded.push({ fqdn: marked.fqdn, type: marked.type, owner });
        continue;
      }
    }
    present.add(`${name}|${type}`);
    plain.push({ fqdn: name, type });
  }
  const owned = guarded.map((g) => ({
    zoneId,
    fqdn: g.fqdn,
    type: g.type,
    owner: g.owner,
    recordExists: present.has(`${g.fqdn}|${g.type}`),
  }));
  const guardedKeys = new Set(guarded.map((g) => `${g.fqdn}|${g.type}`));
  const apex = plain.reduce<string | undefined>(
    (shortest, r) =>
      r.type === 'SOA' && (shortest === undefined || r.fqdn.length < shortest.length) ? r.fqdn : shortest,
    undefined,
  );
  const unowned = exclusive
    ? plain
        .filter((r) => !guardedKeys.has(`${r.fqdn}|${r.type}`))
        .filter((r) => !(r.fqdn === apex && (r.type === 'SOA' || r.type === 'NS')))
        .map((r) => ({ zoneId, fqdn: r.fqdn, type: r.type }))
    : [];
  return { owned, unowned };
}

/** The `skylift.dev/member` tag of a tag list (a group member's or Gateway route's uid). Pure. */
export function memberFromTags(
  tags: readonly { Key?: string | undefined; Value?: string | undefined }[],
): string | undefined {
  const v = tags.find((t) => t.Key === sharedMemberTagKey)?.Value;
  return v === undefined || v === '' ? undefined : v;
}

type AwsTags = readonly { Key?: string | undefined; Value?: string | undefined }[];

async function rawTagsByArn(
  elbv2: ElasticLoadBalancingV2Client,
  arns: readonly string[],
): Promise<Map<string, AwsTags>> {
  const out = new Map<string, AwsTags>();
  for (let i = 0; i < arns.length; i += 20) {
    const res = await elbv2.send(new DescribeTagsCommand({ ResourceArns: arns.slice(i, i + 20) }));
    for (const d of res.TagDescriptions ?? [])
      if (d.ResourceArn !== undefined) out.set(d.ResourceArn, d.Tags ?? []);
  }
  return out;
}

async function tagsByArn(
  elbv2: ElasticLoadBalancingV2Client,
  arns: readonly string[],
): Promise<Map<string, OwnershipTags | undefined>> {
  const raw = await rawTagsByArn(elbv2, arns);
  return new Map([...raw].map(([arn, tags]) => [arn, ownershipFromTags(tags)]));
}

/** Every rule of a listener, page by page (moto answers 50 at a time without a PageSize). */
export async function listenerRules(
  elbv2: ElasticLoadBalancingV2Client,
  listenerArn: string,
): Promise<Rule[]> {
  const out: Rule[] = [];
  let marker: string | undefined;
  do {
    const page = await elbv2.send(
      new DescribeRulesCommand({ ListenerArn: listenerArn, PageSize: 400, Marker: marker }),
    );
    out.push(...(page.Rules ?? []));
    marker = page.NextMarker;
  } while (marker !== undefined && marker !== '');
  return out;
}

async function loadBalancers(elbv2: ElasticLoadBalancingV2Client): Promise<InventoryLoadBalancer[]> {
  const all: { arn: string; name: string; dnsName: string }[] = [];
  let marker: string | undefined;
  do {
    const page = await elbv2.send(new DescribeLoadBalancersCommand({ Marker: marker, PageSize: 400 }));
    for (const lb of page.LoadBalancers ?? [])
      if (lb.LoadBalancerArn !== undefined)
        all.push({ arn: lb.LoadBalancerArn, name: lb.LoadBalancerName ?? '', dnsName: lb.DNSName ?? '' });
    marker = page.NextMarker;
  } while (marker !== undefined && marker !== '');
  const tags = await tagsByArn(
    elbv2,
    all.map((lb) => lb.arn),
  );
  const out: InventoryLoadBalancer[] = [];
  for (const lb of all) {
    const owner = tags.get(lb.arn);
    if (owner === undefined) continue;
    const listeners: InventoryLoadBalancer['listeners'][number][] = [];
    const ls = await elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.arn }));
    for (const l of ls.Listeners ?? []) {
      if (l.ListenerArn === undefined) continue;
      const rules = await listenerRules(elbv2, l.ListenerArn);
      const ruleArns = rules
        .filter((r) => r.IsDefault !== true)
        .map((r) => r.RuleArn ?? '')
        .filter((a) => a !== '');
      const ruleTags = await rawTagsByArn(elbv2, ruleArns);
      listeners.push({
        arn: l.ListenerArn,
        port: l.Port ?? 0,
        ruleArns,
        ruleMembers: new Map(ruleArns.map((a) => [a, memberFromTags(ruleTags.get(a) ?? [])])),
      });
    }
    out.push({ ...lb, owner, listeners });
  }
  return out;
}

async function targetGroups(elbv2: ElasticLoadBalancingV2Client): Promise<InventoryTargetGroup[]> {
  const all: { arn: string; name: string }[] = [];
  let marker: string | undefined;
  do {
    const page = await elbv2.send(new DescribeTargetGroupsCommand({ Marker: marker, PageSize: 400 }));
    for (const tg of page.TargetGroups ?? [])
      if (tg.TargetGroupArn !== undefined)
        all.push({ arn: tg.TargetGroupArn, name: tg.TargetGroupName ?? '' });
    marker = page.NextMarker;
  } while (marker !== undefined && marker !== '');
  const tags = await rawTagsByArn(
    elbv2,
    all.map((tg) => tg.arn),
  );
  return all.flatMap((tg) => {
    const list = tags.get(tg.arn) ?? [];
    const owner = ownershipFromTags(list);
    const member = memberFromTags(list);
    return owner === undefined ? [] : [{ ...tg, owner, ...(member !== undefined ? { member } : {}) }];
  });
}

async function securityGroups(ec2: EC2Client): Promise<InventoryOwned[]> {
  const out: InventoryOwned[] = [];
  let token: string | undefined;
  do {
    const page = await ec2.send(
      new DescribeSecurityGroupsCommand({
        Filters: [{ Name: 'tag-key', Values: [ownershipTagKeys.uid] }],
        ...(token !== undefined ? { NextToken: token } : {}),
      }),
    );
    for (const g of page.SecurityGroups ?? []) {
      const owner = ownershipFromTags(g.Tags ?? []);
      if (owner !== undefined && g.GroupId !== undefined)
        out.push({ id: `${g.GroupId} (${g.GroupName ?? ''})`, owner });
    }
    token = page.NextToken;
  } while (token !== undefined && token !== '');
  return out;
}

/** The SNI (non-default) certificates of the HTTPS listeners of `lbs`, owned as their load balancer. */
async function listenerCertificates(
  elbv2: ElasticLoadBalancingV2Client,
  lbs: readonly InventoryLoadBalancer[],
): Promise<InventoryOwned[]> {
  const out: InventoryOwned[] = [];
  for (const lb of lbs)
    for (const l of lb.listeners) {
      const res = await elbv2.send(new DescribeListenerCertificatesCommand({ ListenerArn: l.arn }));
      for (const c of res.Certificates ?? [])
        if (c.IsDefault !== true && c.CertificateArn !== undefined)
          out.push({ id: `${c.CertificateArn} on ${lb.name}:${l.port}`, owner: lb.owner });
    }
  return out;
}

/** The REGIONAL web ACL associations of `lbs`, owned as their load balancer. */
async function webAclAssociations(
  wafv2: WAFV2Client,
  lbs: readonly InventoryLoadBalancer[],
): Promise<InventoryOwned[]> {
  const byArn = new Map(lbs.map((lb) => [lb.arn, lb]));
  const out: InventoryOwned[] = [];
  let marker: string | undefined;
  do {
    const page = await wafv2.send(
      new ListWebACLsCommand({ Scope: 'REGIONAL', ...(marker !== undefined ? { NextMarker: marker } : {}) }),
    );
    for (const acl of page.WebACLs ?? []) {
      if (acl.ARN === undefined) continue;
      const res = await wafv2.send(new ListResourcesForWebACLCommand({ WebACLArn: acl.ARN }));
      for (const arn of res.ResourceArns ?? []) {
        const lb = byArn.get(arn);
        if (lb !== undefined) out.push({ id: `${acl.Name ?? acl.ARN} on ${lb.name}`, owner: lb.owner });
      }
    }
    marker = page.NextMarker;
  } while (marker !== undefined && marker !== '');
  return out;
}

async function dbInstances(rds: RDSClient): Promise<InventoryDbInstance[]> {
  const out: InventoryDbInstance[] = [];
  let marker: string | undefined;
  do {
    const page = await rds.send(new DescribeDBInstancesCommand({ Marker: marker, MaxRecords: 100 }));
    for (const db of page.DBInstances ?? []) {
      const owner = ownershipFromTags(db.TagList ?? []);
      if (owner !== undefined)
        out.push({ identifier: db.DBInstanceIdentifier ?? '', status: db.DBInstanceStatus ?? '', owner });
    }
    marker = page.Marker;
  } while (marker !== undefined && marker !== '');
  return out;
}

async function zoneRecordSets(route53: Route53Client, zoneId: string): Promise<ResourceRecordSet[]> {
  const out: ResourceRecordSet[] = [];
  let start: { name?: string; type?: string; id?: string } = {};
  for (;;) {
    const page = await route53.send(
      new ListResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        StartRecordName: start.name,
        StartRecordType: start.type as ResourceRecordSet['Type'],
        StartRecordIdentifier: start.id,
        MaxItems: 300,
      }),
    );
    out.push(...(page.ResourceRecordSets ?? []));
    if (page.IsTruncated !== true) return out;
    start = {
      ...(page.NextRecordName !== undefined ? { name: page.NextRecordName } : {}),
      ...(page.NextRecordType !== undefined ? { type: page.NextRecordType } : {}),
      ...(page.NextRecordIdentifier !== undefined ? { id: page.NextRecordIdentifier } : {}),
    };
  }
}

/**
 * Lists every load balancer (with listeners and non-default rules), target
 * group and DB instance carrying a `skylift.dev/uid` tag, the SNI certificates
 * on those load balancers' listeners, with EC2 the security groups carrying
 * the tag and with WAFv2 the web ACL associations of those load balancers, and every record
 * guarded by an ownership TXT in the given zones (plus unguarded records in
 * exclusive zones). Read-only; throws on any AWS error, since a partial
 * inventory would make the invariants meaningless.
 */
export async function collectInventory(
  clients: InventoryClients,
  opts: InventoryOptions,
): Promise<SkyliftInventory> {
  const prefix = opts.txtOwnerPrefix ?? '_skylift-owner';
  const [lbs, tgs, dbs, sgs] = await Promise.all([
    loadBalancers(clients.elbv2),
    targetGroups(clients.elbv2),
    dbInstances(clients.rds),
    clients.ec2 !== undefined ? securityGroups(clients.ec2) : undefined,
  ]);
  const certificates = await listenerCertificates(clients.elbv2, lbs);
  const associations = clients.wafv2 !== undefined ? await webAclAssociations(clients.wafv2, lbs) : undefined;
  const records: InventoryRecord[] = [];
  const unownedRecords: InventoryUnownedRecord[] = [];
  for (const zone of opts.zones) {
    const sets = await zoneRecordSets(clients.route53, zone.id);
    const { owned, unowned } = inventoryRecords(zone.id, sets, prefix, zone.exclusive);
    records.push(...owned);
    unownedRecords.push(...unowned);
  }
  return {
    loadBalancers: lbs,
    targetGroups: tgs,
    dbInstances: dbs,
    records,
    unownedRecords,
    listenerCertificates: certificates,
    ...(sgs !== undefined ? { securityGroups: sgs } : {}),
    ...(associations !== undefined ? { webAclAssociations: associations } : {}),
  };
}

/** Every listener and rule ARN of the given load balancers, to ask about again after they were deleted. Pure. */
export function childArns(lbs: readonly InventoryLoadBalancer[]): string[] {
  return lbs.flatMap((lb) => lb.listeners.flatMap((l) => [l.arn, ...l.ruleArns]));
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && /NotFound/.test(err.name);
}

/**
 * Which of these listener (`…:listener/…`) and rule (`…:listener-rule/…`)
 * ARNs AWS still describes. "Not found" answers mean gone; any other error
 * is thrown.
 */
export async function findLingeringChildren(
  elbv2: ElasticLoadBalancingV2Client,
  arns: readonly string[],
): Promise<string[]> {
  const lingering: string[] = [];
  for (const arn of arns) {
    try {
      if (arn.includes(':listener-rule/')) {
        const res = await elbv2.send(new DescribeRulesCommand({ RuleArns: [arn] }));
        if ((res.Rules ?? []).length > 0) lingering.push(arn);
      } else {
        const res = await elbv2.send(new DescribeListenersCommand({ ListenerArns: [arn] }));
        if ((res.Listeners ?? []).length > 0) lingering.push(arn);
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return lingering;
}
