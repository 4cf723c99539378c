// examples/teams/ and the TeamPolicies in docs/teams.md are what the apiserver accepts: applied
// with server-side dry run and strict field validation (an unknown field fails, not pruned), so
// nothing is created — a real TeamPolicy would change which namespaces the other tests are served in.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot } from '../../dev/paths.ts';
import { kubeClient } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { stackInfo } from '../support/stack.ts';

const examples = readdirSync(join(repoRoot, 'examples/teams'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

/** The YAML blocks of docs/teams.md that declare a TeamPolicy (dedented: some are in list items). */
const docBlocks = [
  ...readFileSync(join(repoRoot, 'docs/teams.md'), 'utf8').matchAll(/^( *)```yaml\n([\s\S]*?)^\1```/gm),
]
  .map(([, indent = '', body = '']) =>
    body
      .split('\n')
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join('\n'),
  )
  .filter((y) => /^kind: TeamPolicy$/m.test(y));

const dryRun = (manifest: string) =>
  kubectl(
    stackInfo().adminKubeconfig,
    ['apply', '--dry-run=server', '--validate=strict', '-f', '-'],
    manifest,
  );

beforeAll(async () => {
  await installCrds(kubeClient());
});

describe('TeamPolicy examples', () => {
  it('has the two teams’ policies and their namespaces', () => {
    expect(examples).toEqual(['namespaces.yaml', 'payments.yaml', 'search.yaml']);
    expect(docBlocks.length).toBeGreaterThanOrEqual(3); // payments, search, the migration's catch-all
  });

  it.each(['payments.yaml', 'search.yaml'])('docs/teams.md shows examples/teams/%s as it is', (file) => {
    const example: unknown = parse(readFileSync(join(repoRoot, 'examples/teams', file), 'utf8'));
    expect(docBlocks.map((y): unknown => parse(y))).toContainEqual(example);
  });

  it.each(examples)('examples/teams/%s is accepted by the apiserver', async (file) => {
    const r = await dryRun(readFileSync(join(repoRoot, 'examples/teams', file), 'utf8'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it.each(docBlocks.map((y, i) => ({ i, y })))(
    'docs/teams.md TeamPolicy block $i is accepted',
    async ({ y }) => {
      const r = await dryRun(y);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    },
  );
});
