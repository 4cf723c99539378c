// `skylift dev --teams`: two teams in two AWS accounts of the emulator (examples/dev-teams.yaml),
// each with its TeamPolicy, and the samples' namespace served by a policy of its own.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { Route53Client } from '@aws-sdk/client-route-53';
import { namespaceType } from '../src/apis/core.ts';
import { resourcePath, type KubeObject, type ResourceType } from '../src/apis/meta.ts';
import { teamPolicyType, type TeamPolicy } from '../src/apis/teampolicy.ts';
import { kinds } from '../src/kinds/registry.ts';
import type { KubeClient } from '../src/runtime/kube/client.ts';
import { ensureHostedZone } from './awsAccount.ts';
import { emulatorCredentials } from './emulator.ts';
import { repoRoot } from './paths.ts';
import { parseYamlDocuments } from './yamlDocuments.ts';
import { waitFor } from './wait.ts';

/** The teams example. */
export const teamsFile = join(repoRoot, 'examples', 'dev-teams.yaml');

/** The label of the example's TeamPolicies (so an operator given `--team-policy-selector` can pick them). */
export const teamsExampleLabel = { key: 'skylift.dev/example', value: 'dev-teams' } as const;

const types: readonly ResourceType[] = [namespaceType, teamPolicyType, ...kinds.map((k) => k.type)];

function typeOf(obj: KubeObject): ResourceType {
  const t = types.find((k) => k.kind === obj.kind);
  if (t === undefined) throw new Error(`${teamsFile}: unsupported kind ${String(obj.kind)}`);
  return t;
}

/** The objects of the teams example. Throws on a document without kind or name. */
export async function loadTeams(): Promise<KubeObject[]> {
  const docs = parseYamlDocuments(await readFile(teamsFile, 'utf8'), teamsFile);
  return docs.filter((d): d is KubeObject => typeof d === 'object' && d !== null);
}

/**
 * The policy that keeps serving the samples' namespace once the teams' policies exist (no role:
 * the operator's own account, as before). Pure.
 */
export function samplesPolicy(namespace: string): TeamPolicy {
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'TeamPolicy',
    metadata: { name: 'dev-samples', labels: { [teamsExampleLabel.key]: teamsExampleLabel.value } },
    spec: { namespaces: { names: [namespace] }, guardrails: { adoption: 'Allowed' } },
  };
}

/**
 * Prepares each team's account in the emulator (assumes the policy's role and creates the hosted
 * zone its DNSRecords name), then applies the example (server-side apply, field manager
 * skylift-dev) and, when `samplesNamespace` is given, the policy serving it. Idempotent.
 */
export async function applyTeams(
  client: KubeClient,
  awsEndpoint: string,
  region: string,
  samplesNamespace: string | undefined,
): Promise<KubeObject[]> {
  const objects = await loadTeams();
  for (const p of objects.filter((o): o is TeamPolicy => o.kind === 'TeamPolicy')) {
    const roleArn = p.spec.aws?.roleArn;
    if (roleArn === undefined) continue;
    const zones = (p.spec.guardrails?.dnsRecords as { zones?: { name?: string }[] } | undefined)?.zones ?? [];
    await inAccount(awsEndpoint, region, roleArn, async (route53) => {
      for (const z of zones) if (z.name !== undefined) await ensureHostedZone(route53, z.name);
    });
  }
  const all = samplesNamespace !== undefined ? [...objects, samplesPolicy(samplesNamespace)] : objects;
  for (const obj of all) {
    await client.patch(
      resourcePath(typeOf(obj), { namespace: obj.metadata.namespace, name: obj.metadata.name }),
      obj,
      'apply',
      { fieldManager: 'skylift-dev', force: true },
    );
  }
  return all;
}

/** Runs `fn` with a Route 53 client in the account of `roleArn` (assumed through the emulator's STS). */
async function inAccount(
  endpoint: string,
  region: string,
  roleArn: string,
  fn: (route53: Route53Client) => Promise<void>,
): Promise<void> {
  const own = {
    accessKeyId: emulatorCredentials.accessKeyId,
    secretAccessKey: emulatorCredentials.secretAccessKey,
  };
  const sts = new STSClient({ region, endpoint, credentials: own });
  try {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 'skylift-dev' }));
    const c = out.Credentials;
    if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined)
      throw new Error(`AssumeRole ${roleArn} answered without credentials`);
    const route53 = new Route53Client({
      region,
      endpoint,
      credentials: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        ...(c.SessionToken !== undefined ? { sessionToken: c.SessionToken } : {}),
      },
    });
    try {
      await fn(route53);
    } finally {
      route53.destroy();
    }
  } finally {
    sts.destroy();
  }
}

interface Reported extends KubeObject {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/**
 * Waits until each of the example's DNSRecords is Ready or refused (Synced=False Forbidden), and
 * returns one line per record saying which, with the refusal's message. Throws after `timeoutMs`.
 */
export async function teamsOutcome(
  client: KubeClient,
  objects: readonly KubeObject[],
  timeoutMs: number,
): Promise<string[]> {
  const records = objects.filter((o) => o.kind === 'DNSRecord');
  const lines: string[] = [];
  for (const r of records) {
    const type = typeOf(r);
    const path = resourcePath(type, { namespace: r.metadata.namespace, name: r.metadata.name });
    const line = await waitFor(
      async () => {
        const got = await client.get<Reported>(path);
        const ready = got.status?.conditions?.find((c) => c.type === 'Ready');
        const synced = got.status?.conditions?.find((c) => c.type === 'Synced');
        if (ready?.status === 'True') return `  ${r.metadata.namespace ?? ''}/${r.metadata.name}: Ready`;
        if (synced?.status === 'False' && synced.reason === 'Forbidden')
          return `  ${r.metadata.namespace ?? ''}/${r.metadata.name}: Forbidden — ${synced.message ?? ''}`;
        return undefined;
      },
      {
        timeoutMs,
        description: `DNSRecord ${r.metadata.namespace ?? ''}/${r.metadata.name} Ready or Forbidden`,
      },
    );
    lines.push(line);
  }
  return lines;
}
