#!/usr/bin/env node
// The `skylift` command.
import { dnsRecordController } from '../controllers/dnsrecord/controller.ts';
import { managedDbController } from '../controllers/manageddb/controller.ts';
import { myIngressController } from '../controllers/myingress/controller.ts';
import { startOperator, type ControllerFactory } from '../operator.ts';
import { parseRunOptions, runUsage, UsageError } from './options.ts';

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
  run       run the operator (see skylift run --help)
  help      show this text
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
