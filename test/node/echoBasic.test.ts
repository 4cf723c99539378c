// The Gateway API conformance suite's echo server on the node cluster (issue 30): the image
// hack/install-node-runtime.sh builds from the conformance module is imported by every node
// under exactly the names the suite's embedded manifests use, and a Pod started from one of
// those names, as the manifests start it (no imagePullPolicy: IfNotPresent for a tag), answers
// with the echo server's JSON through its Pod IP and through a ClusterIP Service.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { echoBasicImage } from '../../dev/nodeCluster.ts';
import { toolPaths } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { nodeInfo } from '../support/stack.ts';

const run = promisify(execFile);
const admin = kubeClient();
let ns: string | undefined;

afterAll(async () => {
  if (ns !== undefined) await admin.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
});

/** What echo-basic answers (conformance/echo-basic: RequestAssertions), the fields checked here. */
interface EchoAnswer {
  readonly path: string;
  readonly method: string;
  readonly headers: Record<string, string[]>;
  readonly namespace: string;
  readonly pod: string;
}

interface PodView {
  status?: { phase?: string; podIP?: string };
  spec?: { containers: { imagePullPolicy?: string }[] };
}

/** GET `url` with a marker header; the answer when it is echo-basic's JSON, else undefined (not up yet). */
async function echo(url: string): Promise<EchoAnswer | undefined> {
  const res = await fetch(url, {
    headers: { 'X-Skylift-Probe': 'echo' },
    signal: AbortSignal.timeout(5_000),
  });
  if (res.status !== 200) return undefined;
  return (await res.json()) as EchoAnswer;
}

describe('the conformance echo image (echo-basic, built from the module)', () => {
  it('carries every name the compiled suite uses and answers as echo-basic on the node', async () => {
    // The names the suite's embedded manifests give it, read from the compiled suite itself.
    const suite = await readFile(join(toolPaths().gatewayApiDir, 'conformance.test'), 'latin1');
    const used = new Set(suite.match(/registry\.k8s\.io\/gateway-api\/echo-basic:[\w.-]+/g) ?? []);
    expect([...used].sort()).toEqual([...echoBasicImage.names].sort());

    // All of them are in the node's containerd, where the kubelet looks.
    const { stdout } = await run('ctr', [
      '--address',
      nodeInfo().containerdSocket,
      '-n',
      'k8s.io',
      'images',
      'ls',
      '-q',
    ]);
    expect(stdout.split('\n')).toEqual(expect.arrayContaining([...echoBasicImage.names]));

    // A Pod as base/manifests.yaml's backends are: name and namespace from the downward API, no
    // imagePullPolicy; a Service in front as there (8080 → 3000).
    ns = await newNamespace(admin, 'echo');
    const image = 'registry.k8s.io/gateway-api/echo-basic:v1.5.1';
    expect(echoBasicImage.names).toContain(image);
    await admin.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'infra-backend-v1', labels: { app: 'infra-backend-v1' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'infra-backend-v1',
            image,
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            ],
          },
        ],
      },
    });
    const service = await admin.create<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'infra-backend-v1' },
      spec: { selector: { app: 'infra-backend-v1' }, ports: [{ port: 8080, targetPort: 3000 }] },
    });
    const pod = await waitFor(
      async () => {
        const p = await admin.get<PodView>(`/api/v1/namespaces/${ns}/pods/infra-backend-v1`);
        return p.status?.phase === 'Running' && p.status.podIP !== undefined ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'the echo-basic Pod to run' },
    );
    // The default the manifests rely on: the imported image is used, never pulled.
    expect(pod.spec?.containers[0]?.imagePullPolicy).toBe('IfNotPresent');

    // From the host: the node's namespace gets the Pod CIDR and the Service CIDR routed to it.
    const targets = [
      `http://${pod.status?.podIP ?? ''}:3000/conformance/direct?x=1`,
      `http://${service.spec.clusterIP}:8080/conformance/service`,
    ];
    for (const url of targets) {
      const answer = await waitFor(() => echo(url), {
        timeoutMs: 30_000,
        intervalMs: 250,
        description: `echo-basic to answer ${url}`,
      });
      expect(answer.path).toBe(new URL(url).pathname + new URL(url).search);
      expect(answer.method).toBe('GET');
      expect(answer.namespace).toBe(ns);
      expect(answer.pod).toBe('infra-backend-v1');
      expect(answer.headers['X-Skylift-Probe']).toEqual(['echo']);
    }
  });
});
