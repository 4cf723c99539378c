#!/usr/bin/env node
// The workshop's entry point: `node dev/cli.ts [flags]` is `skylift dev` (make dev runs it
// directly; a clone's `skylift dev` starts it as a child process). Never part of the image.
import { describeFailure } from '../src/cli/failure.ts';
import { runDev } from './main.ts';

// Started by `skylift dev` (an IPC channel to it): when that process goes, even SIGKILLed, stop
// as on Ctrl-C, so the stack never outlives the command the user ran. The channel alone keeps
// nothing running.
if (process.channel !== undefined) {
  process.channel.unref();
  process.once('disconnect', () => {
    process.kill(process.pid, 'SIGTERM');
  });
}

try {
  process.exitCode = await runDev(process.argv.slice(2));
} catch (err) {
  const { message, exitCode } = describeFailure(err);
  process.stderr.write(message);
  process.exitCode = exitCode;
}
