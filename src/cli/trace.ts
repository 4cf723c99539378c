// `skylift trace KIND/NAME`: the resource, its conditions and the AWS
// resources behind it, described live with read-only calls.
import { parseArgs } from 'node:util';
import { createAwsClients } from '../providers/aws/clients.ts';
import { realClock } from '../runtime/clock.ts';
import { KubeApiError, KubeClient } from '../runtime/kube/client.ts';
import { loadKubeconfig } from '../runtime/kube/kubeconfigLoad.ts';
import { resourcePath } from '../apis/meta.ts';
import type { ManagedObject } from '../apis/managed.ts';
import { Metrics } from '../runtime/metrics.ts';
import {
  configureKinds,
  kindFlagOptions,
  kindFlagUsage,
  parseDuration,
  UsageError,
} from '../operator/options.ts';
import type { ConfiguredKind } from '../kinds/module.ts';
import { kindNamed, kinds } from '../kinds/registry.ts';
import { renderTree } from '../trace/render.ts';
import { resourceNode } from '../trace/resource.ts';
import { allReady, type TraceNode } from '../trace/tree.ts';

export const traceUsage = `Usage: skylift trace KIND/NAME [-n NAMESPACE] [--kubeconfig PATH] [-o tree|json]

Prints the resource with its Ready and Synced conditions, then the AWS resources
behind it from its status, each described live (read-only calls):
${kinds.map((k) => `  ${k.type.kind.padEnd(10)} ${k.traceShows}\n`).join('')}A resource recorded in status but missing in AWS shows as NotFound (drift); an AWS
error is shown on its node.

KIND is the kind, its plural or short name, any case: ${kinds.map((k) => `${k.names[0] ?? ''}|${k.names[2] ?? ''}`).join(', ')}.

  -n, --namespace NS           default: the kubeconfig context's namespace, else default
  --kubeconfig PATH            default: $KUBECONFIG, ~/.kube/config, or in-cluster
  -o, --output tree|json       default tree
  --region REGION              AWS region [AWS_REGION, AWS_DEFAULT_REGION]; the endpoint
                               and credentials come from the environment as for skylift run
  --aws-timeout DURATION       deadline of one AWS call attempt (2 per call); a silent endpoint
                               shows as an error on its node [SKYLIFT_AWS_TIMEOUT] (default 10s)
${kindFlagUsage()}
                               (each kind's flags of skylift run, as the operator was given them)

Exit status: 0 when the resource and everything behind it is Ready (target health is
shown but does not count), 1 when anything is not (or the resource does not exist),
2 on usage errors.
`;

/** What `skylift trace` was asked. */
export interface TraceArgs {
  /** The kind, configured from its flags (as the operator's). */
  readonly kind: ConfiguredKind;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly kubeconfig: string | undefined;
  readonly output: 'tree' | 'json';
  readonly region: string;
  /** Deadline of one AWS call attempt. */
  readonly awsTimeoutMs: number;
}

/** Parses `skylift trace` arguments; throws UsageError for anything unusable. Pure given `env`. */
export function parseTraceArgs(argv: readonly string[], env: NodeJS.ProcessEnv): TraceArgs | 'help' {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return 'help';
  const [target, ...extra] = positionals;
  if (target === undefined || extra.length > 0) throw new UsageError('trace: want exactly one KIND/NAME');
  const slash = target.indexOf('/');
  if (slash <= 0 || slash === target.length - 1)
    throw new UsageError(`trace: want KIND/NAME, got ${JSON.stringify(target)}`);
  const kindWord = target.slice(0, slash);
  const module = kindNamed(kindWord);
  if (module === undefined) {
    const known = kinds.map((k) => k.names.slice(0, 3).join('|')).join(', ');
    throw new UsageError(`trace: unknown kind ${JSON.stringify(kindWord)}; known: ${known}`);
  }
  const output = values.output ?? 'tree';
  if (output !== 'tree' && output !== 'json')
    throw new UsageError(`trace: -o wants tree or json, got ${JSON.stringify(output)}`);
  const region = values.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  if (region === undefined) throw new UsageError('trace: no AWS region: set --region or AWS_REGION');
  const given = new Map(Object.entries(values));
  const kind = configureKinds((f) => {
    const v = given.get(f.name);
    return typeof v === 'string' ? v : undefined;
  }).find((k) => k.module === module);
  if (kind === undefined) throw new UsageError(`trace: kind ${module.type.kind} is not configured`);
  const awsTimeoutMs = parseDuration(values['aws-timeout'] ?? nonEmpty(env.SKYLIFT_AWS_TIMEOUT) ?? '10s');
  if (awsTimeoutMs <= 0) throw new UsageError('trace: --aws-timeout wants a duration above zero, e.g. 10s');
  return {
    kind,
    name: target.slice(slash + 1),
    namespace: values.namespace,
    kubeconfig: values.kubeconfig,
    output,
    region,
    awsTimeoutMs,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      kubeconfig: { type: 'string' },
      'aws-timeout': { type: 'string' },
      output: { type: 'string', short: 'o' },
      region: { type: 'string' },
      ...kindFlagOptions(),
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v !== '' ? v : undefined;
}

/**
 * Runs `skylift trace`: prints the tree (or JSON `{ ready, tree }`) and
 * returns 0 when everything is Ready, 1 otherwise or when the resource does
 * not exist. Throws UsageError for bad arguments (exit 2).
 */
export async function runTrace(argv: readonly string[]): Promise<number> {
  const args = parseTraceArgs(argv, process.env);
  if (args === 'help') {
    process.stdout.write(traceUsage);
    return 0;
  }
  const kc = loadKubeconfig(args.kubeconfig);
  const namespace = args.namespace ?? kc.namespace ?? 'default';
  const kube = new KubeClient(kc);
  let obj: ManagedObject;
  try {
    obj = await kube.get<ManagedObject>(resourcePath(args.kind.module.type, { namespace, name: args.name }));
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) {
      const where = args.kind.module.type.namespaced ? `${namespace}/${args.name}` : args.name;
      process.stderr.write(`skylift: ${args.kind.module.type.kind} ${where} not found\n`);
      return 1;
    }
    throw err;
  }
  // One retry and a short deadline: a person is waiting, and a silent endpoint shows as an error line.
  const aws = createAwsClients({
    region: args.region,
    clock: realClock,
    metrics: new Metrics(),
    maxAttempts: 2,
    requestTimeoutMs: args.awsTimeoutMs,
  });
  let tree: TraceNode;
  try {
    const now = Date.now();
    tree = resourceNode(args.kind.module.type.kind, obj, now, await args.kind.trace(obj, { kube, aws, now }));
  } finally {
    aws.destroy();
  }
  const ready = allReady(tree);
  process.stdout.write(
    args.output === 'json' ? `${JSON.stringify({ ready, tree }, null, 2)}\n` : renderTree(tree),
  );
  return ready ? 0 : 1;
}
