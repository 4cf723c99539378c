// `skylift db snapshot|reboot|failover NAME`: asks the operator for a one-off
// operation through the request annotation (carried out once).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { requestAnnotation } from '../../apis/managed.ts';
import { resourcePath } from '../../apis/meta.ts';
import { KubeApiError, KubeClient, loadKubeConfig } from '../../runtime/kube/client.ts';
import { SettingsError } from '../../runtime/settings.ts';
import type { KindCommand } from '../module.ts';
import { managedDbType } from './api.ts';

const synopsis = 'usage: skylift db snapshot|reboot|failover NAME [-n NAMESPACE] [--kubeconfig PATH]';

/** `skylift db`. */
export const dbCommand: KindCommand = {
  name: 'db',
  usage: `  db snapshot|reboot|failover NAME [-n NAMESPACE] [--kubeconfig PATH]
                                        ask the operator to snapshot, reboot or fail over a ManagedDB
                                        (carried out once; see status.lastRequest)`,
  run: requestDbOperation,
};

async function requestDbOperation(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new SettingsError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(
      `${synopsis}\n\nAsks the operator to snapshot, reboot or fail over a ManagedDB; it is carried out once (see status.lastRequest).\n`,
    );
    return 0;
  }
  const [action, name] = positionals;
  if (
    action === undefined ||
    !['snapshot', 'reboot', 'failover'].includes(action) ||
    name === undefined ||
    positionals.length !== 2
  ) {
    throw new SettingsError(synopsis);
  }
  const kc = loadKubeConfig(values.kubeconfig ?? process.env.KUBECONFIG);
  const namespace = values.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  try {
    await new KubeClient(kc).patch(
      resourcePath(managedDbType, { namespace, name }),
      { metadata: { annotations: { [requestAnnotation]: `${action} ${id}` } } },
      'merge',
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) {
      process.stderr.write(`skylift: manageddb ${namespace}/${name} not found\n`);
      return 1;
    }
    throw err;
  }
  process.stdout.write(
    `requested ${action} of manageddb ${namespace}/${name} (request ${id}); watch status.lastRequest\n`,
  );
  return 0;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      kubeconfig: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
