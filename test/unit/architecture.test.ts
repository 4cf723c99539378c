// The house's rooms and the only arrows each may have: an allow-list per room, checked on the
// text of every .ts file under src/, dev/, tools/, bench/ and test/. A file in no room, an import
// its room does not list, or a cycle between rooms fails, printing the file and line, the import
// and why the room is shaped so. docs/architecture.md draws the same table.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../dev/paths.ts';
import {
  checkImports,
  checkRooms,
  cyclesOf,
  extractImports,
  formatViolation,
  matchPattern,
  opaqueDynamicImports,
  readSourceFiles,
  resolveImport,
  roomArrows,
  roomOf,
  type ImportRule,
  type Room,
  type SourceFile,
} from '../support/importRules.ts';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const dependencies = Object.keys(pkg.dependencies);
const devOnly = Object.keys(pkg.devDependencies).filter((name) => !dependencies.includes(name));
const npm = (names: readonly string[]): string[] => names.map((name) => `npm:${name}`);
const awsSdks = dependencies.filter((name) => name.startsWith('@aws-sdk/'));
/** What the image installs, for the product's rooms. */
const shipped = npm(dependencies);
/** The engine and the process wiring know no AWS service: every dependency but the SDKs. */
const shippedWithoutAws = npm(dependencies.filter((name) => !awsSdks.includes(name)));
/** The workshop, tools, bench and tests: any declared package. */
const declared = npm([...dependencies, ...devOnly]);

/** The lower floors of the product, in the order they stack (each may import those after it). */
const apis = 'src/apis/';
const runtime = 'src/runtime/';
const providers = 'src/providers/';
const tenancy = 'src/tenancy/';
const trace = 'src/trace/';
const gatewayApi = 'src/gatewayapi/';
/** What every kind shares: the KindModule contract, controller settings, refusal explanations. */
const kindContract = ['src/kinds/module.ts', 'src/kinds/controllerOptions.ts', 'src/kinds/refusals.ts'];
const registry = 'src/kinds/registry.ts';
/** The workshop and tooling rooms any test may use. */
const product = 'src/';

/** The rooms, first match wins. Patterns as on ImportRule. */
const rooms: readonly Room[] = [
  {
    files: [apis],
    why: 'the API types and pure helpers every room shares: leaves, importing nothing',
    may: [],
    packages: [],
  },
  {
    files: [runtime],
    why: 'the generic engine knows neither a kind, an AWS service nor how the process is wired: kinds and providers plug into it',
    may: [apis],
    packages: shippedWithoutAws,
  },
  {
    files: [providers],
    why: 'AWS plumbing (clients, error tables, batchers, caches) knows AWS only: no custom resource, no kind, no spec field; it uses the engine’s generic utilities',
    may: [
      'src/runtime/clock.ts',
      'src/runtime/errors.ts',
      'src/runtime/backoff.ts',
      'src/runtime/tokenBucket.ts',
      'src/runtime/metrics.ts',
      'src/runtime/tracing.ts',
      'src/runtime/logger.ts',
      // The ownership stamp Skylift writes on AWS resources (tags, Route 53's ownership TXT record).
      'src/apis/managed.ts',
    ],
    packages: shipped,
  },
  {
    files: [tenancy],
    why: 'TeamPolicies (which policy serves a namespace, as whom, within what guardrails) are shared by every kind: a kind brings its own guardrail checks',
    may: [providers, runtime, apis],
    packages: shipped,
  },
  {
    files: [trace],
    why: 'the generic part of `skylift trace`; each kind brings its own collector',
    may: [providers, runtime, apis],
    packages: shipped,
  },
  {
    files: kindContract,
    why: 'the contract a kind implements (KindModule), the settings every kind’s controller takes, and how a kind explains an AWS refusal in its spec’s terms',
    may: [tenancy, trace, providers, runtime, apis],
    packages: shipped,
  },
  {
    files: ['src/kinds/$kind/'],
    why: 'a kind is self-contained: it plugs in through the KindModule contract, and reaches another kind only through its API types (api.ts)',
    may: ['src/kinds/*/api.ts', ...kindContract, tenancy, trace, providers, runtime, apis],
    packages: shipped,
  },
  {
    files: [registry],
    why: 'the list of kinds: what the process, the CLI and generation iterate',
    may: ['src/kinds/', tenancy, trace, providers, runtime, apis],
    packages: shipped,
  },
  {
    files: [gatewayApi],
    why: 'the Gateway API front end: controllers of the Gateway API’s own objects (GatewayClass now; Gateway and routes next, onto ALBs through the providers and under TeamPolicies), not a kind: no Skylift CRD, nothing the registry lists',
    may: [tenancy, providers, runtime, apis],
    packages: shipped,
  },
  {
    files: ['src/operator/'],
    why: 'the operator process: its options and its wiring of the registry’s kinds and the Gateway API front end onto the engine',
    may: [registry, ...kindContract, gatewayApi, tenancy, providers, runtime, apis],
    packages: shipped,
  },
  {
    files: ['src/cli/'],
    why: 'the `skylift` commands, on top of the product; the workshop is started as a process by path, never imported, so the image holds nothing of it',
    may: [product],
    packages: shipped,
  },
  {
    files: ['dev/'],
    why: 'the local-stack workshop (control plane, node cluster, moto, AWS proxy, Argo CD): builds on the product, never the reverse, and knows no test, bench or tool',
    may: [product],
    packages: declared,
  },
  {
    files: ['tools/'],
    why: 'generation and checks of the repository: read the registry and the workshop',
    may: [product, 'dev/'],
    packages: declared,
  },
  {
    files: ['bench/'],
    why: 'make bench and make chaos: run the product on the workshop; tests may reuse bench code, never the reverse',
    may: [product, 'dev/', 'tools/'],
    packages: declared,
  },
  {
    files: ['test/support/'],
    why: 'helpers shared by the test projects: anything a test needs but the bench',
    may: [product, 'dev/', 'tools/'],
    packages: declared,
  },
  {
    files: ['test/$project/'],
    why: 'a test project (unit, integration, e2e, node) uses everything below it, never another project',
    may: [product, 'dev/', 'tools/', 'bench/', 'test/support/'],
    packages: declared,
  },
];

/** Package arrows that must not exist although a room's list would allow them, and why. */
const packageRules: readonly ImportRule[] = [
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
];

const folders = ['src', 'dev', 'tools', 'bench', 'test'];
const files = readSourceFiles(repoRoot, folders, '.ts');

describe('architecture: each room imports only what its row allows', () => {
  it.each(rooms.map((room) => ({ name: room.files.join(', '), room })))('$name', ({ room }) => {
    const own = files.filter((f) => roomOf(rooms, f.path)?.room === room);
    expect(own.length, `${room.files.join(', ')} holds no file`).toBeGreaterThan(0);
    expect(checkRooms(own, rooms).map(formatViolation)).toEqual([]);
  });

  it.each(packageRules)('$name', (rule) => {
    expect(checkImports(files, [rule]).map(formatViolation), `${rule.name}: ${rule.reason}`).toEqual([]);
  });

  it('every file is in a room, and every folder or file the table names exists', () => {
    expect(files.filter((f) => roomOf(rooms, f.path) === undefined).map((f) => f.path)).toEqual([]);
    for (const room of rooms) {
      for (const pattern of [...room.files, ...room.may]) {
        if (/(^|\/)[*$]/.test(pattern)) continue;
        expect(existsSync(join(repoRoot, pattern)), `the table names ${pattern}`).toBe(true);
      }
    }
    expect(devOnly).toContain('vitest');
    expect(awsSdks).toContain('@aws-sdk/client-route-53');
  });

  it('no cycle between rooms (each kind, each test project a room of its own)', () => {
    const arrows = roomArrows(files, rooms);
    expect(cyclesOf(arrows)).toEqual([]);
    // The graph is not empty: the floors are there, and so are the arrows between them.
    expect(arrows.get('src/kinds/dnsrecord/')).toContain('src/kinds/myingress/');
    expect(arrows.get('test/unit/')).toContain('bench/');
    expect(arrows.get('src/runtime/')).toEqual(new Set(['src/apis/']));
  });

  it('every relative import names a file that exists (so the rooms see where it points)', () => {
    const present = new Set(files.map((f) => f.path));
    // This file's own fixtures are imports written in strings.
    const missing = files
      .filter((f) => f.path !== 'test/unit/architecture.test.ts')
      .flatMap((f) =>
        extractImports(f.text)
          .map((ref) => ({ ref, target: resolveImport(f.path, ref.specifier) }))
          .filter(
            ({ target }) =>
              target.kind === 'file' &&
              folders.some((d) => target.path.startsWith(`${d}/`)) &&
              !present.has(target.path),
          )
          .map(({ ref }) => `${f.path}:${ref.line} imports '${ref.specifier}'`),
      );
    expect(missing).toEqual([]);
    expect(files.reduce((n, f) => n + extractImports(f.text).length, 0)).toBeGreaterThan(files.length);
  });

  it('every dynamic import in the product and the workshop names its module with a string literal (an opaque one escapes the rooms)', () => {
    const opaque = files
      .filter((f) => f.path.startsWith('src/') || f.path.startsWith('dev/'))
      .flatMap((f) => opaqueDynamicImports(f.text).map((line) => `${f.path}:${line}`));
    expect(opaque).toEqual([]);
  });
});

describe('the import checker', () => {
  it('reports the imports a room does not allow in a set of fake files, and only those', () => {
    const fakes: SourceFile[] = [
      {
        path: 'src/runtime/engine.ts',
        text: "import { kinds } from '../kinds/registry.ts';\nimport pino from 'pino';\n",
      },
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
        text: "// import { x } from '../../kinds/registry.ts';\nconst flags = await import(\n  '../../tenancy/accounts.ts'\n);\n",
      },
      {
        path: 'src/cli/main.ts',
        text: "import {\n  describe,\n  it,\n} from 'vitest';\nimport '../../dev/main.ts';\n",
      },
      { path: 'test/support/x.ts', text: "import { run } from '../../bench/run.ts';\n" },
      {
        path: 'test/unit/x.test.ts',
        text: "import { run } from '../../bench/run.ts';\nimport '../e2e/y.ts';\n",
      },
      { path: 'hack/x.ts', text: '' },
    ];
    const found = checkRooms(fakes, rooms).map((v) => `${v.file}:${v.line} ${v.target}`);
    expect(found).toEqual([
      'src/runtime/engine.ts:1 src/kinds/registry.ts',
      'src/kinds/dnsrecord/controller.ts:2 src/kinds/myingress/desired.ts',
      'src/kinds/dnsrecord/controller.ts:4 src/kinds/registry.ts',
      'src/apis/meta.ts:1 src/runtime/clock.ts',
      'src/providers/aws/clients.ts:2 src/tenancy/accounts.ts',
      'src/cli/main.ts:1 npm:vitest',
      'src/cli/main.ts:5 dev/main.ts',
      'test/support/x.ts:1 bench/run.ts',
      'test/unit/x.test.ts:2 test/e2e/y.ts',
      'hack/x.ts:0 ',
    ]);
    const first = checkRooms(fakes, rooms)[0];
    expect(first && formatViolation(first)).toBe(
      `src/runtime/engine.ts:1 imports '../kinds/registry.ts' (src/kinds/registry.ts): breaks "src/runtime/ may import only its own files, src/apis/, ${shippedWithoutAws.join(', ')}": ${rooms[1]?.why ?? ''}`,
    );
  });

  it('finds cycles between rooms, and none in a chain', () => {
    const graph = (edges: string): Map<string, Set<string>> => {
      const g = new Map<string, Set<string>>();
      for (const edge of edges.split(' ')) {
        const [a = '', b = ''] = edge.split('>');
        g.set(a, (g.get(a) ?? new Set()).add(b));
        if (!g.has(b)) g.set(b, new Set());
      }
      return g;
    };
    expect(cyclesOf(graph('a>b b>c c>d'))).toEqual([]);
    expect(cyclesOf(graph('a>b b>c c>a c>d d>e e>d'))).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
    expect(
      roomArrows(
        [
          { path: 'bench/run.ts', text: "import '../test/support/a.ts';\n" },
          { path: 'test/support/a.ts', text: "import '../../bench/run.ts';\n" },
        ],
        rooms,
      ),
    ).toEqual(
      new Map([
        ['bench/', new Set(['test/support/'])],
        ['test/support/', new Set(['bench/'])],
      ]),
    );
    expect(roomOf(rooms, 'src/kinds/myingress/adapter.ts')?.name).toBe('src/kinds/myingress/');
    expect(roomOf(rooms, 'test/e2e/a.test.ts')?.name).toBe('test/e2e/');
    expect(matchPattern('test/$project/', 'test/support/a.ts')).toEqual({ $project: 'support' });
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
