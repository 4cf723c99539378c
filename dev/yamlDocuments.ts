import { parseAllDocuments } from 'yaml';

/**
 * The documents of a multi-document YAML text as plain values (empty documents dropped). Throws
 * naming `file` and the first error of a document that does not parse. Pure.
 */
export function parseYamlDocuments(text: string, file: string): unknown[] {
  return parseAllDocuments(text)
    .map((doc) => {
      const [error] = doc.errors;
      if (error !== undefined) throw new Error(`${file}: ${error.message}`, { cause: error });
      return doc.toJS() as unknown;
    })
    .filter((value) => value !== null && value !== undefined);
}
