// `skylift db snapshot|reboot|failover NAME`: asks the operator for a one-off
// operation through the request annotation (carried out once), and waits a
// bounded time for the operator to acknowledge it.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { requestAnnotation } from '../../apis/managed.ts';
import { resourcePath } from '../../apis/meta.ts';
import { rdsAvailableStates } from '../../providers/rds/states.ts';
import {
  KubeApiError,
  KubeClient,
  KubeUnreachableError,
  kubeRequestTimeoutMs,
} from '../../runtime/kube/client.ts';
import { loadKubeconfig } from '../../runtime/kube/kubeconfigLoad.ts';
import { formatDuration, parseDuration, SettingsError } from '../../runtime/settings.ts';
import type { KindCommand } from '../module.ts';
import { managedDbType, type ManagedDB } from './api.ts';
import { isRefusal, onDemandActions, requestDoneAnnotation, requestState } from './requests.ts';

/** Exit codes of `skylift db` (2, a usage error, is every command's). */
export const dbExitCode = {
  /** The operator acknowledged the request and carried it out (or started it). */
  Done: 0,
  /** The operator refused the request, the request was replaced, or the ManagedDB is gone or unreachable. */
  Failed: 1,
  /** No operator acknowledged the request within --wait; it stays on the object. */
  Pending: 3,
} as const;

/** How long `skylift db` waits for the operator by default. */
export const defaultDbWaitMs = 30_000;
const pollMs = 500;

const synopsis =
  'usage: skylift db snapshot|reboot|failover NAME [-n NAMESPACE] [--kubeconfig PATH] [--wait DURATION | --no-wait]';

/** `skylift db`. */
export const dbCommand: KindCommand = {
  name: 'db',
  usage: `  db snapshot|reboot|failover NAME [-n NAMESPACE] [--kubeconfig PATH] [--wait DURATION | --no-wait]
                                        ask the operator to snapshot, reboot or fail over a ManagedDB
                                        (carried out once) and wait up to --wait (default ${formatDuration(defaultDbWaitMs)})
                                        for its answer; exit 3 if no operator acknowledged it
`.trimEnd(),
  run: requestDbOperation,
};

const help = `${synopsis}

Asks the operator to snapshot, reboot or fail over a ManagedDB by setting the
annotation ${requestAnnotation}: "<action> <id>". The operator carries it out
once and records "<id> <result>" in ${requestDoneAnnotation} (and
status.lastRequest). The command waits for that and prints the outcome in one line.

  -n, --namespace NAMESPACE   the ManagedDB's namespace (default: the context's, else default)
  --kubeconfig PATH           kubeconfig (default: KUBECONFIG, else ~/.kube/config)
  --wait DURATION             how long to wait for the operator (default ${formatDuration(defaultDbWaitMs)}; e.g. 90s, 5m;
                              0s is --no-wait)
  --no-wait                   set the annotation and exit 0 without waiting

Exit status:
  0  the operator carried the request out (or started it: a snapshot or reboot takes a while)
  1  the operator refused it (e.g. failover of a single-AZ instance), another request replaced it,
     the ManagedDB does not exist, or the API server cannot be reached
  2  a usage error
  3  still pending after --wait: no operator acknowledged it. The request stays on the object and is
     carried out when an operator watching the namespace picks it up (skylift trace shows it)
`;

async function requestDbOperation(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new SettingsError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(help);
    return 0;
  }
  const [action, name] = positionals;
  if (
    action === undefined ||
    !(onDemandActions as readonly string[]).includes(action) ||
    name === undefined ||
    positionals.length !== 2
  ) {
    throw new SettingsError(synopsis);
  }
  if (values.wait !== undefined && values['no-wait'] === true)
    throw new SettingsError('--wait and --no-wait exclude each other');
  let waitMs = defaultDbWaitMs;
  if (values['no-wait'] === true) waitMs = 0;
  else if (values.wait !== undefined) {
    try {
      waitMs = parseDuration(values.wait);
    } catch (err) {
      throw new SettingsError(`--wait: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const kc = loadKubeconfig(values.kubeconfig);
  const namespace = values.namespace ?? kc.namespace ?? 'default';
  const kube = new KubeClient(kc);
  const path = resourcePath(managedDbType, { namespace, name });
  const what = `${action} of manageddb ${namespace}/${name}`;
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  // Every call to the apiserver ends by the end of --wait (with --no-wait, the client's own deadline).
  const deadline = Date.now() + waitMs;
  const callMs = (): number =>
    waitMs === 0 ? kubeRequestTimeoutMs : Math.min(kubeRequestTimeoutMs, Math.max(1, deadline - Date.now()));
  try {
    await kube.patch(
      path,
      { metadata: { annotations: { [requestAnnotation]: `${action} ${id}` } } },
      'merge',
      undefined,
      callMs(),
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) {
      process.stderr.write(`skylift: manageddb ${namespace}/${name} not found\n`);
      return dbExitCode.Failed;
    }
    throw err;
  }
  if (waitMs === 0) {
    process.stdout.write(`requested ${what} (request ${id}); watch status.lastRequest\n`);
    return dbExitCode.Done;
  }

  let last: ManagedDB | undefined;
  for (;;) {
    let mr: ManagedDB;
    try {
      mr = await kube.request<ManagedDB>('GET', path, { timeoutMs: callMs() });
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) {
        process.stderr.write(
          `skylift: manageddb ${namespace}/${name} was deleted before the operator acknowledged request ${id}\n`,
        );
        return dbExitCode.Failed;
      }
      // --wait ran out during this read: the request stands as the last read found it.
      if (err instanceof KubeUnreachableError && last !== undefined && Date.now() >= deadline) {
        process.stderr.write(`skylift: ${pendingLine(last, what, id, namespace, waitMs)}\n`);
        return dbExitCode.Pending;
      }
      throw err;
    }
    last = mr;
    const where = requestState(mr, id);
    if (where.state === 'done') {
      if (isRefusal(where.result)) {
        process.stderr.write(`skylift: ${what} (request ${id}): ${where.result}\n`);
        return dbExitCode.Failed;
      }
      process.stdout.write(`${what} (request ${id}): ${where.result}\n`);
      return dbExitCode.Done;
    }
    if (where.state === 'replaced') {
      process.stderr.write(
        `skylift: ${what} (request ${id}) was replaced before the operator acknowledged it: ${requestAnnotation} is now ${JSON.stringify(where.by)}\n`,
      );
      return dbExitCode.Failed;
    }
    if (Date.now() >= deadline) {
      process.stderr.write(`skylift: ${pendingLine(mr, what, id, namespace, waitMs)}\n`);
      return dbExitCode.Pending;
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
  }
}

/**
 * The one line for a request no operator acknowledged within the wait: the
 * annotation, that it stays, and what to check — the operator, or an
 * instance not available yet (requests wait for that). Pure.
 */
export function pendingLine(
  mr: ManagedDB,
  what: string,
  id: string,
  namespace: string,
  waitMs: number,
): string {
  const state = mr.status?.dbInstanceStatus;
  const busy =
    typeof state === 'string' && !rdsAvailableStates.includes(state)
      ? ` The instance is ${state}: the operator carries requests out once it is available.`
      : '';
  return `${what} (request ${id}) is still pending after ${formatDuration(waitMs)}: no operator acknowledged the annotation ${requestAnnotation}; is skylift running and watching namespace ${namespace}? The request stays and is carried out when an operator picks it up.${busy}`;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      kubeconfig: { type: 'string' },
      wait: { type: 'string' },
      'no-wait': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
