// Preloaded with `node --import` by test/unit/operatorImports.test.ts and the tests of what an
// operator process loads: records the URL of every module the process resolves (ES imports and
// require() alike) and writes them, as a JSON list, to the file $SKYLIFT_LOADED_MODULES when the
// process exits. With $SKYLIFT_LOADED_MODULES_LOG set, it also appends each URL to that file, one
// a line, the moment it is first resolved: a test can read what a running process has loaded.
import { appendFileSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.SKYLIFT_LOADED_MODULES;
const log = process.env.SKYLIFT_LOADED_MODULES_LOG;
const seen = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (!seen.has(resolved.url)) {
      seen.add(resolved.url);
      if (log !== undefined) appendFileSync(log, `${resolved.url}\n`);
    }
    return resolved;
  },
});
process.on('exit', () => {
  if (out !== undefined) writeFileSync(out, JSON.stringify([...seen]));
});
