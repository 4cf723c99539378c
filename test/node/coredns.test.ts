// The conformance suite's CoreDNS on the node cluster (issue 30): the image
// hack/install-node-runtime.sh builds from github.com/coredns/coredns is imported by every node
// under the name the suite's base manifests use, and the manifests' own coredns ConfigMap,
// Deployment and Service — read out of the compiled suite, unchanged but for the namespace — run:
// the Pod becomes Ready under the manifest's securityContext (every capability dropped but
// NET_BIND_SERVICE, no privilege escalation, the image's non-root user) and answers DNS on port 53
// through its Pod IP and the ClusterIP Service, with the Corefile's whoami zone.
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { corednsImage } from '../../dev/nodeCluster.ts';
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

interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: {
    template?: {
      spec?: { containers?: { image?: string; securityContext?: Record<string, unknown> }[] };
    };
  };
}

/**
 * The suite's base manifests' objects named `coredns` in gateway-conformance-infra, cut out of the
 * compiled suite (its manifests are embedded as text): each YAML document from the `---` before
 * `kind: K\nmetadata:\n  name: coredns\n  namespace: gateway-conformance-infra` to the next `---`.
 */
function corednsManifests(suite: string): ManifestObject[] {
  const found: ManifestObject[] = [];
  for (const kind of ['ConfigMap', 'Deployment', 'Service']) {
    const head = `kind: ${kind}\nmetadata:\n  name: coredns\n  namespace: gateway-conformance-infra\n`;
    const at = suite.indexOf(head);
    if (at < 0) continue;
    const start = suite.lastIndexOf('---\n', at) + 4;
    const end = suite.indexOf('\n---', at);
    const docs = parseAllDocuments(suite.slice(start, end < 0 ? undefined : end));
    for (const d of docs) found.push(d.toJS() as ManifestObject);
  }
  return found;
}

/** One record of a DNS answer. */
interface DnsRecord {
  readonly name: string;
  readonly type: number;
  readonly data: Buffer;
}

/** A parsed DNS reply: its header bits and its records by section. */
interface DnsReply {
  readonly rcode: number;
  readonly authoritative: boolean;
  readonly answers: readonly DnsRecord[];
  readonly additional: readonly DnsRecord[];
}

const typeA = 1;
const typeSrv = 33;

/** A standard query (RD set) for `name`, type A, class IN. */
function dnsQuery(id: number, name: string): Buffer {
  const labels = name
    .replace(/\.$/, '')
    .split('.')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, typeA, 0, 1])]);
}

/** A name at `offset` (labels and compression pointers) and where the record goes on. */
function readName(msg: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let at = offset;
  let next: number | undefined;
  for (let hops = 0; hops < 64; hops++) {
    const len = msg.readUInt8(at);
    if (len === 0) return { name: `${labels.join('.')}.`, next: next ?? at + 1 };
    if ((len & 0xc0) === 0xc0) {
      next ??= at + 2;
      at = msg.readUInt16BE(at) & 0x3fff;
      continue;
    }
    labels.push(msg.toString('ascii', at + 1, at + 1 + len));
    at += 1 + len;
  }
  throw new Error('DNS name with a pointer loop');
}

/** Parses a reply to the query `id`; throws on another id or a message that is not a reply. */
function parseReply(msg: Buffer, id: number): DnsReply {
  if (msg.readUInt16BE(0) !== id) throw new Error(`reply to query ${msg.readUInt16BE(0)}, not ${id}`);
  const flags = msg.readUInt16BE(2);
  if ((flags & 0x8000) === 0) throw new Error('not a reply');
  const counts = [4, 6, 8, 10].map((o) => msg.readUInt16BE(o));
  let at = 12;
  for (let q = 0; q < (counts[0] ?? 0); q++) at = readName(msg, at).next + 4;
  const sections: DnsRecord[][] = [[], [], []];
  for (const [i, section] of sections.entries()) {
    for (let r = 0; r < (counts[i + 1] ?? 0); r++) {
      const { name, next } = readName(msg, at);
      const type = msg.readUInt16BE(next);
      const length = msg.readUInt16BE(next + 8);
      section.push({ name, type, data: msg.subarray(next + 10, next + 10 + length) });
      at = next + 10 + length;
    }
  }
  return {
    rcode: flags & 0xf,
    authoritative: (flags & 0x0400) !== 0,
    answers: sections[0] ?? [],
    additional: sections[2] ?? [],
  };
}

/** Asks `server`:53 over UDP for `name` A; the reply, or a rejection after `timeoutMs`. */
async function resolve(server: string, name: string, timeoutMs: number): Promise<DnsReply> {
  const id = randomInt(1, 0xffff);
  const socket = createSocket('udp4');
  try {
    return await new Promise<DnsReply>((resolveReply, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no DNS answer from ${server}:53 within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.on('message', (msg) => {
        clearTimeout(timer);
        try {
          resolveReply(parseReply(msg, id));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      socket.send(dnsQuery(id, name), 53, server);
    });
  } finally {
    socket.close();
  }
}

interface PodView {
  metadata: { name: string };
  status?: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { restartCount: number }[];
  };
}

describe('the conformance CoreDNS image (built from github.com/coredns/coredns)', () => {
  it('runs the base manifests’ coredns as they give it and answers DNS on port 53', async () => {
    const suite = await readFile(join(toolPaths().gatewayApiDir, 'conformance.test'), 'latin1');
    // The image name the manifests use is the one the node imports.
    const used = new Set(suite.match(/registry\.k8s\.io\/coredns\/coredns:[\w.-]+/g) ?? []);
    expect([...used]).toEqual([corednsImage.name]);
    const { stdout } = await run('ctr', [
      '--address',
      nodeInfo().containerdSocket,
      '-n',
      'k8s.io',
      'images',
      'ls',
      '-q',
    ]);
    expect(stdout.split('\n')).toContain(corednsImage.name);

    // The manifests' own objects, as the suite applies them (in a namespace of this test).
    const objects = corednsManifests(suite);
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Service']);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    const container = deployment?.spec?.template?.spec?.containers?.[0];
    expect(container?.image).toBe(corednsImage.name);
    // What makes port 53 a question: nothing but NET_BIND_SERVICE, no privilege escalation, no
    // runAsUser (the image's user, 65532, as upstream's).
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
    });
    ns = await newNamespace(admin, 'coredns');
    const paths: Record<string, string> = {
      ConfigMap: `/api/v1/namespaces/${ns}/configmaps`,
      Deployment: `/apis/apps/v1/namespaces/${ns}/deployments`,
      Service: `/api/v1/namespaces/${ns}/services`,
    };
    for (const o of objects)
      await admin.create(paths[o.kind] ?? '', { ...o, metadata: { ...o.metadata, namespace: ns } });

    const pod = await waitFor(
      async () => {
        const list = await admin.get<{ items: PodView[] }>(`/api/v1/namespaces/${ns}/pods`, {
          labelSelector: 'app=udp',
        });
        return list.items.find(
          (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
        );
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'the coredns Pod to be Ready' },
    );
    const service = await admin.get<{ spec: { clusterIP: string } }>(
      `/api/v1/namespaces/${ns}/services/coredns`,
    );

    // From the host, through the Pod IP and through the Service (kube-proxy): the Corefile's
    // foo.bar.com zone is whoami, which answers with the asker's address and port.
    for (const server of [pod.status?.podIP ?? '', service.spec.clusterIP]) {
      const reply = await waitFor(() => resolve(server, 'foo.bar.com', 2_000), {
        timeoutMs: 30_000,
        intervalMs: 250,
        description: `CoreDNS to answer at ${server}:53`,
      });
      expect(reply.rcode).toBe(0);
      expect(reply.authoritative).toBe(true);
      const a = reply.additional.find((r) => r.type === typeA);
      expect(a?.name).toBe('foo.bar.com.');
      expect(a?.data.length).toBe(4);
      const srv = reply.additional.find((r) => r.type === typeSrv);
      expect(srv?.name).toBe('_udp.foo.bar.com.');
      // Straight to the Pod the asker is the host itself; through the Service kube-proxy may
      // masquerade it.
      if (server === pod.status?.podIP) expect([...(a?.data ?? [])].join('.')).toBe(nodeInfo().hostIp);
    }
    // It bound port 53 at its first start: no restart (a bind refused exits the process).
    const now = await admin.get<PodView>(`/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`);
    expect(now.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });
});
