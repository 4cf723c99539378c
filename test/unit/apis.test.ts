import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kinds } from '../../src/kinds/registry.ts';
import { undocumented } from '../../src/apis/schema.ts';
import { repoRoot } from '../../dev/paths.ts';

describe('APIs', () => {
  it('generated files (crds/, chart copies, docs/reference/) match their sources (run make generate)', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'tools/generate.ts'), '--check'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.each(kinds.map((k) => ({ kind: k.crd().spec.names.kind, crd: k.crd() })))(
    '$kind documents every field for kubectl explain',
    ({ crd }) => {
      for (const v of crd.spec.versions) {
        const props = v.schema.openAPIV3Schema.properties ?? {};
        expect(undocumented(v.schema.openAPIV3Schema)).toEqual([]);
        expect(Object.keys(props)).toEqual(expect.arrayContaining(['spec', 'status']));
      }
    },
  );

  it.each(kinds.map((k) => ({ kind: k.crd().spec.names.kind, crd: k.crd() })))(
    '$kind shares the managed-resource fields, category and columns',
    ({ crd }) => {
      const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.properties ?? {};
      expect(Object.keys(spec)).toEqual(
        expect.arrayContaining(['deletionPolicy', 'managementPolicy', 'externalName']),
      );
      expect(spec.deletionPolicy?.default).toBe('Delete');
      expect(spec.managementPolicy?.default).toBe('Manage');
      expect(crd.spec.names.categories).toContain('skylift');
      expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
      expect(crd.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name).slice(-3)).toEqual([
        'Ready',
        'Synced',
        'Age',
      ]);
    },
  );
});
