// Preloaded with `node --import` by test/unit/operatorImports.test.ts: records the URL of every
// module the process resolves (ES imports and require() alike) and writes them, as a JSON list,
// to the file $SKYLIFT_LOADED_MODULES when the process exits.
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.SKYLIFT_LOADED_MODULES;
const seen = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    seen.add(resolved.url);
    return resolved;
  },
});
process.on('exit', () => {
  if (out !== undefined) writeFileSync(out, JSON.stringify([...seen]));
});
