// A kind defined outside src/ — Queue, an SQS queue (test/support/queueKind/)
// — served by the operator's own wiring: parseRunOptions with the kind as the
// registry, startOperator in this process, the real apiserver and moto. It
// proves the KindModule contract is enough for a new kind: create, drift
// correction, spec change, delete.
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  SQSClient,
  UntagQueueCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizerName, ownershipTagKeys } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { parseRunOptions, UsageError } from '../../src/operator/options.ts';
import { simpleRequest } from '../../dev/http.ts';
import { waitFor } from '../../dev/wait.ts';
import type { ConfiguredKind } from '../../src/kinds/module.ts';
import { startOperator, type RunningOperator } from '../../src/operator/start.ts';
import { createAwsClients } from '../../src/providers/aws/clients.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { ConditionType, getCondition } from '../../src/runtime/conditions.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { eventsFor, ensureCrd, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { isQueueAbsent, queueName } from '../support/queueKind/adapter.ts';
import { queueCrd, queueType, type Queue, type QueueSpec } from '../support/queueKind/api.ts';
import { queueKind } from '../support/queueKind/index.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let admin: KubeClient;
let sqs: SQSClient;
let ns: string;
let op: RunningOperator | undefined;
let configured: ConfiguredKind;

const env = { AWS_REGION: 'us-east-1' };
const ready = (q: Queue | undefined): boolean =>
  getCondition(q?.status?.conditions, ConditionType.Ready)?.status === 'True';

beforeAll(async () => {
  admin = kubeClient();
  const endpoint = stackInfo().awsEndpoint;
  sqs = new SQSClient(awsClientConfig(endpoint));
  await ensureCrd(admin, queueCrd(), queueType);
  ns = await newNamespace(admin, 'queue');
  const options = parseRunOptions(
    [
      '--kubeconfig',
      stackInfo().adminKubeconfig,
      '--namespaces',
      ns,
      '--leader-elect=false',
      '--probe-address',
      '127.0.0.1:0',
      '--cluster-id',
      'test-cluster',
      '--resync-period',
      '2s',
      '--queue-poll-interval',
      '300ms',
      '--shutdown-deadline',
      '5s',
      '--log-level',
      process.env.SKYLIFT_TEST_LOG_LEVEL ?? 'warn',
    ],
    env,
    [queueKind(endpoint)],
  );
  expect(options.kinds.map((k) => k.module.type)).toEqual([queueType]);
  configured = options.kinds[0] as ConfiguredKind;
  const running = startOperator(options);
  op = running;
  // Ready once the manager has started the Queue controller and its informer has listed.
  await waitFor(
    async () => {
      const address = running.manager.probeAddress;
      if (address === undefined) return undefined;
      return (await simpleRequest(`http://${address}/readyz`)).status === 200 ? true : undefined;
    },
    { timeoutMs: 30_000, description: 'the operator ready' },
  );
});

afterAll(async () => {
  op?.manager.stop();
  await op?.done;
  sqs.destroy();
});

async function readQueue(name: string): Promise<Queue | undefined> {
  return readObject<Queue>(admin, queueType, ns, name);
}

async function visibility(url: string): Promise<string | undefined> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }),
  );
  return out.Attributes?.VisibilityTimeout;
}

async function tags(url: string): Promise<Record<string, string>> {
  return (await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags ?? {};
}

async function eventWith(name: string, reason: string, note: string) {
  return waitFor(
    async () => (await eventsFor(admin, ns, name)).find((e) => e.reason === reason && e.note.includes(note)),
    { timeoutMs: 30_000, description: `a ${reason} Event mentioning ${JSON.stringify(note)}` },
  );
}

describe('a kind defined outside src/ (Queue → SQS)', () => {
  it('takes its own flag through parseRunOptions, and only when it is in the registry', () => {
    const kind = queueKind(stackInfo().awsEndpoint);
    expect(() => parseRunOptions(['--queue-poll-interval', 'soon'], env, [kind])).toThrow(
      /--queue-poll-interval: invalid duration "soon"/,
    );
    expect(() => parseRunOptions([], { ...env, SKYLIFT_QUEUE_POLL_INTERVAL: 'soon' }, [kind])).toThrow(
      UsageError,
    );
    expect(parseRunOptions(['--queue-poll-interval', '1s'], env, [kind]).kinds).toHaveLength(1);
    // The product's registry does not know the flag.
    expect(() => parseRunOptions(['--queue-poll-interval', '1s'], env)).toThrow(UsageError);
  });

  it('creates the queue, corrects drift, follows the spec, and deletes it', async () => {
    const name = 'orders';
    const spec: QueueSpec = { visibilityTimeoutSeconds: 45, tags: { team: 'payments' } };
    await admin.create(resourcePath(queueType, { namespace: ns }), {
      apiVersion: `${queueType.group}/${queueType.version}`,
      kind: queueType.kind,
      metadata: { name, namespace: ns },
      spec,
    });

    // Create: Ready, identity in status, the finalizer, the queue in SQS as specified and owned.
    const created = await waitFor(
      async () => {
        const q = await readQueue(name);
        return ready(q) && typeof q?.status?.arn === 'string' ? q : undefined;
      },
      { timeoutMs: 30_000, description: 'the Queue Ready with its ARN' },
    );
    const uid = created.metadata.uid ?? '';
    expect(uid).not.toBe('');
    expect(created.metadata.finalizers).toContain(finalizerName);
    expect(getCondition(created.status?.conditions, ConditionType.Synced)?.status).toBe('True');
    const url = created.status?.url;
    if (typeof url !== 'string') throw new Error(`status.url is ${JSON.stringify(url)}`);
    expect(url.endsWith(`/${queueName(ns, name, uid)}`)).toBe(true);
    expect(await sqs.send(new GetQueueUrlCommand({ QueueName: queueName(ns, name, uid) }))).toMatchObject({
      QueueUrl: url,
    });
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn', 'VisibilityTimeout'] }),
    );
    expect(attrs.Attributes).toMatchObject({ VisibilityTimeout: '45', QueueArn: created.status?.arn });
    expect(await tags(url)).toEqual({
      team: 'payments',
      [ownershipTagKeys.owner]: `${ns}/${name}`,
      [ownershipTagKeys.uid]: uid,
      [ownershipTagKeys.cluster]: 'test-cluster',
    });
    await eventWith(name, 'Created', `created queue ${queueName(ns, name, uid)}`);
    // The kind's own client was adopted by the plumbing: its calls are counted like the product's.
    const metrics = await simpleRequest(`http://${op?.manager.probeAddress ?? ''}/metrics`);
    expect(metrics.body).toMatch(
      /skylift_aws_api_calls_total\{service="sqs",operation="CreateQueue",outcome="success",account="own"\} [1-9]/,
    );

    // The rest of the contract, as `skylift trace` and `skylift dev` would use it.
    const aws = createAwsClients({
      region: 'us-east-1',
      clock: realClock,
      metrics: new Metrics(),
      endpoint: stackInfo().awsEndpoint,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    try {
      const [node] = await configured.trace(created, { kube: admin, aws, now: Date.now() });
      expect(node).toMatchObject({ kind: 'SQSQueue', name: url, status: 'exists', ready: true });
      expect(node?.details).toContain('visibilityTimeout=45s');
    } finally {
      aws.destroy();
    }
    expect(configured.module.summarize(created, ns).join('\n')).toContain(url);

    // Drift: changed behind Skylift's back, put back within the resync period, with a Warning Event.
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: '300' } }),
    );
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ['team'] }));
    // One Event or two, depending on whether a resync falls between the two calls.
    const drift = await eventWith(name, 'DriftCorrected', 'visibilityTimeoutSeconds 300 → 45');
    expect(drift.type).toBe('Warning');
    expect((await eventWith(name, 'DriftCorrected', 'tags team')).type).toBe('Warning');
    await waitFor(async () => ((await visibility(url)) === '45' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'VisibilityTimeout back at 45',
    });
    expect((await tags(url)).team).toBe('payments');

    // Spec change: SQS follows, the new generation is observed, an Updated (not drift) Event.
    await admin.patch(
      resourcePath(queueType, { namespace: ns, name }),
      { spec: { visibilityTimeoutSeconds: 120 } },
      'merge',
    );
    await waitFor(async () => ((await visibility(url)) === '120' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'VisibilityTimeout 120 in SQS',
    });
    await waitFor(
      async () => {
        const q = await readQueue(name);
        return ready(q) && q?.status?.observedGeneration === 2 ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'generation 2 observed and Ready' },
    );
    const updated = await eventWith(name, 'Updated', 'visibilityTimeoutSeconds 45 → 120');
    expect(updated.type).toBe('Normal');

    // Delete: the queue goes, then the finalizer, then the CR.
    await admin.delete(resourcePath(queueType, { namespace: ns, name }));
    await waitFor(async () => ((await readQueue(name)) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the Queue gone from Kubernetes',
    });
    const lookup = sqs.send(new GetQueueUrlCommand({ QueueName: queueName(ns, name, uid) }));
    await expect(
      lookup.then(
        () => 'exists',
        (err: unknown) => (isQueueAbsent(err) ? 'absent' : err),
      ),
    ).resolves.toBe('absent');
    await eventWith(name, 'Deleted', 'deleted the AWS resource');
  });
});
