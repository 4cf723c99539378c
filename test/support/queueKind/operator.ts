// `skylift run` with the Queue kind in the registry (registry.ts): the operator process as it is
// once a kind's line is in src/kinds/registry.ts. test/integration/newKind.test.ts starts it the
// way end-to-end tests start `skylift run` (test/support/skyliftProcess.ts, as its entry):
//   node test/support/queueKind/operator.ts run [skylift run flags]
import { parseRunOptions } from '../../../src/operator/options.ts';
import { startOperator } from '../../../src/operator/start.ts';
import { kindsWithQueue } from './registry.ts';

const [command, ...args] = process.argv.slice(2);
if (command !== 'run')
  throw new Error('usage: node test/support/queueKind/operator.ts run [skylift run flags]');
const op = startOperator(parseRunOptions(args, process.env, kindsWithQueue));
const exit = await op.done;
// As src/cli/main.ts: whatever still hangs after the shutdown must not keep the process up.
setTimeout(() => process.exit(), 1000).unref();
process.exitCode = exit === 'lost-leadership' ? 1 : 0;
