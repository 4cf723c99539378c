// The import arrows that must never exist between src/'s folders, checked on
// the text of every .ts file under src/ and tools/ (tools/ may import src/;
// src/ may not import tools/). A failing rule prints each offending file and
// line, the import and the rule it breaks.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../dev/paths.ts';
import {
  checkImports,
  extractImports,
  formatViolation,
  matchPattern,
  opaqueDynamicImports,
  readSourceFiles,
  resolveImport,
  type ImportRule,
  type SourceFile,
} from '../support/importRules.ts';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const dependencies = Object.keys(pkg.dependencies);
const devOnly = Object.keys(pkg.devDependencies).filter((name) => !dependencies.includes(name));

/** The arrows that must never exist. Patterns are described on ImportRule. */
const rules: readonly ImportRule[] = [
  {
    name: 'apis → anything outside apis',
    reason: 'src/apis/ holds the API types and pure helpers everything shares: they are leaves',
    from: ['src/apis/'],
    to: ['**'],
    except: ['src/apis/'],
  },
  {
    name: 'runtime → kinds',
    reason: 'the engine is generic; kinds plug into it through the KindModule contract, never the reverse',
    from: ['src/runtime/'],
    to: ['src/kinds/'],
  },
  {
    name: 'runtime → providers',
    reason: 'the engine knows nothing of AWS; providers build on the runtime, not the reverse',
    from: ['src/runtime/'],
    to: ['src/providers/'],
  },
  {
    name: 'runtime → anything in src/ but runtime and apis',
    reason:
      'the engine may import only src/apis/ and itself: not trace/, cli/, dev/, operator.ts, nor a new folder',
    from: ['src/runtime/'],
    to: ['src/'],
    except: ['src/runtime/', 'src/apis/'],
  },
  {
    name: 'providers → kinds',
    reason: 'providers are AWS plumbing shared by the kinds; a kind uses them, not the reverse',
    from: ['src/providers/'],
    to: ['src/kinds/'],
  },
  {
    name: 'providers → cli, dev, trace, operator',
    reason: 'providers may import only src/runtime/, src/apis/ and themselves',
    from: ['src/providers/'],
    to: ['src/cli/', 'dev/', 'src/trace/', 'src/operator/'],
  },
  {
    name: 'kinds → cli, dev, operator',
    reason: 'the process wiring and the commands import the kinds, not the reverse',
    from: ['src/kinds/'],
    to: ['src/cli/', 'dev/', 'src/operator/'],
  },
  {
    name: 'kind → another kind (except its api.ts)',
    reason: 'a kind folder is self-contained; another kind is reachable only through its API types (api.ts)',
    from: ['src/kinds/$kind/'],
    to: ['src/kinds/*/'],
    except: ['src/kinds/$kind/', 'src/kinds/*/api.ts'],
  },
  {
    name: 'kind → src/ beyond runtime, providers, apis, trace, tenancy, kinds/module.ts, kinds/controllerOptions.ts',
    reason: 'a kind plugs in through the KindModule contract; the registry and everything else import it',
    from: ['src/kinds/$kind/'],
    to: ['src/'],
    except: [
      'src/runtime/',
      'src/providers/',
      'src/apis/',
      'src/trace/',
      'src/tenancy/',
      'src/kinds/module.ts',
      'src/kinds/controllerOptions.ts',
      // AWS refusals in a spec's terms: the kinds' refusal tables' shared half.
      'src/kinds/refusals.ts',
      // Kind folders: the rule above says which of their files.
      'src/kinds/*/',
    ],
  },
  {
    name: 'tenancy → kinds, cli, dev, trace, operator',
    reason:
      'src/tenancy/ (TeamPolicies: which policy serves a namespace, its AWS identity, the connector) is shared by every kind; a kind brings its own guardrail checks',
    from: ['src/tenancy/'],
    to: ['src/kinds/', 'src/cli/', 'dev/', 'src/trace/', 'src/operator/'],
  },
  {
    name: 'trace → kinds, cli, dev',
    reason: 'src/trace/ is the generic part of `skylift trace`; each kind brings its own trace.ts',
    from: ['src/trace/'],
    to: ['src/kinds/', 'src/cli/', 'dev/'],
  },
  {
    name: 'product (src/) → tools, test, bench, hack',
    reason: 'those are development tooling; dist/ is built from src/ alone',
    from: ['src/'],
    to: ['tools/', 'test/', 'bench/', 'hack/'],
  },
  {
    name: 'src → devDependency',
    reason: 'the image installs dependencies only (even `import type` ties src/ to a tool)',
    from: ['src/'],
    to: devOnly.map((name) => `npm:${name}`),
  },
  {
    name: 'src → @kubernetes/client-node',
    reason:
      'importing it cost the operator process ~73 MiB RSS (issue 16): src/runtime/kube/ reads kubeconfigs and authenticates on its own (test/unit/operatorImports.test.ts checks what the process loads)',
    from: ['src/'],
    to: ['npm:@kubernetes/client-node'],
  },
  {
    name: 'src → undici',
    reason:
      'importing it cost the operator process ~28 MiB RSS (issue 16): src/runtime/kube/transport.ts speaks node:https (test/unit/operatorImports.test.ts checks what the process loads)',
    from: ['src/'],
    to: ['npm:undici'],
  },
  {
    name: 'src → package not in dependencies',
    reason:
      'a package src/ imports must be declared in package.json `dependencies`, not reached transitively',
    from: ['src/'],
    to: ['npm:*'],
    except: dependencies.map((name) => `npm:${name}`),
  },
];

const files = readSourceFiles(repoRoot, ['src', 'dev', 'tools'], '.ts');

describe('architecture: the import arrows that must never exist', () => {
  it.each(rules)('$name', (rule) => {
    expect(checkImports(files, [rule]).map(formatViolation), `${rule.name}: ${rule.reason}`).toEqual([]);
  });

  it('the rules are not vacuous: every rule applies to some file, and every folder or file it names exists', () => {
    for (const rule of rules) {
      expect(
        files.some((f) => rule.from.some((p) => matchPattern(p, f.path) !== undefined)),
        `${rule.name} applies to no file`,
      ).toBe(true);
      for (const pattern of [...rule.from, ...rule.to, ...(rule.except ?? [])]) {
        if (pattern === '**' || pattern.startsWith('npm:') || /(^|\/)[*$]/.test(pattern)) continue;
        expect(existsSync(join(repoRoot, pattern)), `${rule.name} names ${pattern}`).toBe(true);
      }
    }
    expect(devOnly).toContain('vitest');
  });

  it('every relative import names a file that exists (so the rules see where it points)', () => {
    const present = new Set(files.map((f) => f.path));
    const missing = files.flatMap((f) =>
      extractImports(f.text)
        .map((ref) => ({ ref, target: resolveImport(f.path, ref.specifier) }))
        .filter(({ target }) => target.kind === 'file' && !present.has(target.path))
        .map(({ ref }) => `${f.path}:${ref.line} imports '${ref.specifier}'`),
    );
    expect(missing).toEqual([]);
    expect(files.reduce((n, f) => n + extractImports(f.text).length, 0)).toBeGreaterThan(files.length);
  });

  it('every dynamic import names its module with a string literal (an opaque one escapes the rules)', () => {
    const opaque = files.flatMap((f) => opaqueDynamicImports(f.text).map((line) => `${f.path}:${line}`));
    expect(opaque).toEqual([]);
  });
});

describe('the import checker', () => {
  it('reports forbidden imports in a set of fake files, and only those', () => {
    const fakes: SourceFile[] = [
      { path: 'src/runtime/engine.ts', text: "import { kinds } from '../kinds/registry.ts';\n" },
      {
        path: 'src/kinds/dnsrecord/controller.ts',
        text: [
          "import { myIngressType } from '../myingress/api.ts';",
          "import type { Desired } from '../myingress/desired.ts';",
          "import { dnsRecordType } from './api.ts';",
          "import { kinds } from '../registry.ts';",
          '',
        ].join('\n'),
      },
      { path: 'src/apis/meta.ts', text: "export { systemClock } from '../runtime/clock.ts';\n" },
      {
        path: 'src/providers/aws/clients.ts',
        text: "// import { x } from '../../kinds/registry.ts';\nconst flags = await import(\n  '../../../tools/nodeFlags.ts'\n);\n",
      },
      { path: 'src/cli/main.ts', text: "import {\n  describe,\n  it,\n} from 'vitest';\nimport 'pino';\n" },
      { path: 'tools/generate.ts', text: "import { kinds } from '../src/kinds/registry.ts';\n" },
    ];
    const found = checkImports(fakes, rules).map((v) => `${v.file}:${v.line} ${v.specifier} | ${v.rule}`);
    expect(found).toEqual([
      'src/runtime/engine.ts:1 ../kinds/registry.ts | runtime → kinds',
      'src/runtime/engine.ts:1 ../kinds/registry.ts | runtime → anything in src/ but runtime and apis',
      'src/kinds/dnsrecord/controller.ts:2 ../myingress/desired.ts | kind → another kind (except its api.ts)',
      'src/kinds/dnsrecord/controller.ts:4 ../registry.ts | kind → src/ beyond runtime, providers, apis, trace, tenancy, kinds/module.ts, kinds/controllerOptions.ts',
      'src/apis/meta.ts:1 ../runtime/clock.ts | apis → anything outside apis',
      'src/providers/aws/clients.ts:2 ../../../tools/nodeFlags.ts | product (src/) → tools, test, bench, hack',
      'src/cli/main.ts:1 vitest | src → devDependency',
      'src/cli/main.ts:1 vitest | src → package not in dependencies',
    ]);
    const first = checkImports(fakes, rules)[0];
    expect(first && formatViolation(first)).toBe(
      `src/runtime/engine.ts:1 imports '../kinds/registry.ts' (src/kinds/registry.ts): breaks "runtime → kinds": ${rules[1]?.reason ?? ''}`,
    );
  });

  it('reads every import form, and none from comments', () => {
    const text = [
      '// import { a } from "./commented.ts";',
      '/* const b = await import("./commented.ts"); */',
      "import type { A } from './a.ts';",
      "import x, { y } from './b.ts';",
      "import * as ns from 'node:fs/promises';",
      "import './side.ts';",
      "export * from './c.ts';",
      "export { d as e } from '@scope/pkg/sub';",
      "type T = typeof import('./d.ts');",
      'const m = await import("./e.js");',
      'const n = await import(name);',
      "const s = 'import from here';",
    ].join('\n');
    expect(extractImports(text).map((r) => `${r.line} ${r.form} ${r.specifier}`)).toEqual([
      '3 import ./a.ts',
      '4 import ./b.ts',
      '5 import node:fs/promises',
      '6 import ./side.ts',
      '7 export ./c.ts',
      '8 export @scope/pkg/sub',
      '9 dynamic ./d.ts',
      '10 dynamic ./e.js',
    ]);
    expect(opaqueDynamicImports(text)).toEqual([11]);
    expect(resolveImport('src/kinds/dnsrecord/a.ts', '../myingress/api.ts')).toEqual({
      kind: 'file',
      path: 'src/kinds/myingress/api.ts',
    });
    expect(resolveImport('src/a.ts', '@scope/pkg/sub')).toEqual({ kind: 'package', name: '@scope/pkg' });
    expect(resolveImport('src/a.ts', 'pino')).toEqual({ kind: 'package', name: 'pino' });
  });
});
