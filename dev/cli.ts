#!/usr/bin/env node
// The workshop's entry point: `node dev/cli.ts [flags]` is `skylift dev` (make dev runs it
// directly; a clone's `skylift dev` starts it as a child process). Never part of the image.
import { describeFailure } from '../src/cli/failure.ts';
import { runDev } from './main.ts';

try {
  process.exitCode = await runDev(process.argv.slice(2));
} catch (err) {
  const { message, exitCode } = describeFailure(err);
  process.stderr.write(message);
  process.exitCode = exitCode;
}
