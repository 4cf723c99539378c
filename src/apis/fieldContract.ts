/**
 * A kind's field contract: what becomes of each spec field once the object
 * exists, so that no field is ever accepted and ignored. Every spec field of
 * a kind's CRD is covered (test/unit/fieldContract.test.ts walks the schema),
 * and every field a change of which reaches AWS is changed after create by a
 * generated integration test (test/integration/fieldContract.test.ts).
 *
 * Keys are paths below `spec`, dotted, with `[]` for a list's items
 * (`backup.window`, `listeners[].sslPolicy`); a key covers its whole subtree.
 * Plain data.
 */

/** What a change of one spec field after create does. */
export type FieldTreatment =
  /** Refused at admission when changed after create (a CEL rule in the CRD); the text says why. */
  | { readonly fixed: string }
  /** A change reaches AWS: the text names the call(s) that apply it. */
  | { readonly applied: string }
  /** Read by Skylift or Kubernetes only: changes nothing in AWS by itself; the text says what it changes. */
  | { readonly kubernetes: string };

/** A kind's field contract, by spec path. */
export type FieldContract = Readonly<Record<string, FieldTreatment>>;

/** The contract of the spec fields every managed kind shares (src/apis/common.ts). */
export const managedFieldContract: FieldContract = {
  deletionPolicy: {
    kubernetes: 'read when the object is deleted: Delete removes the AWS resource, Orphan keeps it',
  },
  managementPolicy: {
    kubernetes: 'ObserveOnly stops every write to AWS from the next reconcile; Manage resumes them',
  },
  externalName: { fixed: 'the AWS resource an object manages is chosen once, at create' },
};
