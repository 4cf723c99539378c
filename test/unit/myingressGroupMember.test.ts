// A MyIngress with spec.group (group/member.ts): what it reports from its group's status, never
// calling AWS. The group comes from a stubbed cache.
import { describe, expect, it } from 'vitest';
import type { MyIngress } from '../../src/kinds/myingress/api.ts';
import { MemberState, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { GroupMemberClient, MemberReason, gatewayOf } from '../../src/kinds/myingress/group/member.ts';
import type { ReconcileContext } from '../../src/runtime/adapter.ts';
import { Reason } from '../../src/runtime/conditions.ts';
import { decideRetry, TerminalError } from '../../src/runtime/errors.ts';

const ctx = { ownership: { cluster: 'c', owner: 'o', uid: 'u' } } as unknown as ReconcileContext;

const member: MyIngress = {
  metadata: { name: 'shop', namespace: 'storefront', uid: 'm-1', generation: 3 },
  spec: {
    group: { name: 'gateway.infra.public' },
    rules: [{ priority: 10, hosts: ['shop.example.com'], action: { fixedResponse: { statusCode: 200 } } }],
  },
};

const group = (metadata: Partial<MyIngressGroup['metadata']> = {}): MyIngressGroup => ({
  metadata: { name: 'gateway.infra.public', uid: 'g-1', ...metadata },
  spec: { listeners: [{ port: 80, protocol: 'HTTP' }], allowedNamespaces: { from: 'All' } },
  status: { members: [] },
});

const client = (g: MyIngressGroup | undefined): GroupMemberClient =>
  new GroupMemberClient({ group: () => g, synced: () => true, pollMs: 1000 });

describe('a member naming a Gateway’s group', () => {
  it.each([
    {
      reason: 'the group names its Gateway (skylift.dev/gateway)',
      g: group({
        labels: { 'skylift.dev/gateway-uid': 'gw-uid' },
        annotations: { 'skylift.dev/gateway': 'infra/public' },
      }),
      names: 'Gateway infra/public',
    },
    {
      reason: 'the annotation is missing: the Gateway by its uid',
      g: group({ labels: { 'skylift.dev/gateway-uid': 'gw-uid' } }),
      names: 'Gateway of uid gw-uid',
    },
  ])(
    'is Terminal, saying whose group it is and that an HTTPRoute attaches to it: $reason',
    async ({ g, names }) => {
      const err: unknown = await client(g)
        .observe(member, ctx)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(TerminalError);
      expect(decideRetry(err).kind).toBe('terminal');
      const message = (err as Error).message;
      expect(message).toContain(`MyIngressGroup gateway.infra.public belongs to ${names}`);
      expect(message).toMatch(/Attach an HTTPRoute to the Gateway/);
    },
  );

  it('lets a member being deleted go (a Gateway’s group never lists it)', async () => {
    const g = group({ labels: { 'skylift.dev/gateway-uid': 'gw-uid' } });
    const deleting: MyIngress = {
      ...member,
      metadata: { ...member.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    expect((await client(g).observe(deleting, ctx)).exists).toBe(false);
  });

  it('still waits, Joining, for a cluster administrator’s group that has not taken it yet', async () => {
    const o = await client(group()).observe(member, ctx);
    expect(o.exists && o.ready.reason).toBe(MemberReason.Joining);
  });

  it('reports GroupNotFound for a group that does not exist', async () => {
    const o = await client(undefined).observe(member, ctx);
    expect(o.exists && o.ready.reason).toBe(MemberReason.GroupNotFound);
    expect(o.exists && o.ready.reason).not.toBe(Reason.Terminal);
  });
});

describe('gatewayOf', () => {
  it.each([
    { reason: 'a cluster administrator’s group', g: group(), want: undefined },
    {
      reason: 'a Gateway’s group',
      g: group({
        labels: { 'skylift.dev/gateway-uid': 'u' },
        annotations: { 'skylift.dev/gateway': 'ns/gw' },
      }),
      want: 'ns/gw',
    },
    {
      reason: 'an annotation alone (no label: not a Gateway’s)',
      g: group({ annotations: { 'skylift.dev/gateway': 'ns/gw' } }),
      want: undefined,
    },
  ])('$reason', ({ g, want }) => {
    expect(gatewayOf(g)).toBe(want);
  });
});

describe('a member its namespace’s tenancy refuses', () => {
  it('is Synced=False Forbidden with the group’s message (the group lists it Forbidden)', async () => {
    const g: MyIngressGroup = {
      ...group(),
      status: {
        members: [
          {
            namespace: 'storefront',
            name: 'shop',
            uid: 'm-1',
            observedGeneration: 3,
            state: MemberState.Forbidden,
            message: 'TeamPolicy payments serves namespace storefront as role …',
            rules: 0,
          },
        ],
      },
    };
    const o = await client(g).observe(member, ctx);
    expect(o.exists && o.failure).toEqual({
      reason: Reason.Forbidden,
      message: 'TeamPolicy payments serves namespace storefront as role …',
    });
  });
});
