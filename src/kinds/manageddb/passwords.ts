// The master password of a ManagedDB's instance and the connection Secret that holds it: generated
// into the Secret before the instance exists, given to RDS after a restore or when the Secret lost
// it (written to the Secret first, marked pending, so a crash in between loses nothing), and the
// Secret kept equal to the instance's endpoint. Reads the Secret; the engine writes it (Writes).
import { randomBytes } from 'node:crypto';
import type { DBInstance } from '@aws-sdk/client-rds';
import type { OwnershipTags } from '../../apis/managed.ts';
import type { Writes } from '../../runtime/adapter.ts';
import { RetryableError } from '../../runtime/errors.ts';
import type { KubeClient } from '../../runtime/kube/client.ts';
import type { ManagedDB } from './api.ts';
import {
  connectionData,
  connectionSecretWrite,
  readConnectionSecret,
  readConnectionSecretState,
  type SecretSeen,
} from './connectionSecret.ts';
import { connectionSecretName, instanceIdentifier } from './identity.ts';
import type { DBInstances } from './instance.ts';
import { restoredPasswordTag } from './restore.ts';

/** Ready/Synced reasons of the password's keeping. */
export const PasswordReason = {
  /** The generated password vanished from the connection Secret between prepareCreate and create. */
  SecretMissing: 'SecretMissing',
  /** An adopted instance's master password is not Skylift's to know: the Secret cannot hold it. */
  PasswordUnknown: 'PasswordUnknown',
} as const;

/** What keeping the connection Secret asks: its write, and why RDS must be given the Secret's password. */
export interface SecretKeeping {
  readonly writes?: Writes;
  /** Why the instance's master password must be set to the Secret's (a delta), if it must. */
  readonly lost?: string;
  /** An adopted instance whose password Skylift cannot know (the Secret has none). */
  readonly unknown?: boolean;
}

/** A new master password (24 random bytes, base64url). */
function newPassword(): string {
  return randomBytes(24).toString('base64url');
}

/** The Secret as read, for a write's precondition. Pure. */
function seenOf(secret: { readonly uid: string } | undefined): SecretSeen {
  return secret === undefined ? undefined : { uid: secret.uid };
}

/**
 * The master passwords of one adapter's objects. Holds, per object uid, the password
 * {@link prepare} made sure of until {@link forCreate} takes it (in memory; a restarted process
 * reads it back from the Secret).
 */
export class MasterPasswords {
  private readonly kube: KubeClient;
  private readonly instances: DBInstances;
  private readonly prepared = new Map<string, string>();

  constructor(kube: KubeClient, instances: DBInstances) {
    this.kube = kube;
    this.instances = instances;
  }

  /**
   * Claims the connection Secret before any AWS call: a Secret of this name that is not this
   * object's is a Conflict (read), and a new one is created atomically, so of two objects naming it
   * at once one gets it and the other creates nothing. The generated master password goes into it
   * now, before the instance exists, so a crash cannot lose it. Reads only; returns the write.
   */
  async prepare(mr: ManagedDB): Promise<Writes> {
    const uid = mr.metadata.uid ?? '';
    const state = await readConnectionSecretState(this.kube, mr);
    const seen = state === undefined ? undefined : { uid: state.uid };
    const base = { username: mr.spec.masterUsername, engine: mr.spec.engine };
    if (mr.spec.password?.managedByAWS === true)
      return state !== undefined ? {} : { companions: [connectionSecretWrite(mr, base, seen)] };
    const existing = state?.data.password;
    if (existing !== undefined && existing !== '') {
      this.prepared.set(uid, existing);
      return {};
    }
    const password = newPassword();
    this.prepared.set(uid, password);
    return { companions: [connectionSecretWrite(mr, { ...state?.data, ...base, password }, seen)] };
  }

  /**
   * The password the instance is created with: undefined when AWS manages it; else the one
   * {@link prepare} put (or found) in the Secret, read back if this process did not prepare it.
   * Throws Retryable SecretMissing when the Secret lost it meanwhile. Takes it (a second call reads
   * the Secret).
   */
  async forCreate(mr: ManagedDB): Promise<string | undefined> {
    if (mr.spec.password?.managedByAWS === true) return undefined;
    const uid = mr.metadata.uid ?? '';
    const prepared = this.prepared.get(uid);
    this.prepared.delete(uid);
    const password = prepared ?? (await readConnectionSecret(this.kube, mr))?.password;
    if (password === undefined || password === '')
      throw new RetryableError(
        PasswordReason.SecretMissing,
        `the connection Secret lost its generated password before ${instanceIdentifier(mr)} was created`,
      );
    return password;
  }

  /**
   * Sets the instance's master password to the Secret's (or hands it to AWS with
   * password.managedByAWS); for a `restored` instance — which keeps its snapshot's password, the
   * source instance's — then marks it so it is done once. Repeating it after a crash sets the same
   * password again. Returns the Secret's write that clears its pending mark, if it had one.
   */
  async giveToInstance(
    mr: ManagedDB,
    db: DBInstance,
    ownership: OwnershipTags,
    restored: boolean,
  ): Promise<Writes | undefined> {
    const id = db.DBInstanceIdentifier ?? instanceIdentifier(mr);
    const managed = mr.spec.password?.managedByAWS === true;
    const secret = managed ? undefined : await readConnectionSecretState(this.kube, mr);
    const password = secret?.data.password;
    if (!managed && (password === undefined || password === ''))
      throw new RetryableError(
        PasswordReason.SecretMissing,
        `the connection Secret has no password to give the instance ${id}${restored ? ' restored from spec.restoreFrom' : ''}`,
      );
    await this.instances.modify(
      id,
      true,
      managed
        ? { ManageMasterUserPassword: true }
        : {
            MasterUserPassword: password,
            // Turning AWS management off (spec.password.managedByAWS now false) takes the password with it.
            ...(db.MasterUserSecret?.SecretArn !== undefined ? { ManageMasterUserPassword: false } : {}),
          },
      `set the master password of ${id}`,
    );
    const arn = db.DBInstanceArn;
    if (restored && arn !== undefined)
      await this.instances.addTags(
        arn,
        { [restoredPasswordTag]: ownership.uid },
        `mark ${id} as given its password`,
      );
    // RDS has the Secret's password: the Secret is no longer marked pending.
    return secret?.pending === true
      ? { companions: [connectionSecretWrite(mr, secret.data, { uid: secret.uid })] }
      : undefined;
  }

  /**
   * The connection Secret's write when what it holds differs from the instance's endpoint, its
   * password kept; and, when the Secret has no password (deleted, renamed, emptied) or holds one
   * RDS was not given yet, why the instance's master password must be set to the Secret's: a lost
   * password is replaced by a new one, written to the Secret (marked pending) before RDS is told.
   * With password.managedByAWS, AWS keeps the password and nothing is lost. Reads only.
   */
  async keepSecret(mr: ManagedDB, db: DBInstance): Promise<SecretKeeping> {
    const secret = await readConnectionSecretState(this.kube, mr);
    const current = secret?.data ?? {};
    const managed = mr.spec.password?.managedByAWS === true;
    // An adopted instance's password is its owner's to change (docs/manageddb.md, "Adoption").
    const adopted = (mr.spec.externalName ?? '') !== '';
    // spec.password.managedByAWS turned off: RDS needs a password of Skylift's (ModifyDBInstance
    // takes it with ManageMasterUserPassword false), written first as for a lost one.
    const managedOff = db.MasterUserSecret?.SecretArn !== undefined && secret?.pending !== true;
    if (!managed && !adopted && ((current.password ?? '') === '' || managedOff)) {
      return {
        writes: {
          companions: [
            connectionSecretWrite(mr, connectionData(mr, db, newPassword()), seenOf(secret), {
              pending: true,
            }),
          ],
        },
        lost: managedOff
          ? 'spec.password.managedByAWS is off: a new master password, written to the connection Secret before the instance is given it'
          : `the connection Secret ${connectionSecretName(mr)} has no password (deleted, renamed or emptied): a new master password, written to the Secret before the instance is given it`,
      };
    }
    const pending = !managed && secret?.pending === true;
    // Managed by AWS, the Secret's password goes once RDS has the secret that replaces it.
    const replaced = managed && db.MasterUserSecret?.SecretArn !== undefined;
    const want = connectionData(mr, db, replaced ? undefined : current.password);
    const same =
      Object.entries(want).every(([k, v]) => current[k] === v) &&
      Object.keys(current).every((k) => k in want);
    const writes = same
      ? undefined
      : { companions: [connectionSecretWrite(mr, want, seenOf(secret), { pending })] };
    return {
      ...(writes !== undefined ? { writes } : {}),
      ...(adopted && !managed && (current.password ?? '') === '' ? { unknown: true } : {}),
      ...(pending
        ? {
            lost: `the connection Secret ${connectionSecretName(mr)} holds a master password the instance was not given yet`,
          }
        : {}),
    };
  }
}
