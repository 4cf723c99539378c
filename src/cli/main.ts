#!/usr/bin/env node
// The `skylift` command.
import { dnsRecordController } from '../controllers/dnsrecord/controller.ts';
import { managedDbController } from '../controllers/manageddb/controller.ts';
import { myIngressController } from '../controllers/myingress/controller.ts';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { managedDbType } from '../apis/manageddb.ts';
import { startOperator, type ControllerFactory } from '../operator.ts';
import { KubeClient, loadKubeConfig } from '../runtime/kube/client.ts';
import { resourcePath } from '../runtime/kube/resource.ts';
import { requestAnnotation } from '../runtime/managed.ts';
import { parseRunOptions, runUsage, UsageError } from './options.ts';
import { runDev } from '../dev/main.ts';
import { runTrace } from './trace/command.ts';

/** Controllers of the kinds Skylift serves; each kind's work adds its factory here. */
const controllers: readonly ControllerFactory[] = [
  (s) =>
    dnsRecordController(s, {
      ownerPrefix: s.options.txtOwnerPrefix,
      batchWindowMs: s.options.route53BatchWindowMs,
      zoneCacheTtlMs: s.options.route53ZoneCacheTtlMs,
      pollMs: 2000,
    }),
  (s) => myIngressController(s),
  (s) => managedDbController(s, { pollMs: s.options.rdsPollIntervalMs }),
];

const usage = `Usage: skylift <command> [flags]

Commands:
  run                                   run the operator (see skylift run --help)
  dev [--kubeconfig PATH] [--aws-endpoint URL] [--no-samples] [-n NAMESPACE]
                                        local control plane + AWS emulator (unless given), CRDs,
                                        the operator and the sample app, until Ctrl-C
                                        (see skylift dev --help)
  trace KIND/NAME [-n NAMESPACE] [--kubeconfig PATH] [-o tree|json]
                                        the resource, its conditions and the AWS resources behind
                                        it, described live; exit 0 when all Ready, 1 if not
                                        (see skylift trace --help)
  db snapshot|reboot|failover NAME [-n NAMESPACE] [--kubeconfig PATH]
                                        ask the operator to snapshot, reboot or fail over a ManagedDB
                                        (carried out once; see status.lastRequest)
  help                                  show this text
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run': {
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(runUsage);
        return 0;
      }
      const op = startOperator(parseRunOptions(rest, process.env), controllers);
      const exit = await op.done;
      // Losing the lease means another replica may already be reconciling: exit non-zero and let Kubernetes restart us.
      return exit === 'lost-leadership' ? 1 : 0;
    }
    case 'dev':
      return runDev(rest, controllers);
    case 'trace':
      return runTrace(rest);
    case 'db':
      return requestDbOperation(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`skylift: unknown command ${JSON.stringify(command)}\n\n${usage}`);
      return 2;
  }
}

async function requestDbOperation(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { namespace: { type: 'string', short: 'n' }, kubeconfig: { type: 'string' } },
  });
  const [action, name] = positionals;
  if (
    action === undefined ||
    !['snapshot', 'reboot', 'failover'].includes(action) ||
    name === undefined ||
    positionals.length !== 2
  ) {
    throw new UsageError(
      'usage: skylift db snapshot|reboot|failover NAME [-n NAMESPACE] [--kubeconfig PATH]',
    );
  }
  const kc = loadKubeConfig(values.kubeconfig ?? process.env.KUBECONFIG);
  const namespace = values.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  await new KubeClient(kc).patch(
    resourcePath(managedDbType, { namespace, name }),
    { metadata: { annotations: { [requestAnnotation]: `${action} ${id}` } } },
    'merge',
  );
  process.stdout.write(
    `requested ${action} of manageddb ${namespace}/${name} (request ${id}); watch status.lastRequest\n`,
  );
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`skylift: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`skylift: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}
