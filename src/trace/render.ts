// Draws a trace tree as aligned text, like `crossplane beta trace`.
import type { TraceNode } from './tree.ts';

interface Row {
  readonly left: string;
  readonly status: string;
  readonly details: string;
}

/**
 * Renders the tree under a `NAME STATUS DETAILS` header, one line per node:
 * children hang off `├─ ` / `└─ ` with `│  ` continuing the parent's line
 * of siblings; the STATUS and DETAILS columns are aligned. Ends with a
 * newline. Pure.
 */
export function renderTree(root: TraceNode): string {
  const rows: Row[] = [];
  const walk = (n: TraceNode, lead: string, childLead: string): void => {
    rows.push({ left: `${lead}${n.kind}/${n.name}`, status: n.status, details: n.details.join('  ') });
    n.children.forEach((c, i) => {
      const last = i === n.children.length - 1;
      walk(c, `${childLead}${last ? '└─ ' : '├─ '}`, `${childLead}${last ? '   ' : '│  '}`);
    });
  };
  walk(root, '', '');
  const header: Row = { left: 'NAME', status: 'STATUS', details: 'DETAILS' };
  const all = [header, ...rows];
  const leftWidth = Math.max(...all.map((r) => width(r.left)));
  const statusWidth = Math.max(...all.map((r) => width(r.status)));
  return all
    .map((r) => `${pad(r.left, leftWidth)}  ${pad(r.status, statusWidth)}  ${r.details}`.trimEnd())
    .join('\n')
    .concat('\n');
}

/** Display width in code points (the box-drawing characters are one column each). */
function width(s: string): number {
  return Array.from(s).length;
}

function pad(s: string, w: number): string {
  return s + ' '.repeat(Math.max(0, w - width(s)));
}
