// `skylift dev`'s pure parts: its flags, its transition lines, its summary, the node mode's target
// and curl lines, and the stand-in endpoints.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/operator/options.ts';
import { parseDevArgs } from '../../dev/args.ts';
import { conditionTransitions, formatSampleSummary, formatTransition } from '../../dev/progress.ts';
import { loadSamples, standInEndpointSlices } from '../../dev/samples.ts';
import { formatSampleCurl, formatSampleTargets } from '../../dev/sampleTargets.ts';
import type { Condition, ManagedObject, ManagedSpec, ManagedStatus } from '../../src/apis/managed.ts';

const cond = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-10T12:00:00Z',
});
/** An object of any kind, its status holding whatever a test gives it. */
type AnyKindObject = ManagedObject<ManagedSpec, ManagedStatus & Record<string, unknown>>;

const obj = (conditions: Condition[], extra: Partial<AnyKindObject> = {}): AnyKindObject => ({
  kind: 'MyIngress',
  metadata: { name: 'shop', namespace: 'default' },
  spec: {},
  status: { conditions },
  ...extra,
});

describe('parseDevArgs', () => {
  it('defaults: start everything, apply samples to default, run the operator', () => {
    expect(parseDevArgs([])).toEqual({
      kubeconfig: undefined,
      awsEndpoint: undefined,
      samples: true,
      operator: true,
      namespace: 'default',
      teams: false,
      node: false,
      help: false,
      runArgs: [],
    });
    expect(parseDevArgs(['--teams']).teams).toBe(true);
    expect(parseDevArgs(['--node']).node).toBe(true);
  });

  it('takes its own flags (both spellings) and leaves the rest to the operator', () => {
    const a = parseDevArgs([
      '--kubeconfig=/k',
      '--aws-endpoint',
      'http://127.0.0.1:5000',
      '--no-samples',
      '-n',
      'shop',
      '--namespaces',
      'shop',
      '--log-level=debug',
    ]);
    expect(a).toMatchObject({
      kubeconfig: '/k',
      awsEndpoint: 'http://127.0.0.1:5000',
      samples: false,
      namespace: 'shop',
    });
    expect(a.runArgs).toEqual(['--namespaces', 'shop', '--log-level=debug']);
  });

  it.each([
    { reason: 'a flag without its value', argv: ['--kubeconfig'], message: '--kubeconfig needs a value' },
    {
      reason: 'an endpoint that is not a URL',
      argv: ['--aws-endpoint', 'localhost'],
      message: 'want an http(s) URL',
    },
    { reason: 'a bad namespace', argv: ['-n', 'Not_OK'], message: 'not a namespace name' },
    {
      reason: '--node with a cluster of its own',
      argv: ['--node', '--kubeconfig', '/k'],
      message: 'leave out --kubeconfig and --aws-endpoint',
    },
    {
      reason: '--node with an AWS endpoint of its own',
      argv: ['--aws-endpoint', 'http://127.0.0.1:5000', '--node'],
      message: 'leave out --kubeconfig and --aws-endpoint',
    },
  ])('rejects $reason', ({ argv, message }) => {
    expect(() => parseDevArgs(argv)).toThrow(UsageError);
    expect(() => parseDevArgs(argv)).toThrow(message);
  });
});

describe('conditionTransitions', () => {
  it.each([
    {
      reason: 'a new object reports every condition it has',
      old: undefined,
      cur: obj([cond('Ready', 'False', 'Creating'), cond('Synced', 'True', 'ReconcileSuccess')]),
      want: ['Ready=False Creating', 'Synced=True ReconcileSuccess'],
    },
    {
      reason: 'a reason change is a transition even with the same status',
      old: obj([cond('Ready', 'False', 'Creating'), cond('Synced', 'True', 'ReconcileSuccess')]),
      cur: obj([cond('Ready', 'False', 'Provisioning'), cond('Synced', 'True', 'ReconcileSuccess')]),
      want: ['Ready=False Provisioning'],
    },
    {
      reason: 'a message-only change is not',
      old: obj([cond('Ready', 'False', 'Creating', 'a')]),
      cur: obj([cond('Ready', 'False', 'Creating', 'b')]),
      want: [],
    },
  ])('$reason', ({ old, cur, want }) => {
    expect(conditionTransitions(old, cur).map((c) => `${c.type}=${c.status} ${c.reason}`)).toEqual(want);
  });
});

describe('formatTransition', () => {
  const at = new Date(2026, 0, 10, 9, 5, 7);
  it('prints time, kind/name, condition, reason and message; the namespace only when not the default', () => {
    const c = cond('Ready', 'True', 'Available', 'load balancer active');
    expect(formatTransition(at, obj([c]), c, 'default')).toBe(
      '09:05:07  MyIngress/shop           Ready=True   Available            load balancer active',
    );
    expect(formatTransition(at, obj([c]), c, 'other')).toContain('MyIngress/default/shop');
  });
});

describe('formatSampleSummary', () => {
  it('names the load balancer, the record, the database endpoint and the Secret', () => {
    const text = formatSampleSummary(
      [
        obj([], { status: { dnsName: 'lb-1.elb.amazonaws.com', state: 'active' } }),
        {
          ...obj([]),
          kind: 'DNSRecord',
          status: { fqdn: 'shop.example.com.', aliasDNSName: 'lb-1.elb.amazonaws.com' },
        },
        {
          kind: 'ManagedDB',
          metadata: { name: 'orders', namespace: 'apps' },
          spec: { writeConnectionSecretToRef: { name: 'orders-db' } },
          status: {
            endpoint: { address: 'db.rds.amazonaws.com', port: 5432 },
            dbInstanceStatus: 'available',
          },
        } as ManagedObject,
      ],
      4200,
      'apps',
    );
    expect(text).toContain('All samples Ready after 4.2 s:');
    expect(text).toContain('Load balancer  lb-1.elb.amazonaws.com');
    expect(text).toContain('DNS record     shop.example.com. → alias lb-1.elb.amazonaws.com');
    expect(text).toContain('Database       db.rds.amazonaws.com:5432');
    expect(text).toContain('Secret         orders-db   (kubectl get secret orders-db -n apps -o yaml)');
    expect(text).toContain('skylift trace myingress/shop -n apps');
  });

  // Issue 14, item 14: `skylift` is not on the PATH of a clone; the line names the command that works.
  it('names the command to run, e.g. the clone’s bin/skylift', () => {
    const shop = { kind: 'MyIngress', metadata: { name: 'shop' }, spec: {} } as ManagedObject;
    expect(formatSampleSummary([shop], 1000, 'default', 'bin/skylift')).toContain(
      'Trace one:  bin/skylift trace myingress/shop',
    );
  });
});

describe('the node mode’s sample lines', () => {
  it('lists the target group beside the Pods, then a curl line through the local data plane', () => {
    const pods = [
      { name: 'web-5bb67dbd5-2vzxf', ip: '10.244.0.2' },
      { name: 'web-5bb67dbd5-q5pdr', ip: '10.244.0.3' },
    ];
    expect(formatSampleTargets('shop', { registered: ['10.244.0.2:8080', '10.244.0.3:8080'], pods })).toBe(
      [
        'MyIngress shop sends traffic to the Pods (target group, as AWS has it):',
        '  10.244.0.2:8080      Pod web-5bb67dbd5-2vzxf',
        '  10.244.0.3:8080      Pod web-5bb67dbd5-q5pdr',
      ].join('\n'),
    );
    expect(
      formatSampleCurl('shop', {
        endpoint: { host: '127.0.0.1', port: 41234 },
        pods: pods.map((p) => p.name),
      }),
    ).toBe(
      [
        'MyIngress shop answers through its load balancer (the local ALB data plane):',
        '  curl -s http://127.0.0.1:41234/   # MyIngress shop → Pods web-5bb67dbd5-2vzxf, web-5bb67dbd5-q5pdr',
      ].join('\n'),
    );
  });
});

describe('samples', () => {
  it('examples/app.yaml holds the Service and one resource of each kind, and yields one stand-in slice', async () => {
    const samples = await loadSamples();
    expect(samples.map((s) => `${s.kind ?? ''}/${s.metadata.name}`)).toEqual([
      'Service/web',
      'MyIngress/shop',
      'DNSRecord/shop',
      'ManagedDB/orders',
    ]);
    expect(standInEndpointSlices(samples, 'apps')).toEqual([
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'web-skylift-dev',
          namespace: 'apps',
          labels: {
            'kubernetes.io/service-name': 'web',
            'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
          },
        },
        addressType: 'IPv4',
        ports: [{ name: '', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: ['10.77.1.10'], conditions: { ready: true } }],
      },
    ]);
  });
});
