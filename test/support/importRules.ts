// Import arrows read with regular expressions rather than a compiler: the pure
// helpers behind test/unit/architecture.test.ts (which arrows may exist
// between src/'s folders) and test/e2e/image.test.ts (what the built dist/
// may import). Only the file listing touches the disk.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** A module's path (repository-relative, or relative to a tree such as dist/, with `/`) and text. */
export interface SourceFile {
  readonly path: string;
  readonly text: string;
}

/** One import found in a module's text. */
export interface ImportRef {
  /** The module specifier as written: './a.ts', 'node:fs', '@aws-sdk/client-rds/x'. */
  readonly specifier: string;
  /** 1-based line where the statement (or the `import(` call) starts. */
  readonly line: number;
  /** `import … from` / `import '…'`, `export … from`, or `import('…')` (also `typeof import('…')`). */
  readonly form: 'import' | 'export' | 'dynamic';
}

/** Where a specifier points. */
export type ImportTarget =
  /** A relative specifier, resolved against the importing file: a path in the same tree ('src/apis/meta.ts'). */
  | { readonly kind: 'file'; readonly path: string }
  /** A bare specifier: the package it names ('@aws-sdk/client-rds' for '@aws-sdk/client-rds/x'). */
  | { readonly kind: 'package'; readonly name: string }
  /** A `node:` builtin, as written ('node:fs/promises'). */
  | { readonly kind: 'builtin'; readonly name: string };

/**
 * An arrow that must not exist. Every pattern is one of:
 * - a folder, ending in '/' ('src/runtime/': every file below it), or one file ('src/operator/start.ts');
 *   a '*' segment matches any one path segment, and a '$name' segment matches one segment that
 *   must be the same wherever '$name' appears (it is bound by `from` for `to` and `except`, so
 *   'src/kinds/$kind/' in `except` means "the importing kind's own folder");
 * - '**': any file of the tree (not a package or a builtin);
 * - 'npm:<name>': that package; 'npm:*': any package.
 */
export interface ImportRule {
  /** Short name, 'runtime → kinds'. */
  readonly name: string;
  /** Why the arrow must not exist, printed with every offence. */
  readonly reason: string;
  /** Importing files the rule applies to. */
  readonly from: readonly string[];
  /** Forbidden targets. */
  readonly to: readonly string[];
  /** Targets that stay allowed although `to` matches them. */
  readonly except?: readonly string[];
}

/** One import that breaks a rule. */
export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  /** The resolved target: a path, 'npm:<name>' or 'node:<name>'. */
  readonly target: string;
  readonly rule: string;
  readonly reason: string;
}

// `import … from '…'` and `export … from '…'` at the start of a line (so not in
// a comment); the clause between keyword and `from` may span lines but never
// holds a quote, `;`, `=`, `(`, `)` or `:`, which keeps a match inside one statement.
const staticFrom = /^[ \t]*(import|export)\b[^'";=():]*?\bfrom\s*(['"])([^'"\n]+)\2/gm;
// `import '…'`: a module loaded for its side effects.
const sideEffect = /^[ \t]*import\s*(['"])([^'"\n]+)\1/gm;
// `import(` anywhere; group 2 is the specifier when it is a plain string literal.
const dynamicCall = /\bimport\s*\(\s*(?:(['"])([^'"\n]+)\1\s*[,)])?/g;

/** The 1-based line of a character offset. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Whether the line holding `index` is a comment line (`//`, `/*` or a ` * ` continuation). */
function inCommentLine(text: string, index: number): boolean {
  const start = text.lastIndexOf('\n', index - 1) + 1;
  const head = text.slice(start, index).trimStart();
  return head.startsWith('//') || head.startsWith('/*') || head.startsWith('*');
}

/**
 * The imports of a TypeScript or JavaScript module: static `import … from '…'`
 * (type-only ones too), `import '…'`, `export … from '…'` and `import('…')` with
 * a literal specifier, in source order. Statements must start their line, as
 * Prettier and tsc write them; dynamic imports on comment lines are skipped.
 * Pure.
 */
export function extractImports(text: string): ImportRef[] {
  const found: { index: number; ref: ImportRef }[] = [];
  for (const m of text.matchAll(staticFrom)) {
    const specifier = m[3] ?? '';
    found.push({
      index: m.index,
      ref: { specifier, line: lineAt(text, m.index), form: m[1] === 'export' ? 'export' : 'import' },
    });
  }
  for (const m of text.matchAll(sideEffect)) {
    found.push({
      index: m.index,
      ref: { specifier: m[2] ?? '', line: lineAt(text, m.index), form: 'import' },
    });
  }
  for (const m of text.matchAll(dynamicCall)) {
    const specifier = m[2];
    if (specifier === undefined || inCommentLine(text, m.index)) continue;
    found.push({ index: m.index, ref: { specifier, line: lineAt(text, m.index), form: 'dynamic' } });
  }
  return found.sort((a, b) => a.index - b.index).map((f) => f.ref);
}

/**
 * Lines holding an `import(…)` whose specifier is not a plain string literal
 * (`import(name)`, a template): imports no rule can see. Comment lines are skipped. Pure.
 */
export function opaqueDynamicImports(text: string): number[] {
  return [...text.matchAll(dynamicCall)]
    .filter((m) => m[2] === undefined && !inCommentLine(text, m.index))
    .map((m) => lineAt(text, m.index));
}

/** The package a bare specifier names: '@scope/name' or 'name', without a subpath. Pure. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/**
 * Where `specifier`, imported by the file at `fromPath`, points: relative
 * specifiers resolve against the importing file's folder (a result starting
 * with '../' left the tree). Pure.
 */
export function resolveImport(fromPath: string, specifier: string): ImportTarget {
  if (specifier.startsWith('node:')) return { kind: 'builtin', name: specifier };
  if (specifier.startsWith('./') || specifier.startsWith('../') || specifier.startsWith('/')) {
    const path = specifier.startsWith('/') ? specifier : posix.join(posix.dirname(fromPath), specifier);
    return { kind: 'file', path: posix.normalize(path) };
  }
  return { kind: 'package', name: packageName(specifier) };
}

/** A target as the string patterns match: its path, 'npm:<name>' or 'node:<name>'. Pure. */
export function targetKey(target: ImportTarget): string {
  switch (target.kind) {
    case 'file':
      return target.path;
    case 'package':
      return `npm:${target.name}`;
    case 'builtin':
      return target.name;
  }
}

type Bindings = Readonly<Record<string, string>>;

/**
 * Whether `key` (a path or a `targetKey`) matches `pattern` (see ImportRule),
 * given the '$name' segments bound so far: the bindings after the match, or
 * undefined when it does not match. Pure.
 */
export function matchPattern(pattern: string, key: string, bindings: Bindings = {}): Bindings | undefined {
  const isPackage = key.startsWith('npm:');
  const isBuiltin = key.startsWith('node:');
  if (pattern === '**') return isPackage || isBuiltin ? undefined : bindings;
  if (pattern === 'npm:*') return isPackage ? bindings : undefined;
  if (pattern.startsWith('npm:') || pattern.startsWith('node:'))
    return pattern === key ? bindings : undefined;
  if (isPackage || isBuiltin) return undefined;
  const folder = pattern.endsWith('/');
  const want = (folder ? pattern.slice(0, -1) : pattern).split('/');
  const have = key.split('/');
  if (folder ? have.length <= want.length : have.length !== want.length) return undefined;
  const bound: Record<string, string> = { ...bindings };
  for (const [i, segment] of want.entries()) {
    const actual = have[i] ?? '';
    if (segment === '*') continue;
    if (segment.startsWith('$')) {
      const earlier = bound[segment];
      if (earlier === undefined) bound[segment] = actual;
      else if (earlier !== actual) return undefined;
    } else if (segment !== actual) return undefined;
  }
  return bound;
}

/** The first pattern `key` matches, with its bindings; undefined if none. */
function firstMatch(patterns: readonly string[], key: string, bindings: Bindings): Bindings | undefined {
  for (const pattern of patterns) {
    const matched = matchPattern(pattern, key, bindings);
    if (matched !== undefined) return matched;
  }
  return undefined;
}

/**
 * Every import in `files` that breaks one of `rules`: its importing file
 * matches the rule's `from`, its target the rule's `to` and none of its
 * `except`. In file, line and rule order. Pure.
 */
export function checkImports(files: readonly SourceFile[], rules: readonly ImportRule[]): Violation[] {
  const out: Violation[] = [];
  for (const file of files) {
    const imports = extractImports(file.text);
    for (const rule of rules) {
      const bindings = firstMatch(rule.from, file.path, {});
      if (bindings === undefined) continue;
      for (const ref of imports) {
        const target = targetKey(resolveImport(file.path, ref.specifier));
        if (firstMatch(rule.to, target, bindings) === undefined) continue;
        if (firstMatch(rule.except ?? [], target, bindings) !== undefined) continue;
        out.push({
          file: file.path,
          line: ref.line,
          specifier: ref.specifier,
          target,
          rule: rule.name,
          reason: rule.reason,
        });
      }
    }
  }
  return out;
}

/**
 * Every import in a built tree (`files`' paths relative to its root) that
 * points outside what the tree runs with: a relative import of a file that is
 * not in `files`, a bare import of a package not in `packages` (package.json's
 * `dependencies`), or an `import(…)` no one can read. `node:` builtins are
 * always allowed. Pure.
 */
export function checkSelfContained(files: readonly SourceFile[], packages: readonly string[]): Violation[] {
  const present = new Set(files.map((f) => f.path));
  const allowed = new Set(packages);
  const out: Violation[] = [];
  for (const file of files) {
    for (const line of opaqueDynamicImports(file.text)) {
      out.push({
        file: file.path,
        line,
        specifier: '(not a string literal)',
        target: '?',
        rule: 'opaque dynamic import',
        reason: 'what it loads cannot be checked',
      });
    }
    for (const ref of extractImports(file.text)) {
      const target = resolveImport(file.path, ref.specifier);
      const base = { file: file.path, line: ref.line, specifier: ref.specifier, target: targetKey(target) };
      if (target.kind === 'file' && !present.has(target.path)) {
        out.push({
          ...base,
          rule: 'relative import of a missing file',
          reason: 'not a file of the built tree',
        });
      } else if (target.kind === 'package' && !allowed.has(target.name)) {
        out.push({
          ...base,
          rule: 'package not in dependencies',
          reason: 'devDependencies and undeclared packages are not installed',
        });
      }
    }
  }
  return out;
}

/** One line per violation: where, what, and which rule it breaks and why. Pure. */
export function formatViolation(v: Violation): string {
  return `${v.file}:${v.line} imports '${v.specifier}' (${v.target}): breaks "${v.rule}": ${v.reason}`;
}

/** The source file a compiled file comes from: 'cli/main.js' and 'cli/main.js.map' → 'cli/main.ts'; else undefined. Pure. */
export function compiledFrom(path: string): string | undefined {
  const m = /^(.*)\.js(?:\.map)?$/.exec(path);
  return m?.[1] === undefined ? undefined : `${m[1]}.ts`;
}

/** Every file below `dir`, as sorted paths relative to it with '/' separators. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(path);
    }
  };
  walk('');
  return out.sort();
}

/** The files ending in `extension` below each of `folders` (relative to `root`), with repository-relative paths. */
export function readSourceFiles(root: string, folders: readonly string[], extension: string): SourceFile[] {
  return folders.flatMap((folder) =>
    listFiles(join(root, folder))
      .filter((path) => path.endsWith(extension))
      .map((path) => ({ path: `${folder}/${path}`, text: readFileSync(join(root, folder, path), 'utf8') })),
  );
}

/**
 * A room of the house: a set of files with one job, and the only files and packages it may import
 * besides its own. Patterns are ImportRule's; a room's `files` may bind '$name' segments, which
 * `may` can then use ('src/kinds/$kind/' may import 'src/kinds/$kind/': its own folder).
 */
export interface Room {
  /** Its files ('src/runtime/', or one file), first match wins across the rooms. */
  readonly files: readonly string[];
  /** What the room is for, and why it may import only `may`: printed with every offence. */
  readonly why: string;
  /** Files it may import beyond its own. */
  readonly may: readonly string[];
  /** Packages it may import ('npm:<name>'; 'npm:*' for any). `node:` builtins are always allowed. */
  readonly packages: readonly string[];
}

/** The name of a room, with the '$name' segments of `files` bound to a file's: 'src/kinds/dnsrecord/'. Pure. */
function roomName(pattern: string, bindings: Bindings): string {
  return pattern
    .split('/')
    .map((segment) => (segment.startsWith('$') ? (bindings[segment] ?? segment) : segment))
    .join('/');
}

/** The room `path` belongs to (the first whose `files` match), with its bound name; undefined if none. Pure. */
export function roomOf(
  rooms: readonly Room[],
  path: string,
): { readonly room: Room; readonly name: string; readonly bindings: Bindings } | undefined {
  for (const room of rooms) {
    for (const pattern of room.files) {
      const bindings = matchPattern(pattern, path, {});
      if (bindings !== undefined) return { room, name: roomName(pattern, bindings), bindings };
    }
  }
  return undefined;
}

/**
 * Every import in `files` that its room does not allow: a file of the tree outside the room and
 * its `may`, or a package outside its `packages`. Files in no room are reported too (rule
 * 'no room'). In file and line order. Pure.
 */
export function checkRooms(files: readonly SourceFile[], rooms: readonly Room[]): Violation[] {
  const out: Violation[] = [];
  for (const file of files) {
    const home = roomOf(rooms, file.path);
    if (home === undefined) {
      out.push({
        file: file.path,
        line: 0,
        specifier: '',
        target: '',
        rule: 'no room',
        reason: 'every file belongs to one room of the table, which says what it may import',
      });
      continue;
    }
    const allowed = [...home.room.files, ...home.room.may, ...home.room.packages];
    for (const ref of extractImports(file.text)) {
      const target = resolveImport(file.path, ref.specifier);
      if (target.kind === 'builtin') continue;
      const key = targetKey(target);
      if (firstMatch(allowed, key, home.bindings) !== undefined) continue;
      out.push({
        file: file.path,
        line: ref.line,
        specifier: ref.specifier,
        target: key,
        rule: `${home.name} may import only its own files, ${[...home.room.may, ...home.room.packages].join(', ') || 'nothing else'}`,
        reason: home.room.why,
      });
    }
  }
  return out;
}

/** The arrows between rooms that `files` hold: room name → the room names it imports (never itself). Pure. */
export function roomArrows(files: readonly SourceFile[], rooms: readonly Room[]): Map<string, Set<string>> {
  const arrows = new Map<string, Set<string>>();
  for (const file of files) {
    const from = roomOf(rooms, file.path)?.name;
    if (from === undefined) continue;
    const out = arrows.get(from) ?? new Set<string>();
    arrows.set(from, out);
    for (const ref of extractImports(file.text)) {
      const target = resolveImport(file.path, ref.specifier);
      if (target.kind !== 'file') continue;
      const to = roomOf(rooms, target.path)?.name;
      if (to !== undefined && to !== from) out.add(to);
    }
  }
  return arrows;
}

/**
 * The cycles of a directed graph, one per strongly connected component of more than one node,
 * each as the sorted names of that component, in order of their first name. Pure.
 */
export function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      for (;;) {
        const top = stack.pop();
        if (top === undefined) break;
        onStack.delete(top);
        component.push(top);
        if (top === node) break;
      }
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return out.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}
