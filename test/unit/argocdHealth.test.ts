// The Argo CD health checks, run the way Argo CD runs them: each case of every
// kind's health_test.yaml goes through hack/luahealth (gopher-lua, as the Argo
// CD controller embeds it) and must give exactly the status and message the
// case states. Also: every kind has a health check, the committed health.lua,
// argocd-cm.yaml and Helm values are what the generator renders, and the
// runner is as strict as Argo CD about libraries and statuses.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  argoCdKinds,
  configMapKey,
  healthCheckDir,
  renderArgoCdFiles,
  type ArgoCdKind,
} from '../../tools/argocdHealth.ts';
import { repoRoot } from '../../dev/paths.ts';
import { kinds as registry } from '../../src/kinds/registry.ts';
import { rdsFailedStates, rdsWaitStates } from '../../src/providers/rds/states.ts';
import {
  healthCasesIn,
  luahealthPath,
  readYaml,
  runHealthScript,
  type HealthCase,
  type HealthStatus,
} from '../support/luaHealth.ts';

let luahealth: string;

beforeAll(async () => {
  luahealth = await luahealthPath();
}, 300_000);

/** Runs a health script on an object as Argo CD would; rejects when the script fails. */
function health(script: string, obj: unknown): Promise<HealthStatus | null> {
  return runHealthScript(luahealth, script, obj);
}

function casesOf(k: ArgoCdKind): HealthCase[] {
  return healthCasesIn(join(repoRoot, healthCheckDir(k)));
}

const kinds = argoCdKinds();

describe('every kind in the registry', () => {
  it('has a health check directory with health.lua, health_test.yaml and its testdata', () => {
    expect(kinds.map((k) => `${k.group}/${k.kind}`)).toEqual(
      registry.map((k) => `${k.type.group}/${k.type.kind}`),
    );
    for (const k of kinds) {
      const dir = join(repoRoot, healthCheckDir(k));
      expect(readdirSync(dir).sort(), k.kind).toEqual(['health.lua', 'health_test.yaml', 'testdata']);
      const used = casesOf(k).map((c) => c.inputPath);
      const present = readdirSync(join(dir, 'testdata')).map((f) => `testdata/${f}`);
      // Every testdata file is a case, and every case has its file.
      expect([...new Set(used)].sort(), k.kind).toEqual(present.sort());
    }
  });

  it('has cases for Healthy, Progressing and Degraded', () => {
    for (const k of kinds) {
      const statuses = new Set(casesOf(k).map((c) => c.healthStatus.status));
      expect([...statuses].filter((s) => s !== 'Suspended').sort(), k.kind).toEqual([
        'Degraded',
        'Healthy',
        'Progressing',
      ]);
    }
  });
});

describe.each(kinds.map((k) => [k.kind, k] as const))('%s health.lua', (_name, k) => {
  const script = join(repoRoot, healthCheckDir(k), 'health.lua');
  it.each(casesOf(k).map((c) => [c.inputPath, c] as const))('%s', async (inputPath, c) => {
    const obj = readYaml(join(repoRoot, healthCheckDir(k), inputPath));
    expect(await health(script, obj)).toEqual(c.healthStatus);
  });
});

describe('ManagedDB and the RDS state lists the operator uses', () => {
  const k = kinds.find((x) => x.kind === 'ManagedDB');
  const dir = join(repoRoot, healthCheckDir(k ?? { group: '', kind: '' }));
  const template = readYaml(join(dir, 'testdata/failed-state.yaml')) as {
    status: { dbInstanceStatus: string; conditions: { type: string; message: string }[] };
  };
  const withState = (state: string): unknown => {
    const obj = structuredClone(template);
    obj.status.dbInstanceStatus = state;
    for (const c of obj.status.conditions) if (c.type === 'Ready') c.message = `RDS status is ${state}`;
    return obj;
  };

  it.each(rdsFailedStates)('%s is Degraded', async (state) => {
    expect(await health(join(dir, 'health.lua'), withState(state))).toEqual({
      status: 'Degraded',
      message: `RDS reports the DB instance as ${state}`,
    });
  });

  it.each(rdsWaitStates)('%s is Progressing', async (state) => {
    expect(await health(join(dir, 'health.lua'), withState(state))).toEqual({
      status: 'Progressing',
      message: `Unavailable: RDS status is ${state}`,
    });
  });
});

describe('generated files', () => {
  const want = renderArgoCdFiles(repoRoot);

  it('are committed as the generator renders them (run make generate after editing a kind health.lua or tools/argocd/common.lua)', () => {
    expect([...want.keys()].sort()).toEqual([
      'deploy/argocd/argo-cd-values.yaml',
      'deploy/argocd/argocd-cm.yaml',
      ...kinds.map((k) => `${healthCheckDir(k)}/health.lua`).sort(),
    ]);
    for (const [path, text] of want) {
      expect(readFileSync(join(repoRoot, path), 'utf8'), path).toBe(text);
    }
  });

  it('put each health.lua, byte for byte, under its argocd-cm key and in the Helm values', () => {
    const cm = readYaml(join(repoRoot, 'deploy/argocd/argocd-cm.yaml')) as {
      kind: string;
      metadata: { name: string; namespace: string };
      data: Record<string, string>;
    };
    const values = readYaml(join(repoRoot, 'deploy/argocd/argo-cd-values.yaml')) as {
      configs: { cm: Record<string, string> };
    };
    expect(cm.kind).toBe('ConfigMap');
    expect(cm.metadata).toMatchObject({ name: 'argocd-cm', namespace: 'argocd' });
    const scripts = Object.fromEntries(
      kinds.map((k) => [
        configMapKey(k),
        readFileSync(join(repoRoot, healthCheckDir(k), 'health.lua'), 'utf8'),
      ]),
    );
    expect(Object.keys(scripts).sort()).toEqual(
      registry.map((k) => `resource.customizations.health.${k.type.group}_${k.type.kind}`).sort(),
    );
    expect(cm.data).toEqual(scripts);
    expect(values.configs.cm).toEqual(scripts);
  });
});

describe('the runner is as strict as Argo CD for argocd-cm scripts', () => {
  const scratch = join(repoRoot, 'hack/luahealth/testdata');

  it('opens no string library', async () => {
    await expect(health(join(scratch, 'uses-string.lua'), {})).rejects.toThrow(/non-table object\(nil\)/);
  });

  it('turns a status Argo CD does not know into Unknown', async () => {
    expect(await health(join(scratch, 'bad-status.lua'), {})).toEqual({
      status: 'Unknown',
      message: 'Lua returned an invalid health status',
    });
  });

  it('hands the object over as tables with numbers', async () => {
    expect(
      await health(join(scratch, 'echo.lua'), { metadata: { generation: 3 }, list: ['a', 'b'] }),
    ).toEqual({
      status: 'Healthy',
      message: 'number 3, 2 items',
    });
  });
});
