// The ManagedDB kind: an RDS DB instance with its connection Secret, backups and final snapshot.
import { rdsFailedStates } from '../../providers/rds/states.ts';
import type { KindModule } from '../module.ts';
import { databaseGuardrailSection, managedDbAdmission } from './guardrails.ts';
import { connectionSecretName } from './identity.ts';
import { dbCommand } from './command.ts';
import { managedDbCrd, managedDbType, managedDbFieldContract, type ManagedDB } from './api.ts';
import { managedDbController } from './controller.ts';
import { managedDbFlags, parseManagedDBSettings } from './settings.ts';

export const managedDbKind: KindModule = {
  type: managedDbType,
  names: ['manageddb', 'manageddbs', 'mdb', `${managedDbType.plural}.${managedDbType.group}`],
  traceShows:
    'DB instance (status, endpoint, pending modifications); connection Secret (keys only); on-demand requests (pending, last done)',
  crd: managedDbCrd,
  fieldContract: managedDbFieldContract,
  guardrails: databaseGuardrailSection,
  admission: managedDbAdmission,
  flags: managedDbFlags,
  configure(values) {
    const settings = parseManagedDBSettings(values);
    return {
      module: managedDbKind,
      controller: (plumbing) => managedDbController(plumbing, settings),
      // Imported when a trace asks for it: trace.ts loads the kind's AWS SDK.
      trace: async (obj, ctx) => (await import('./trace.ts')).traceManagedDb(obj, ctx),
    };
  },
  // moto's instances are available at once: no need to wait the real-AWS 15 s between looks.
  devFlags: ['--rds-poll-interval', '2s'],
  commands: [dbCommand],
  healthCheck: { lua: new URL('./health.lua', import.meta.url), constants: { rdsFailedStates } },
  summarize(db: ManagedDB, namespace: string): string[] {
    const s = db.status ?? {};
    const ep = s.endpoint;
    const ns = namespace === 'default' ? '' : ` -n ${namespace}`;
    const secret = connectionSecretName(db);
    return [
      `  Database       ${ep?.address ?? '?'}:${ep?.port ?? '?'}   (ManagedDB ${db.metadata.name}, ${s.dbInstanceStatus ?? '?'})`,
      `  Secret         ${secret}   (kubectl get secret ${secret}${ns} -o yaml)`,
    ];
  },
};
