#!/usr/bin/env node
// `make conformance` runs `node dev/conformanceCli.ts [--timeout 30m] [suite flags…]`: the Gateway
// API conformance suite against Skylift on a local node cluster (dev/conformance.ts). As root.
import { describeFailure } from '../src/cli/failure.ts';
import { runConformance } from './conformance.ts';

try {
  process.exitCode = await runConformance(process.argv.slice(2));
} catch (err) {
  const { message, exitCode } = describeFailure(err);
  process.stderr.write(message);
  process.exitCode = exitCode;
}
