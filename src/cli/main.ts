#!/usr/bin/env node
// The `skylift` command.
import { kinds } from '../kinds/registry.ts';
import { startOperator } from '../operator.ts';
import { KubeApiError, KubeResponseError, KubeUnreachableError } from '../runtime/kube/client.ts';
import { KubeconfigError, KubeCredentialError } from '../runtime/kube/kubeconfig.ts';
import { SettingsError } from '../runtime/settings.ts';
import { parseRunOptions, runUsage } from './options.ts';
import { runTrace } from './trace.ts';

const kindCommands = kinds.flatMap((k) => k.commands);

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
${kindCommands.map((c) => `${c.usage}\n`).join('')}  help                                  show this text
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run': {
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(runUsage);
        return 0;
      }
      const op = startOperator(parseRunOptions(rest, process.env));
      const exit = await op.done;
      // Whatever still hangs after the shutdown (a request to an apiserver that never answers)
      // must not keep the process up; this timer only fires if something does.
      setTimeout(() => process.exit(), 1000).unref();
      // Losing the lease means another replica may already be reconciling: exit non-zero and let Kubernetes restart us.
      return exit === 'lost-leadership' ? 1 : 0;
    }
    case 'dev': {
      // Loaded only here: `skylift run` never holds the local stack's code (and the yaml parser) in memory.
      const { runDev } = await import('../dev/main.ts');
      return runDev(rest);
    }
    case 'trace':
      return runTrace(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return command === undefined ? 2 : 0;
    default: {
      const own = kindCommands.find((c) => c.name === command);
      if (own !== undefined) return own.run(rest);
      process.stderr.write(`skylift: unknown command ${JSON.stringify(command)}\n\n${usage}`);
      return 2;
    }
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof SettingsError) {
    process.stderr.write(`skylift: ${err.message}\n`);
    process.exitCode = 2;
  } else if (err instanceof KubeApiError) {
    process.stderr.write(`skylift: the Kubernetes API refused: ${err.message}\n`);
    process.exitCode = 1;
  } else if (
    err instanceof KubeconfigError ||
    err instanceof KubeCredentialError ||
    err instanceof KubeResponseError
  ) {
    process.stderr.write(`skylift: ${err.message}\n`);
    process.exitCode = 1;
  } else if (err instanceof KubeUnreachableError) {
    process.stderr.write(
      `skylift: ${err.message}: check --kubeconfig or KUBECONFIG, and that the cluster is up\n`,
    );
    process.exitCode = 1;
  } else {
    process.stderr.write(`skylift: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}
