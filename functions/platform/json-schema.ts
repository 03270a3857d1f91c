/** A JSON Schema (draft 2020-12) document, kept loose: Ajv checks it at build time. */
export type JsonSchema = { readonly [keyword: string]: unknown };
