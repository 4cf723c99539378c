#!/usr/bin/env node
// The `skylift` command.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { kinds } from '../kinds/registry.ts';
import { parseRunOptions, runUsage } from '../operator/options.ts';
import { startOperator } from '../operator/start.ts';
import { describeFailure } from './failure.ts';
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

/**
 * `skylift dev` runs the local-stack workshop, which lives beside `src/` in a clone (`dev/cli.ts`)
 * and is never compiled into the image: started as a child process by its path, so nothing in
 * `src/` imports it. From a build (`dist/`, the image) it says where to run it instead. The child
 * has its own process group, so Ctrl-C reaches it once, passed on from here (a second one forces
 * it to exit before stopping what it started), and an IPC channel, whose end tells it this process
 * died; resolves with its exit code.
 */
function runDevFromClone(argv: readonly string[]): Promise<number> {
  const entry = fileURLToPath(new URL('../../dev/cli.ts', import.meta.url));
  if (!import.meta.url.endsWith('.ts') || !existsSync(entry)) {
    process.stderr.write(
      'skylift: dev runs the local stack from a clone of the repository (make dev); this build holds only the operator\n',
    );
    return Promise.resolve(2);
  }
  // The IPC channel is how the child learns that this process is gone, even by SIGKILL: it then
  // stops what it started as on Ctrl-C (dev/cli.ts).
  const child = spawn(process.execPath, [...process.execArgv, entry, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  const passOn = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  process.on('SIGINT', passOn);
  process.on('SIGTERM', passOn);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`skylift: cannot start ${entry}: ${err.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', passOn);
      process.off('SIGTERM', passOn);
      resolve(code ?? (signal === null ? 1 : 128 + constants.signals[signal]));
    });
  });
}

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
    case 'dev':
      return runDevFromClone(rest);
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
  const { message, exitCode } = describeFailure(err);
  process.stderr.write(message);
  process.exitCode = exitCode;
}
