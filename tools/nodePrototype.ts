// PROTOTYPE (issue 17): starts the local control plane in node mode, one real
// node (containerd, CNI bridge, kubelet, kube-proxy), runs a Pod, a Deployment
// behind a Service and an in-cluster apiserver client, prints timings, and
// stops everything. Needs root and hack/install-node-runtime.sh.
//
//   node tools/nodePrototype.ts [--hold] [--dir DIR] [--index N] [--host-net]
//
// The node gets its own network namespace skylift-N (N = --index, 0..63, so
// that nodes can run side by side): Pod CIDR 10.244.N.0/24, transfer net
// 10.244.255.4N/30 (host end .4N+1, advertised by kube-apiserver; node .4N+2).
// --host-net puts the node's networking on the host instead (bridge
// skylift0 at 10.244.0.1, as before).
//
// When `make image` has built the operator image, the node imports it too and
// runs it once (`skylift help`) with the chart's security context.
//
// --hold keeps the cluster up after the demo until SIGINT/SIGTERM (the admin
// kubeconfig is printed).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane, type ControlPlane } from '../src/dev/controlplane.ts';
import { simpleRequest } from '../src/dev/http.ts';
import { skyliftImage } from '../src/dev/images.ts';
import { startNode, type RunningNode } from '../src/dev/node.ts';
import { pinnedVersions, repoRoot, toolPaths } from '../src/dev/paths.ts';
import { reapStaleProcesses } from '../src/dev/reaper.ts';
import { waitFor } from '../src/dev/wait.ts';

const { values } = parseArgs({
  options: {
    hold: { type: 'boolean', default: false },
    dir: { type: 'string' },
    index: { type: 'string', default: '0' },
    'host-net': { type: 'boolean', default: false },
  },
});
const index = Number(values.index);
if (!Number.isInteger(index) || index < 0 || index > 63) throw new Error('--index must be 0..63');
const hostNet = values['host-net'];
const dir = resolve(values.dir ?? join(repoRoot, '.skylift', `node-proto-${index}`));
const nodeName = 'skylift-node';
const podCidr = `10.244.${index}.0/24`;
const hostIp = hostNet ? '10.244.0.1' : `10.244.255.${4 * index + 1}`;
const netns = hostNet
  ? undefined
  : {
      name: `skylift-${index}`,
      hostVeth: `skylift-h${index}`,
      nodeIp: `10.244.255.${4 * index + 2}`,
      // The demo curls a ClusterIP from the host. The Service CIDR is the same
      // for every control plane, so only one node at a time can have this route.
      hostRoutes: index === 0 ? ['10.0.0.0/24'] : [],
    };
const paths = toolPaths();
const imageDir = join(paths.cacheDir, 'node-images');
const operatorImage = skyliftImage(paths);
const kubeletBinDir = join(paths.cacheDir, 'kubelet', pinnedVersions().KUBE_VERSION);
const t = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const log = (line: string): void => {
  process.stdout.write(`[node-proto] ${line}\n`);
};

let cp: ControlPlane | undefined;
let node: RunningNode | undefined;
let stopping = false;
async function stopAll(): Promise<void> {
  if (stopping) return;
  stopping = true;
  const t0 = Date.now();
  if (node !== undefined) await node.stop();
  if (cp !== undefined) await cp.stop();
  log(`stopped in ${t(t0)}`);
}

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  if (cp === undefined) throw new Error('no control plane');
  const res = await simpleRequest(`${cp.server}${path}`, {
    method,
    ca: cp.caPem,
    headers: { authorization: `Bearer ${cp.identities.admin.token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 500)}`);
  return (res.body.startsWith('{') ? JSON.parse(res.body) : { text: res.body }) as Record<string, unknown>;
}

interface PodView {
  metadata: { name: string };
  status?: { phase?: string; podIP?: string; containerStatuses?: { state?: Record<string, unknown> }[] };
}

async function demo(): Promise<void> {
  const ns = 'demo';
  await api('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  // The ServiceAccount controller makes `default`; Pods need it before they are admitted.
  await waitFor(
    async () =>
      (await api('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).metadata ? true : undefined,
    { timeoutMs: 20_000, description: 'default ServiceAccount', intervalMs: 100 },
  );

  // 1. One Pod: create → Running with a bridge IP; its server answers from the host.
  let t0 = Date.now();
  await api('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: 'hello', labels: { app: 'hello-pod' } },
    spec: {
      containers: [{ name: 'hello', image: 'localhost/skylift/hello:1', ports: [{ containerPort: 8080 }] }],
      terminationGracePeriodSeconds: 2,
    },
  });
  const pod = await waitFor(
    async () => {
      const p = (await api('GET', `/api/v1/namespaces/${ns}/pods/hello`)) as unknown as PodView;
      return p.status?.phase === 'Running' ? p : undefined;
    },
    { timeoutMs: 30_000, description: 'Pod hello Running', intervalMs: 100 },
  );
  log(`Pod hello Running after ${t(t0)} with IP ${pod.status?.podIP ?? '?'}`);
  const direct = await simpleRequest(`http://${pod.status?.podIP ?? ''}:8080/`);
  log(`GET http://${pod.status?.podIP ?? ''}:8080/ from the host: ${direct.status} ${direct.body.trim()}`);

  // 2. A Pod that reaches the apiserver through the `kubernetes` Service with its projected token.
  t0 = Date.now();
  await api('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: 'apiclient' },
    spec: {
      restartPolicy: 'Never',
      containers: [
        { name: 'get', image: 'localhost/skylift/hello:1', args: ['get', 'https://10.0.0.1:443/version'] },
      ],
    },
  });
  const phase = await waitFor(
    async () => {
      const p = (await api('GET', `/api/v1/namespaces/${ns}/pods/apiclient`)) as unknown as PodView;
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p.status.phase : undefined;
    },
    { timeoutMs: 60_000, description: 'Pod apiclient finished', intervalMs: 200 },
  );
  const logs = await api('GET', `/api/v1/namespaces/${ns}/pods/apiclient/log`);
  log(
    `Pod apiclient ${phase} after ${t(t0)}; its log (read through the kubelet):\n${String(logs.text).trim()}`,
  );

  // 3. A Deployment of 2 behind a Service: the controllers make Pods and an EndpointSlice.
  t0 = Date.now();
  await api('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
    metadata: { name: 'web' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [
            {
              name: 'hello',
              image: 'localhost/skylift/hello:1',
              ports: [{ containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  });
  const svc = await api('POST', `/api/v1/namespaces/${ns}/services`, {
    metadata: { name: 'web' },
    spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  const clusterIp = (svc.spec as { clusterIP: string }).clusterIP;
  const addrs = await waitFor(
    async () => {
      const l = await api(
        'GET',
        `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb`,
      );
      const items = (l.items ?? []) as {
        endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
      }[];
      const ready = items.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready === true));
      return ready.length === 2 ? ready.flatMap((e) => e.addresses) : undefined;
    },
    { timeoutMs: 90_000, description: 'EndpointSlice with 2 ready endpoints', intervalMs: 200 },
  );
  log(`Deployment web: EndpointSlice lists ready ${addrs.join(', ')} after ${t(t0)}`);
  if (netns !== undefined && netns.hostRoutes.length === 0) {
    log('no host route to the Service CIDR (--index > 0): not calling the Service from the host');
    return;
  }
  // kube-proxy programs the Service's rules within its sync period of the EndpointSlice.
  t0 = Date.now();
  await waitFor(
    async () => ((await simpleRequest(`http://${clusterIp}/`)).status === 200 ? true : undefined),
    {
      timeoutMs: 30_000,
      description: `Service web answering at ${clusterIp}`,
      intervalMs: 100,
    },
  );
  log(`Service web answered through kube-proxy ${t(t0)} after its EndpointSlice was ready`);
  // Until both Pods have answered: kube-proxy may first have synced with one ready endpoint.
  const seen = new Map<string, number>();
  let gets = 0;
  const t1 = Date.now();
  while (gets < 20 || (seen.size < 2 && Date.now() - t1 < 15_000)) {
    // A new connection each time (Node's agent keeps them alive): kube-proxy balances connections.
    const r = await simpleRequest(`http://${clusterIp}/`, { headers: { connection: 'close' } });
    const who = r.body.trim();
    seen.set(who, (seen.get(who) ?? 0) + 1);
    gets++;
  }
  const answers = [...seen].map(([who, n]) => `${n}x ${who}`).join('\n  ');
  log(
    `${gets} GETs of Service web (${clusterIp}:80, through kube-proxy) in ${t(t1)} answered by:\n  ${answers}`,
  );
}

/** 4. The operator image on the node: non-root, read-only root filesystem, no capabilities (the chart's settings). */
async function operatorImageDemo(): Promise<void> {
  const ns = 'demo';
  const t0 = Date.now();
  await api('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: 'skylift-help' },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 },
      containers: [
        {
          name: 'skylift',
          image: operatorImage.name,
          imagePullPolicy: 'Never',
          args: ['help'],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
    },
  });
  const phase = await waitFor(
    async () => {
      const p = (await api('GET', `/api/v1/namespaces/${ns}/pods/skylift-help`)) as unknown as PodView;
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p.status.phase : undefined;
    },
    { timeoutMs: 60_000, description: 'Pod skylift-help finished', intervalMs: 200 },
  );
  const logs = await api('GET', `/api/v1/namespaces/${ns}/pods/skylift-help/log`);
  log(
    `Pod skylift-help (${operatorImage.name}) ${phase} after ${t(t0)}; first lines of its log:\n` +
      String(logs.text).trim().split('\n').slice(0, 3).join('\n'),
  );
}

async function main(): Promise<void> {
  await mkdir(dir, { recursive: true });
  // A run killed with SIGKILL leaves its children (and the node's netns) behind.
  const reaped = await reapStaleProcesses(dir);
  if (reaped > 0) log(`reaped ${reaped} processes of a killed run`);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      void stopAll().then(() => process.exit(130));
    });
  }
  let t0 = Date.now();
  cp = await startControlPlane({
    dir: join(dir, 'cluster'),
    controllerManager: true,
    node: { nodeName, hostIp, schedulerBin: join(kubeletBinDir, 'kube-scheduler') },
  });
  log(`control plane up in ${t(t0)} at ${cp.server}; admin kubeconfig ${cp.kubeconfigPath('admin')}`);
  t0 = Date.now();
  node = await startNode({
    dir: join(dir, 'node'),
    controlPlane: cp,
    nodeName,
    hostIp,
    podCidr,
    bridge: 'skylift0',
    ...(netns !== undefined ? { netns, cgroupRoot: `/skylift-${index}` } : {}),
    kubeletBinDir,
    images: [
      join(imageDir, 'pause.oci.tar'),
      join(imageDir, 'hello.oci.tar'),
      ...(existsSync(operatorImage.archive) ? [operatorImage.archive] : []),
    ],
    pauseImage: 'localhost/skylift/pause:1',
    log,
  });
  log(`node up in ${t(t0)}: ${JSON.stringify(node.timings)}`);
  await demo();
  if (existsSync(operatorImage.archive)) await operatorImageDemo();
  else log(`no ${operatorImage.archive}: make image builds the operator image the node would run`);
  if (values.hold) {
    log(`holding; KUBECONFIG=${cp.kubeconfigPath('admin')}; Ctrl-C to stop`);
    await new Promise(() => undefined);
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(
    `[node-proto] FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
} finally {
  if (!values.hold || process.exitCode === 1) await stopAll();
}
