// Every list of the kinds outside src/kinds/ follows the registry (src/kinds/registry.ts): the
// chart's templates name no kind (they read files/kinds.yaml, which make generate writes and
// test/unit/apis.test.ts keeps current), and each documentation table that lists the kinds names
// every kind of the registry and nothing else. A new kind that is missing from one fails here,
// naming the file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../../dev/paths.ts';
import { kinds } from '../../src/kinds/registry.ts';
import { chartKindGroups, chartKindsFile } from '../../tools/generatedFiles.ts';
import { kindsWithQueue } from '../support/queueKind/registry.ts';

/** A Markdown table: its header cells and its rows' cells, trimmed. */
interface Table {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** Every Markdown table in `text` (consecutive lines starting with `|`; the second is the rule). Pure. */
function tablesIn(text: string): Table[] {
  const tables: Table[] = [];
  let lines: string[] = [];
  const cells = (line: string): string[] =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((c) => c.trim());
  const flush = (): void => {
    const [header, , ...rows] = lines;
    if (header !== undefined) tables.push({ header: cells(header), rows: rows.map(cells) });
    lines = [];
  };
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('|')) lines.push(line);
    else flush();
  }
  flush();
  return tables;
}

/** The one table of `file` whose header is `header`; fails when there is none or several. */
function tableOf(file: string, header: readonly string[]): Table {
  const found = tablesIn(readFileSync(join(repoRoot, file), 'utf8')).filter(
    (t) => t.header.join('|') === header.join('|'),
  );
  expect(found, `${file}: one table with header | ${header.join(' | ')} |`).toHaveLength(1);
  return found[0] as Table;
}

/** The words in backticks in a cell, or the whole cell when it has none. Pure. */
function namesIn(cell: string): string[] {
  const quoted = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
  return quoted.length > 0 ? quoted : [cell];
}

const kindNames = kinds.map((k) => k.type.kind);

/** The documentation tables whose first column lists every kind, one row each. */
const kindTables: readonly { readonly file: string; readonly header: readonly string[] }[] = [
  { file: 'README.md', header: ['kind', 'AWS side', 'short name'] },
  { file: 'docs/product.md', header: ['kind', 'AWS side', 'short name'] },
  { file: 'docs/architecture.md', header: ['kind', 'AWS side'] },
  { file: 'docs/argocd.md', header: ['kind', 'Healthy message', 'also', 'Progressing while'] },
  { file: 'docs/cli.md', header: ['kind', 'the tree'] },
];

describe('the documentation', () => {
  it.each(kindTables)(
    '$file: the table of the kinds has one row per kind of the registry',
    ({ file, header }) => {
      const rows = tableOf(file, header).rows;
      expect(rows.map((r) => namesIn(r[0] ?? '').join(' ')).sort(), file).toEqual([...kindNames].sort());
      // Where the table gives a short name, it is one the kind answers to.
      const short = header.indexOf('short name');
      if (short < 0) return;
      for (const r of rows) {
        const kind = kinds.find((k) => k.type.kind === namesIn(r[0] ?? '')[0]);
        expect(kind?.names, `${file}: ${r[0] ?? ''}`).toContain(namesIn(r[short] ?? '')[0]);
      }
    },
  );

  it('docs/install.md: the RBAC table grants get, list, watch, patch on every kind’s resource', () => {
    const table = tableOf('docs/install.md', ['resource', 'verbs', 'why']);
    const row = table.rows.find((r) => r[1] === 'get, list, watch, patch');
    expect(row, 'the row of the kinds').toBeDefined();
    expect(namesIn(row?.[0] ?? '').sort()).toEqual(kinds.map((k) => k.type.plural).sort());
  });

  it('the chart’s description names every kind', () => {
    const chart = parse(readFileSync(join(repoRoot, 'deploy/helm/skylift/Chart.yaml'), 'utf8')) as {
      description: string;
    };
    for (const kind of kindNames) expect(chart.description).toContain(`(${kind})`);
  });

  it('the table parser finds tables, their headers and rows (not the rule line)', () => {
    const text = [
      'text',
      '| a | b |',
      '| - | - |',
      '| `x` | y |',
      '| z | `w`, `v` |',
      '',
      '| c |',
      '| - |',
    ].join('\n');
    expect(tablesIn(text)).toEqual([
      {
        header: ['a', 'b'],
        rows: [
          ['`x`', 'y'],
          ['z', '`w`, `v`'],
        ],
      },
      { header: ['c'], rows: [] },
    ]);
    expect(namesIn('`w`, `v`')).toEqual(['w', 'v']);
    expect(namesIn('plain')).toEqual(['plain']);
  });
});

describe('the Helm chart', () => {
  const templates = join(repoRoot, 'deploy/helm/skylift/templates');

  it('templates name no kind: the rules on the kinds come from files/kinds.yaml', () => {
    const words = kinds.flatMap((k) => [k.type.kind, k.type.plural]);
    for (const name of readdirSync(templates)) {
      const text = readFileSync(join(templates, name), 'utf8').toLowerCase();
      for (const word of words)
        expect(text.includes(word.toLowerCase()), `${name} names ${word}`).toBe(false);
    }
    expect(readFileSync(join(templates, '_helpers.tpl'), 'utf8')).toContain('files/kinds.yaml');
  });

  it(`${chartKindsFile} lists every kind of the registry by API group`, () => {
    const committed = parse(readFileSync(join(repoRoot, chartKindsFile), 'utf8')) as unknown;
    expect(committed).toEqual(chartKindGroups());
    expect(chartKindGroups().flatMap((g) => g.resources)).toEqual(kinds.map((k) => k.type.plural));
  });

  it('files/kinds.yaml has one entry per API group, in registry order: a kind in another group gets its own rules', () => {
    expect(chartKindGroups(kindsWithQueue)).toEqual([
      {
        apiGroup: 'aws.skylift.dev',
        resources: kinds.map((k) => k.type.plural),
        clusterResources: kinds.filter((k) => !k.type.namespaced).map((k) => k.type.plural),
        gatewayResources: ['dnsrecords'],
      },
      { apiGroup: 'test.skylift.dev', resources: ['queues'] },
    ]);
  });
});
