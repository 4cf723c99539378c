import { describe, expect, it } from 'vitest';
import { parseTraceArgs } from '../../src/cli/trace.ts';
import { kindNamed } from '../../src/kinds/registry.ts';
import type { ManagedDB } from '../../src/kinds/manageddb/api.ts';
import { traceManagedDb } from '../../src/kinds/manageddb/trace.ts';
import { describeAction, elbv2ArnName } from '../../src/kinds/myingress/trace.ts';
import type { AwsClients } from '../../src/providers/aws/clients.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import type { TraceContext } from '../../src/trace/context.ts';
import { renderTree } from '../../src/trace/render.ts';
import { resourceNode } from '../../src/trace/resource.ts';
import { allReady, describeSafely, formatAge, node, NotFoundInAws } from '../../src/trace/tree.ts';
import { UsageError } from '../../src/operator/options.ts';

describe('renderTree', () => {
  it('draws children with ├─ and └─, continues open branches with │, and aligns the columns', () => {
    const tree = node(
      'MyIngress',
      'shop',
      'Ready',
      true,
      ['age=5m'],
      [
        node('Condition', 'Ready', 'True', true, ['Available']),
        node(
          'LoadBalancer',
          'lb',
          'active',
          true,
          ['dns=lb.example'],
          [
            node(
              'Listener',
              'HTTP:80',
              'exists',
              true,
              [],
              [node('Rule', 'priority 10', 'exists', true, ['path=/a'])],
            ),
            node(
              'TargetGroup',
              'tg',
              'exists',
              true,
              [],
              [node('Target', '10.0.0.1:80', 'healthy', undefined)],
            ),
          ],
        ),
      ],
    );
    expect(renderTree(tree)).toBe(
      [
        'NAME                         STATUS   DETAILS',
        'MyIngress/shop               Ready    age=5m',
        '├─ Condition/Ready           True     Available',
        '└─ LoadBalancer/lb           active   dns=lb.example',
        '   ├─ Listener/HTTP:80       exists',
        '   │  └─ Rule/priority 10    exists   path=/a',
        '   └─ TargetGroup/tg         exists',
        '      └─ Target/10.0.0.1:80  healthy',
        '',
      ].join('\n'),
    );
  });

  it('renders a lone root with the header only', () => {
    expect(renderTree(node('DNSRecord', 'www', 'NotReady', false, ['a', 'b']))).toBe(
      'NAME           STATUS    DETAILS\nDNSRecord/www  NotReady  a  b\n',
    );
  });
});

describe('allReady', () => {
  it.each([
    {
      reason: 'every node ready',
      tree: node('A', 'a', 'x', true, [], [node('B', 'b', 'x', true)]),
      want: true,
    },
    {
      reason: 'informational nodes do not count',
      tree: node('A', 'a', 'x', true, [], [node('Target', 't', 'unhealthy', undefined)]),
      want: true,
    },
    {
      reason: 'a deep node not ready fails the whole tree',
      tree: node(
        'A',
        'a',
        'x',
        true,
        [],
        [node('B', 'b', 'x', true, [], [node('C', 'c', 'NotFound', false)])],
      ),
      want: false,
    },
  ])('$reason', ({ tree, want }) => {
    expect(allReady(tree)).toBe(want);
  });
});

describe('describeSafely', () => {
  it.each([
    {
      reason: 'the step’s node',
      step: () => Promise.resolve(node('X', 'x', 'exists', true)),
      status: 'exists',
    },
    {
      reason: 'NotFoundInAws is drift',
      step: () => Promise.reject(new NotFoundInAws('x')),
      status: 'NotFound',
    },
    {
      reason: 'an error the predicate knows is drift',
      step: () => Promise.reject(Object.assign(new Error('gone'), { name: 'LoadBalancerNotFoundException' })),
      status: 'NotFound',
    },
    {
      reason: 'any other error is shown on the node',
      step: () => Promise.reject(Object.assign(new Error('nope'), { name: 'AccessDenied' })),
      status: 'Error',
    },
  ])('$reason', async ({ step, status }) => {
    const n = await describeSafely(
      'X',
      'x',
      step,
      (e) => e instanceof Error && e.name.startsWith('LoadBalancerNotFound'),
    );
    expect(n.status).toBe(status);
    expect(n.ready).toBe(status === 'exists');
    if (status === 'Error') expect(n.details).toEqual(['AccessDenied: nope']);
  });
});

describe('formatAge', () => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  it.each([
    { since: '2026-01-10T11:59:15Z', want: '45s' },
    { since: '2026-01-10T11:48:00Z', want: '12m' },
    { since: '2026-01-10T09:00:00Z', want: '3h' },
    { since: '2026-01-05T12:00:00Z', want: '5d' },
    { since: undefined, want: '?' },
    { since: 'garbage', want: '?' },
  ])('$since → $want', ({ since, want }) => {
    expect(formatAge(since, now)).toBe(want);
  });
});

describe('resourceNode', () => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  it('puts Ready and Synced first, marks a missing condition Unknown, and is ready only when Ready is True', () => {
    const n = resourceNode(
      'DNSRecord',
      {
        metadata: {
          name: 'www',
          namespace: 'apps',
          creationTimestamp: '2026-01-10T11:00:00Z',
          generation: 2,
        },
        spec: {},
        status: {
          observedGeneration: 1,
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'Pending',
              message: 'change queued',
              lastTransitionTime: '2026-01-10T11:59:00Z',
            },
          ],
        },
      },
      now,
      [node('RecordSet', 'www.example.com. A', 'exists', true)],
    );
    expect(n.status).toBe('NotReady');
    expect(n.ready).toBe(false);
    expect(n.details).toEqual(['namespace=apps', 'age=60m', 'generation 2 not observed yet']);
    expect(n.children.map((c) => [c.kind, c.name, c.status, c.details.join(' ')])).toEqual([
      ['Condition', 'Ready', 'False', 'Pending: change queued age=60s'],
      ['Condition', 'Synced', 'Unknown', 'not reported yet'],
      ['RecordSet', 'www.example.com. A', 'exists', ''],
    ]);
  });
});

describe('kindNamed', () => {
  it.each([
    ['MyIngress', 'MyIngress'],
    ['myingresses', 'MyIngress'],
    ['MING', 'MyIngress'],
    ['myingresses.aws.skylift.dev', 'MyIngress'],
    ['mdb', 'ManagedDB'],
    ['ManagedDBs', 'ManagedDB'],
    ['dnsr', 'DNSRecord'],
    ['DnsRecord', 'DNSRecord'],
  ])('%s is %s', (word, kind) => {
    expect(kindNamed(word)?.type.kind).toBe(kind);
  });

  it('knows nothing else', () => {
    expect(kindNamed('ingress')).toBeUndefined();
  });
});

describe('parseTraceArgs', () => {
  const env = { AWS_REGION: 'eu-west-1' };
  it('reads kind/name, namespace, kubeconfig and output', () => {
    const a = parseTraceArgs(['ming/shop', '-n', 'apps', '--kubeconfig', '/k', '-o', 'json'], env);
    expect(a).toMatchObject({
      name: 'shop',
      namespace: 'apps',
      kubeconfig: '/k',
      output: 'json',
      region: 'eu-west-1',
    });
    expect(a !== 'help' && a.kind.module.type.kind).toBe('MyIngress');
  });

  it.each([
    { reason: 'no target', argv: [], message: 'want exactly one KIND/NAME' },
    { reason: 'no name', argv: ['ming'], message: 'want KIND/NAME' },
    { reason: 'an empty name', argv: ['ming/'], message: 'want KIND/NAME' },
    { reason: 'two targets', argv: ['ming/a', 'ming/b'], message: 'want exactly one KIND/NAME' },
    { reason: 'an unknown kind', argv: ['pod/a'], message: 'unknown kind "pod"' },
    { reason: 'a bad output', argv: ['ming/a', '-o', 'yaml'], message: '-o wants tree or json' },
    { reason: 'an unknown flag', argv: ['ming/a', '--bogus'], message: "Unknown option '--bogus'" },
  ])('rejects $reason', ({ argv, message }) => {
    expect(() => parseTraceArgs(argv, env)).toThrow(UsageError);
    expect(() => parseTraceArgs(argv, env)).toThrow(message);
  });

  it('needs a region', () => {
    expect(() => parseTraceArgs(['ming/a'], {})).toThrow('no AWS region');
  });
});

describe('MyIngress trace helpers', () => {
  it.each([
    ['arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/app/sky-shop/50dc6c495c0c9188', 'sky-shop'],
    ['arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/sky-web-80/73e2d6bc24d8a067', 'sky-web-80'],
    ['not-an-arn', 'not-an-arn'],
  ])('names %s %s', (arn, name) => {
    expect(elbv2ArnName(arn)).toBe(name);
  });

  it.each([
    {
      actions: [
        { Type: 'forward' as const, TargetGroupArn: 'arn:aws:elasticloadbalancing:r:1:targetgroup/tg/1' },
      ],
      want: 'forward to tg',
    },
    {
      actions: [
        { Type: 'redirect' as const, RedirectConfig: { StatusCode: 'HTTP_301' as const, Path: '/new' } },
      ],
      want: 'redirect HTTP_301 /new',
    },
    {
      actions: [{ Type: 'fixed-response' as const, FixedResponseConfig: { StatusCode: '404' } }],
      want: 'fixed-response 404',
    },
    { actions: [], want: 'no action' },
  ])('describes $want', ({ actions, want }) => {
    expect(describeAction(actions)).toBe(want);
  });
});

// Issue 14, item 15: a `skylift db` request no operator picked up was visible nowhere.
describe('ManagedDB trace of on-demand requests', () => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  // Nothing recorded in status: the collector makes no AWS call, and the Secret lookup answers 404.
  const ctx: TraceContext = {
    kube: {
      get: () => Promise.reject(new KubeApiError(404, 'NotFound', 'secrets "orders-connection" not found')),
    } as unknown as KubeClient,
    aws: {} as AwsClients,
    now,
  };
  const mdb = (annotations: Record<string, string>): ManagedDB => ({
    metadata: { name: 'orders', namespace: 'apps', creationTimestamp: '2026-01-10T11:59:00Z', annotations },
    spec: { engine: 'postgres', instanceClass: 'db.t3.micro', allocatedStorage: 20, masterUsername: 'app' },
  });
  const render = async (mr: ManagedDB): Promise<string> =>
    renderTree(resourceNode('ManagedDB', mr, now, await traceManagedDb(mr, ctx)));

  it('shows a request no operator has acknowledged as Pending, with its annotation, and the last one done', async () => {
    const out = await render(
      mdb({
        'aws.skylift.dev/request': 'snapshot m1abc',
        'aws.skylift.dev/request-done': 'k0old snapshot sky-apps-orders-1-req-k0old started',
      }),
    );
    expect(out).toMatch(
      /├─ Request\/m1abc +Pending +snapshot {2}annotation aws\.skylift\.dev\/request {2}no operator has acknowledged it yet\n/,
    );
    expect(out).toMatch(/└─ Request\/k0old +Done +snapshot sky-apps-orders-1-req-k0old started\n$/);
  });

  it('shows no pending request once the operator recorded it done', async () => {
    const out = await render(
      mdb({
        'aws.skylift.dev/request': 'failover f1',
        'aws.skylift.dev/request-done': 'f1 failover started',
      }),
    );
    expect(out).not.toContain('Pending');
    expect(out).toMatch(/└─ Request\/f1 +Done +failover started\n$/);
  });

  it('does not count a pending request against the trace (it is informational)', async () => {
    const mr = mdb({ 'aws.skylift.dev/request': 'reboot r1' });
    const nodes = await traceManagedDb(mr, ctx);
    const request = nodes.find((n) => n.kind === 'Request');
    expect(request?.status).toBe('Pending');
    expect(request?.ready).toBeUndefined();
  });
});
