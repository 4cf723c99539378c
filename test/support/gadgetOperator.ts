// An operator process serving the Gadget test kind, started by end-to-end
// tests exactly like `skylift run` (same flags, environment, plumbing), with
// its fake cloud in a file so it survives the process being killed.
//   GADGET_CLOUD_FILE=…  GADGET_CRASH_AFTER_CREATE=1  node test/support/gadgetOperator.ts [skylift run flags]
import { sharedClient } from '../../src/runtime/adapter.ts';
import { parseRunOptions } from '../../src/operator/options.ts';
import { controllerOptions } from '../../src/kinds/controllerOptions.ts';
import type { KindModule } from '../../src/kinds/module.ts';
import { startOperator } from '../../src/operator/start.ts';
import { Controller } from '../../src/runtime/controller.ts';
import { FakeCloud, GadgetAdapter, gadgetType, type Gadget } from './gadget.ts';

const cloudFile = process.env.GADGET_CLOUD_FILE;
if (cloudFile === undefined) throw new Error('GADGET_CLOUD_FILE is required');
const cloud = new FakeCloud(cloudFile, { reuse: true });
if (process.env.GADGET_CRASH_AFTER_CREATE === '1') {
  // The worst moment: AWS has the resource, the CR does not know it yet.
  cloud.afterCreate = () => process.kill(process.pid, 'SIGKILL');
}

const gadgets: KindModule = {
  type: gadgetType,
  names: ['gadget', 'gadgets'],
  traceShows: 'nothing (a test kind)',
  fieldContract: {},
  crd: () => {
    throw new Error('the tests install the Gadget CRD themselves');
  },
  flags: [],
  configure: () => ({
    module: gadgets,
    controller: (s) =>
      new Controller<Gadget>({
        type: gadgetType,
        connector: sharedClient(new GadgetAdapter(cloud)),
        ...controllerOptions(s),
        pollMs: 200,
        createGraceMs: 3000,
      }),
    trace: () => Promise.resolve([]),
  }),
  devFlags: [],
  commands: [],
  summarize: () => [],
};

const op = startOperator(parseRunOptions(process.argv.slice(2), process.env, [gadgets]), {
  leaseTiming: { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 },
});
const exit = await op.done;
process.exitCode = exit === 'lost-leadership' ? 1 : 0;
