// The chaos invariants on hand-built inventories: each case breaks one thing
// and expects exactly that invariant (and no other) to fail.
import { describe, expect, it } from 'vitest';
import { childArns, inventoryRecords, ownershipFromTags } from '../../bench/lib/awsInventory.ts';
import { crStateOf, myIngressExpectations } from '../../bench/lib/crStates.ts';
import {
  allHold,
  checkInvariants,
  formatResults,
  invariantNames,
  mergeAccountResults,
  type CrState,
  type DeletedCr,
  type InvariantName,
  type InventoryLoadBalancer,
  type InventoryRecord,
  type SkyliftInventory,
} from '../../bench/lib/invariants.ts';
import type { DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';

const cluster = 'chaos';
const ns = 'app';

const owner = (name: string, uid: string, clusterId = cluster) => ({
  cluster: clusterId,
  owner: `${ns}/${name}`,
  uid,
});

const ingressCr: CrState = {
  kind: 'MyIngress',
  namespace: ns,
  name: 'shop',
  uid: 'uid-ing',
  ready: true,
  readyDetail: 'Available: ok',
  deleting: false,
  finalizers: ['aws.skylift.dev/cleanup'],
  expectedTargetGroups: 1,
  expectedListenerPorts: [80],
  expectedRules: 1,
};
const dbCr: CrState = {
  kind: 'ManagedDB',
  namespace: ns,
  name: 'orders',
  uid: 'uid-db',
  ready: true,
  readyDetail: 'Available: ok',
  deleting: false,
  finalizers: ['aws.skylift.dev/cleanup'],
};
const recordCr: CrState = {
  kind: 'DNSRecord',
  namespace: ns,
  name: 'www',
  uid: 'uid-rec',
  ready: true,
  readyDetail: 'Available: ok',
  deleting: false,
  finalizers: ['aws.skylift.dev/cleanup'],
  record: { fqdn: 'www.a.test.', type: 'A' },
};

const shopLb: InventoryLoadBalancer = {
  arn: 'arn:lb/shop',
  name: 'sky-1-app-shop',
  owner: owner('shop', 'uid-ing'),
  listeners: [{ arn: 'arn:listener/shop/80', port: 80, ruleArns: ['arn:listener-rule/shop/1'] }],
};

const healthy: SkyliftInventory = {
  loadBalancers: [shopLb],
  targetGroups: [{ arn: 'arn:tg/web', name: 'sky-1-web-80', owner: owner('shop', 'uid-ing') }],
  dbInstances: [{ identifier: 'sky-app-orders-1', status: 'available', owner: owner('orders', 'uid-db') }],
  records: [
    { zoneId: 'Z1', fqdn: 'www.a.test.', type: 'A', owner: owner('www', 'uid-rec'), recordExists: true },
  ],
  unownedRecords: [],
};
const crs = [ingressCr, dbCr, recordCr];
const healthyRecord = healthy.records[0] as InventoryRecord;

function failing(results: ReturnType<typeof checkInvariants>): InvariantName[] {
  return results.filter((r) => !r.ok).map((r) => r.name);
}

describe('checkInvariants', () => {
  it('holds for one resource per CR, all Ready, nothing else', () => {
    const results = checkInvariants({ inventory: healthy, crs, clusterId: cluster });
    expect(failing(results)).toEqual([]);
    expect(allHold(results)).toBe(true);
    expect(results.find((r) => r.name === 'every-cr-ready')?.checked).toBe(3);
    expect(results.find((r) => r.name === 'no-leaks')?.checked).toBe(4);
  });

  it.each<{
    reason: string;
    inventory?: Partial<SkyliftInventory>;
    crs?: CrState[];
    expected: InvariantName;
    detail: RegExp;
  }>([
    {
      reason: 'a CR that is not Ready',
      crs: [{ ...dbCr, ready: false, readyDetail: 'Creating: creating DB instance' }, ingressCr, recordCr],
      expected: 'every-cr-ready',
      detail: /not Ready: Creating/,
    },
    {
      reason: 'two load balancers for one MyIngress (a lost create answer, created again)',
      inventory: { loadBalancers: [shopLb, { ...shopLb, arn: 'arn:lb/shop-2', name: 'sky-1-app-shop-2' }] },
      expected: 'one-aws-resource-per-cr',
      detail: /2 load balancers \(want 1\)/,
    },
    {
      reason: 'a second target group for the same backend',
      inventory: {
        targetGroups: [
          ...healthy.targetGroups,
          { arn: 'arn:tg/web2', name: 'sky-1-web-80-b', owner: owner('shop', 'uid-ing') },
        ],
      },
      expected: 'one-aws-resource-per-cr',
      detail: /2 target groups \(want 1\)/,
    },
    {
      reason: 'a listener on the wrong port set',
      inventory: {
        loadBalancers: [
          {
            ...shopLb,
            listeners: [...shopLb.listeners, { arn: 'arn:listener/shop/81', port: 81, ruleArns: [] }],
          },
        ],
      },
      expected: 'one-aws-resource-per-cr',
      detail: /listeners on ports \[80, 81\]/,
    },
    {
      reason: 'a duplicated listener rule',
      inventory: {
        loadBalancers: [
          {
            ...shopLb,
            listeners: [{ arn: 'arn:listener/shop/80', port: 80, ruleArns: ['r1', 'r2'] }],
          },
        ],
      },
      expected: 'one-aws-resource-per-cr',
      detail: /2 listener rules \(want 1\)/,
    },
    {
      reason: 'a ManagedDB without its DB instance',
      inventory: { dbInstances: [] },
      expected: 'one-aws-resource-per-cr',
      detail: /0 DB instances \(want 1\)/,
    },
    {
      reason: 'an ownership TXT whose record is missing',
      inventory: { records: [{ ...healthyRecord, recordExists: false }] },
      expected: 'one-aws-resource-per-cr',
      detail: /ownership TXT for A www\.a\.test\. but no such record/,
    },
    {
      reason: 'a DNSRecord owning a record other than its spec names',
      inventory: { records: [{ ...healthyRecord, fqdn: 'web.a.test.' }] },
      expected: 'one-aws-resource-per-cr',
      detail: /owns A web\.a\.test\., but its spec is A www\.a\.test\./,
    },
    {
      reason: 'a resource tagged with the right uid but another owner name',
      inventory: {
        dbInstances: [
          { identifier: 'sky-app-orders-1', status: 'available', owner: owner('other', 'uid-db') },
        ],
      },
      expected: 'one-aws-resource-per-cr',
      detail: /tagged owner app\/other \(want app\/orders\)/,
    },
    {
      reason: 'a resource tagged with another cluster id',
      inventory: {
        dbInstances: [
          { identifier: 'sky-app-orders-1', status: 'available', owner: owner('orders', 'uid-db', 'prod') },
        ],
      },
      expected: 'one-aws-resource-per-cr',
      detail: /tagged cluster prod \(want chaos\)/,
    },
    {
      reason: 'a DB instance whose uid no CR has (a leak)',
      inventory: {
        dbInstances: [
          ...healthy.dbInstances,
          { identifier: 'sky-app-gone-1', status: 'available', owner: owner('gone', 'uid-gone') },
        ],
      },
      expected: 'no-leaks',
      detail: /tagged owner app\/gone uid uid-gone, which no custom resource has/,
    },
    {
      reason: 'a target group left behind by a forgotten MyIngress',
      inventory: {
        targetGroups: [
          ...healthy.targetGroups,
          { arn: 'arn:tg/old', name: 'sky-9-web-80', owner: owner('old', 'uid-old') },
        ],
      },
      expected: 'no-leaks',
      detail: /which no custom resource has/,
    },
    {
      reason: 'a managed security group left behind by a forgotten MyIngress',
      inventory: { securityGroups: [{ id: 'sg-0old (sky-9-app-old)', owner: owner('old', 'uid-old') }] },
      expected: 'no-leaks',
      detail: /tagged owner app\/old uid uid-old, which no custom resource has/,
    },
    {
      reason: 'an SNI certificate on a listener of a forgotten MyIngress’s load balancer',
      inventory: {
        listenerCertificates: [{ id: 'arn:acm/x on sky-9-app-old:443', owner: owner('old', 'uid-old') }],
      },
      expected: 'no-leaks',
      detail: /which no custom resource has/,
    },
    {
      reason: 'a web ACL association of a forgotten MyIngress’s load balancer',
      inventory: {
        webAclAssociations: [{ id: 'shop-acl on sky-9-app-old', owner: owner('old', 'uid-old') }],
      },
      expected: 'no-leaks',
      detail: /which no custom resource has/,
    },
    {
      reason: 'a record without ownership TXT in a Skylift-only zone',
      inventory: { unownedRecords: [{ zoneId: 'Z1', fqdn: 'stray.a.test.', type: 'A' }] },
      expected: 'no-leaks',
      detail: /no ownership TXT record beside it/,
    },
  ])('fails only $expected for $reason', (c) => {
    const results = checkInvariants({
      inventory: { ...healthy, ...c.inventory },
      crs: c.crs ?? crs,
      clusterId: cluster,
    });
    expect(failing(results)).toEqual([c.expected]);
    const violations = results.flatMap((r) => r.violations);
    expect(violations.length).toBeGreaterThan(0);
    for (const v of violations) expect(v.detail).toMatch(c.detail);
  });

  describe('after deleting', () => {
    const deleted: DeletedCr[] = [
      { kind: 'MyIngress', namespace: ns, name: 'shop', uid: 'uid-ing' },
      {
        kind: 'DNSRecord',
        namespace: ns,
        name: 'www',
        uid: 'uid-rec',
        record: { fqdn: 'www.a.test.', type: 'A' },
      },
    ];
    const clean: SkyliftInventory = { ...healthy, loadBalancers: [], targetGroups: [], records: [] };

    it('holds when the deleted CRs and all they owned are gone', () => {
      const results = checkInvariants({ inventory: clean, crs: [dbCr], clusterId: cluster, deleted });
      expect(failing(results)).toEqual([]);
      expect(results.find((r) => r.name === 'deleted-leave-no-trace')?.checked).toBe(2);
    });

    it.each<{ reason: string; inventory?: Partial<SkyliftInventory>; lingering?: string[]; detail: RegExp }>([
      {
        reason: 'a target group outlives its MyIngress',
        inventory: { targetGroups: healthy.targetGroups },
        detail: /MyIngress app\/shop|target group sky-1-web-80 still exists/,
      },
      {
        reason: 'the record outlives its DNSRecord without the TXT',
        inventory: { unownedRecords: [{ zoneId: 'Z1', fqdn: 'www.a.test.', type: 'A' }] },
        detail: /A record www\.a\.test\. still exists \(without ownership TXT\)|no ownership TXT/,
      },
      {
        reason: 'the ownership TXT outlives its DNSRecord',
        inventory: { records: [{ ...healthyRecord, recordExists: false }] },
        detail: /A record www\.a\.test\. \(Z1\) still exists/,
      },
      {
        reason: 'a rule of the deleted load balancer is still described',
        lingering: ['arn:listener-rule/shop/1'],
        detail: /listener or rule of a deleted MyIngress/,
      },
    ])('fails deleted-leave-no-trace when $reason', (c) => {
      const results = checkInvariants({
        inventory: { ...clean, ...c.inventory },
        crs: [dbCr],
        clusterId: cluster,
        deleted,
        ...(c.lingering !== undefined ? { lingeringChildren: c.lingering } : {}),
      });
      expect(failing(results)).toContain('deleted-leave-no-trace');
      expect(failing(results).filter((n) => n !== 'deleted-leave-no-trace' && n !== 'no-leaks')).toEqual([]);
      const v = results.find((r) => r.name === 'deleted-leave-no-trace')?.violations ?? [];
      expect(v.length).toBe(1);
      expect(`${v[0]?.subject}: ${v[0]?.detail}`).toMatch(c.detail);
    });

    it('reports a deleted CR still in the apiserver as stuck, not as a live CR that is not Ready', () => {
      const stuck: CrState = {
        ...ingressCr,
        deleting: true,
        ready: false,
        readyDetail: 'Deleting: waiting for load balancer',
      };
      const results = checkInvariants({
        inventory: { ...clean, loadBalancers: [shopLb] },
        crs: [dbCr, stuck],
        clusterId: cluster,
        deleted,
      });
      expect(failing(results)).toEqual(['deleted-leave-no-trace', 'no-stuck-finalizer']);
      const v = results.find((r) => r.name === 'no-stuck-finalizer')?.violations ?? [];
      expect(v[0]?.detail).toMatch(
        /still present \(deleting\) with finalizers \[aws\.skylift\.dev\/cleanup\]/,
      );
    });
  });

  it('formats a failing result with its violations and a count of the rest', () => {
    const lbs = Array.from({ length: 7 }, (_, i) => ({
      ...shopLb,
      arn: `arn:${i}`,
      name: `lb-${i}`,
      owner: owner(`x${i}`, `u${i}`),
    }));
    const lines = formatResults(
      checkInvariants({
        inventory: { ...healthy, loadBalancers: [shopLb, ...lbs] },
        crs,
        clusterId: cluster,
      }),
      5,
    );
    expect(lines).toContain('  FAIL  no-leaks: 7 violation(s) over 11');
    expect(lines.filter((l) => l.includes('which no custom resource has'))).toHaveLength(5);
    expect(lines).toContain('          … 2 more');
    expect(lines.filter((l) => l.startsWith('  ok'))).toHaveLength(5);
  });
});

describe('checkInvariants per account', () => {
  const other = 'team-b';
  const account = { id: '111111111111', namespaces: [ns] };
  const theirs = {
    ...shopLb,
    arn: 'arn:lb/theirs',
    name: 'sky-2-b-shop',
    owner: { cluster, owner: `${other}/shop`, uid: 'uid-b-ing' },
  };
  const theirCr: CrState = { ...ingressCr, namespace: other, uid: 'uid-b-ing', ready: false };

  it("holds in the account of the inventory's namespace, ignoring other namespaces' objects", () => {
    const results = checkInvariants({
      inventory: healthy,
      crs: [...crs, theirCr],
      clusterId: cluster,
      account,
    });
    expect(failing(results)).toEqual([]);
    // team-b's MyIngress is not Ready, but it is not this account's to check.
    expect(results.find((r) => r.name === 'every-cr-ready')?.checked).toBe(3);
    expect(results.find((r) => r.name === 'in-own-account')?.checked).toBe(4);
  });

  it("reports another namespace's load balancer in this account as misplaced, not as a leak", () => {
    const results = checkInvariants({
      inventory: { ...healthy, loadBalancers: [shopLb, theirs] },
      crs: [...crs, { ...theirCr, ready: true }],
      clusterId: cluster,
      account,
    });
    expect(failing(results)).toEqual(['in-own-account']);
    const v = results.find((r) => r.name === 'in-own-account')?.violations ?? [];
    expect(v).toEqual([
      {
        invariant: 'in-own-account',
        subject: 'load balancer sky-2-b-shop',
        detail: `tagged owner ${other}/shop uid uid-b-ing, but it is in account 111111111111, which serves ${ns}`,
      },
    ]);
  });

  it("an account serving no namespace (the operator's own) may hold nothing Skylift owns", () => {
    const results = checkInvariants({
      inventory: healthy,
      crs,
      clusterId: cluster,
      account: { id: '123456789012', namespaces: [] },
      deleted: [{ kind: 'ManagedDB', namespace: ns, name: 'orders', uid: 'uid-db' }],
    });
    expect(failing(results)).toEqual(['in-own-account']);
    expect(results.find((r) => r.name === 'in-own-account')?.violations).toHaveLength(4);
    expect(results.find((r) => r.name === 'every-cr-ready')?.checked).toBe(0);
    expect(results.find((r) => r.name === 'deleted-leave-no-trace')?.checked).toBe(0);
  });

  it('merges accounts: counts added up, violations named with their account', () => {
    const a = checkInvariants({ inventory: healthy, crs, clusterId: cluster, account });
    const b = checkInvariants({
      inventory: { ...healthy, loadBalancers: [shopLb], targetGroups: [], dbInstances: [], records: [] },
      crs,
      clusterId: cluster,
      account: { id: '222222222222', namespaces: [other] },
    });
    const merged = mergeAccountResults([
      { account: '111111111111', results: a },
      { account: '222222222222', results: b },
    ]);
    expect(merged.map((r) => r.name)).toEqual([...invariantNames]);
    expect(merged.find((r) => r.name === 'in-own-account')).toMatchObject({ ok: false, checked: 5 });
    expect(merged.find((r) => r.name === 'in-own-account')?.violations[0]?.subject).toBe(
      'load balancer sky-1-app-shop [account 222222222222]',
    );
    expect(failing(merged)).toEqual(['in-own-account']);
  });
});

describe('inventoryRecords', () => {
  const txt = (name: string, uid: string) => ({
    Name: name,
    Type: 'TXT' as const,
    TTL: 300,
    ResourceRecords: [
      { Value: `"heritage=skylift,skylift/cluster=chaos,skylift/owner=app/${uid},skylift/uid=${uid}"` },
    ],
  });
  const sets = [
    { Name: 'a.test.', Type: 'SOA' as const, ResourceRecords: [{ Value: 'ns. host. 1 2 3 4 5' }] },
    { Name: 'a.test.', Type: 'NS' as const, ResourceRecords: [{ Value: 'ns1.' }] },
    { Name: 'WWW.a.test.', Type: 'A' as const, ResourceRecords: [{ Value: '192.0.2.1' }] },
    txt('_skylift-owner.a.www.a.test.', 'u1'),
    txt('_skylift-owner.cname.gone.a.test.', 'u2'),
    { Name: '\\052.a.test.', Type: 'A' as const, ResourceRecords: [{ Value: '192.0.2.2' }] },
    // Issue 27, item 1: a wildcard's mark has `-wildcard` in its type label; `_wildcard` is a literal name.
    txt('_skylift-owner.a-wildcard.a.test.', 'u3'),
    { Name: '_wildcard.a.test.', Type: 'A' as const, ResourceRecords: [{ Value: '192.0.2.4' }] },
    txt('_skylift-owner.a._wildcard.a.test.', 'u4'),
    { Name: 'stray.a.test.', Type: 'A' as const, ResourceRecords: [{ Value: '192.0.2.3' }] },
    {
      Name: '_skylift-owner.a.foreign.a.test.',
      Type: 'TXT' as const,
      ResourceRecords: [{ Value: '"heritage=external-dns"' }],
    },
  ];

  it('pairs ownership TXT records with their records and finds unguarded ones in an exclusive zone', () => {
    const { owned, unowned } = inventoryRecords('Z1', sets, '_skylift-owner', true);
    expect(owned).toEqual([
      { zoneId: 'Z1', fqdn: 'www.a.test.', type: 'A', owner: owner('u1', 'u1'), recordExists: true },
      { zoneId: 'Z1', fqdn: 'gone.a.test.', type: 'CNAME', owner: owner('u2', 'u2'), recordExists: false },
      { zoneId: 'Z1', fqdn: '*.a.test.', type: 'A', owner: owner('u3', 'u3'), recordExists: true },
      { zoneId: 'Z1', fqdn: '_wildcard.a.test.', type: 'A', owner: owner('u4', 'u4'), recordExists: true },
    ]);
    expect(unowned).toEqual([
      { zoneId: 'Z1', fqdn: 'stray.a.test.', type: 'A' },
      { zoneId: 'Z1', fqdn: '_skylift-owner.a.foreign.a.test.', type: 'TXT' },
    ]);
  });

  it('reports no unguarded records in a shared zone', () => {
    expect(inventoryRecords('Z1', sets, '_skylift-owner', false).unowned).toEqual([]);
  });
});

describe('helpers', () => {
  it('reads ownership tags only when a uid tag is present', () => {
    expect(
      ownershipFromTags([
        { Key: 'skylift.dev/uid', Value: 'u' },
        { Key: 'skylift.dev/owner', Value: 'a/b' },
        { Key: 'skylift.dev/cluster', Value: 'c' },
        { Key: 'team', Value: 'x' },
      ]),
    ).toEqual({ uid: 'u', owner: 'a/b', cluster: 'c' });
    expect(ownershipFromTags([{ Key: 'skylift.dev/owner', Value: 'a/b' }])).toBeUndefined();
  });

  it('lists listener and rule ARNs of load balancers', () => {
    expect(childArns([shopLb])).toEqual(['arn:listener/shop/80', 'arn:listener-rule/shop/1']);
  });

  it('counts distinct backends, listener ports and rules of a MyIngress spec', () => {
    const web = { service: { name: 'web', port: 80 } };
    const spec: MyIngressSpec = {
      listeners: [
        { port: 80, protocol: 'HTTP', defaultAction: { forward: web } },
        { port: 8080, protocol: 'HTTP', defaultAction: { forward: web } },
      ],
      rules: [
        { priority: 1, paths: ['/api'], action: { forward: { service: { name: 'api', port: 80 } } } },
        { priority: 2, paths: ['/old'], action: { redirect: { path: '/new' } } },
      ],
    };
    expect(myIngressExpectations(spec)).toEqual({ targetGroups: 2, listenerPorts: [80, 8080], rules: 2 });
  });

  it('turns a deleting DNSRecord object into a CR state with its record', () => {
    const obj: DNSRecord = {
      metadata: {
        name: 'www',
        namespace: ns,
        uid: 'u',
        deletionTimestamp: '2026-01-01T00:00:00Z',
        finalizers: ['aws.skylift.dev/cleanup'],
      },
      spec: { zoneName: 'a.test', name: 'www', type: 'A' },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'Deleting',
            message: 'deleting',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    };
    const state = crStateOf('DNSRecord', obj);
    expect(state).toMatchObject({
      ready: false,
      deleting: true,
      readyDetail: 'Deleting: deleting',
      record: { fqdn: 'www.a.test.', type: 'A' },
    });
  });
});
