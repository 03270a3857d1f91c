/**
 * openapi.json as a generated client reads it: which operation a concrete request reaches, and
 * whether an answer (status, content type, body) is one that operation documents. Schemas are
 * read strictly: an object schema that lists its properties admits no other member, as Redocly's
 * example check does, so an undocumented member fails.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { liveRoutes } from '../../functions/api/routes.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import type { Exchange } from './recording.js';

type Json = Record<string, unknown>;
const DOC_ID = 'https://netconfig.invalid/openapi.json';
/** The stage every path of the document is relative to. */
export const STAGE_PREFIX = '/v1';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export const readOpenApi = (): Json => JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'openapi.json'), 'utf8')) as Json;

/** A copy of `node` where every object schema that lists properties but says nothing of others admits none. */
export const strictened = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(strictened);
  if (node === null || typeof node !== 'object') return node;
  const copy = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, strictened(v)])) as Json;
  const props = copy['properties'];
  if (props && typeof props === 'object' && !Array.isArray(props) && !('additionalProperties' in copy) && !('unevaluatedProperties' in copy)) {
    copy['additionalProperties'] = false;
  }
  return copy;
};

const pointer = (...parts: string[]) => `#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

/** Validates values against schemas of the document, by JSON pointer. */
export class OpenApiSchemas {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ReturnType<Ajv2020['compile']>>();

  constructor(readonly doc: Json) {
    // The document is not a JSON Schema itself: strict mode would refuse its OpenAPI members.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema(strictened(doc) as Json, DOC_ID);
  }

  /** The error messages of `value` against the schema at `ref` (`#/…`); empty when valid. */
  errors(ref: string, value: unknown): string[] {
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}${ref}` });
      this.compiled.set(ref, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** Follows a `$ref` inside the document (one level, as responses use them). */
  resolve<T = Json>(node: Json): T {
    const ref = node['$ref'];
    if (typeof ref !== 'string') return node as T;
    return ref
      .slice(2)
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((at, key) => (at as Json)[key], this.doc) as T;
  }
}

/** Parameters that span segments (`{nodePath+}` in the route table; OpenAPI has no such form, their description says so). */
const GREEDY = new Set(liveRoutes.flatMap((r) => [...r.path.matchAll(/\{(\w+)\+\}/g)].map((m) => m[1]!)));

/** How specific a template's segment is: a literal beats a parameter, which beats a greedy one (as API Gateway matches). */
const rank = (segment: string) => (!segment.startsWith('{') ? 2 : GREEDY.has(segment.slice(1, -1)) ? 0 : 1);

const templateRegex = (template: string) =>
  new RegExp(
    `^${template
      .split('/')
      .map((s) => (!s.startsWith('{') ? s.replace(/[.*+?^$()|[\]\\]/g, '\\$&') : GREEDY.has(s.slice(1, -1)) ? '.+' : '[^/]+'))
      .join('/')}$`,
  );

/** The path template of the document a concrete path (under the stage, query left off) reaches, or undefined. */
export const matchPath = (doc: Json, concrete: string): string | undefined => {
  // API Gateway ignores one trailing slash.
  const p = concrete.length > 1 ? concrete.replace(/\/$/, '') : concrete;
  const candidates = Object.keys(doc['paths'] as Json).filter((t) => templateRegex(t).test(p));
  const score = (t: string) => t.split('/').map(rank);
  candidates.sort((a, b) => {
    const [x, y] = [score(a), score(b)];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return y[i]! - x[i]!;
    return y.length - x.length;
  });
  return candidates[0];
};

export type Verdict =
  | { readonly kind: 'outside'; readonly why: string }
  | { readonly kind: 'checked'; readonly operation: string; readonly problems: readonly string[] };

const bareMediaType = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase();
const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/** The headers the response documents: each required one present, each present one valid against its schema. */
const checkHeaders = (schemas: OpenApiSchemas, response: Json, at: string, exchange: Exchange): string[] =>
  Object.entries((response['headers'] ?? {}) as Record<string, Json>).flatMap(([name, header]) => {
    const value = exchange.headers[name.toLowerCase()];
    if (value === undefined) return header['required'] ? [`${at}: the required header ${name} is missing`] : [];
    return header['schema'] ? schemas.errors(`${at}/headers/${name}/schema`, value).map((e) => `${at} header ${name}: ${e}`) : [];
  });

/** Checks one answer against the response `response` (already resolved) of the document. */
const checkResponse = (schemas: OpenApiSchemas, response: Json, at: string, exchange: Exchange): string[] => [
  ...checkHeaders(schemas, response, at, exchange),
  ...checkContent(schemas, response, at, exchange),
];

const checkContent = (schemas: OpenApiSchemas, response: Json, at: string, exchange: Exchange): string[] => {
  const content = response['content'] as Record<string, Json> | undefined;
  if (!content) return exchange.body === '' ? [] : [`${at} documents no body, but one came (${exchange.contentType ?? 'no content type'})`];
  const media = bareMediaType(exchange.contentType);
  if (!media || !(media in content)) return [`${at}: content type ${exchange.contentType ?? '(none)'} is not documented (${Object.keys(content).join(', ')})`];
  if (!isJson(media)) return [];
  let body: unknown;
  try {
    body = JSON.parse(exchange.body);
  } catch {
    return [`${at}: the ${media} body is not JSON: ${exchange.body.slice(0, 200)}`];
  }
  const schemaAt = `${at}/content/${media.replaceAll('/', '~1')}/schema`;
  const errors = schemas.errors(schemaAt, body).map((e) => `${at} ${media}: ${e}`);
  // RFC 9457: a problem's `status` member is the HTTP status.
  const member = media === 'application/problem+json' ? (body as { status?: unknown } | null)?.status : undefined;
  return member === undefined || member === exchange.status
    ? errors
    : [...errors, `${at}: the problem says status ${String(member)}, the answer is ${exchange.status}`];
};

/** A method and path no operation documents: the document promises a 404 GatewayProblem of type not-found. */
const checkNoRoute = (schemas: OpenApiSchemas, exchange: Exchange, concrete: string): string[] => {
  const name = `${exchange.method} ${concrete} (no operation)`;
  if (exchange.status !== 404) return [`${name}: answered ${exchange.status}, but a method and path no operation documents answer 404`];
  if (bareMediaType(exchange.contentType) !== 'application/problem+json')
    return [`${name}: the 404 is ${exchange.contentType ?? '(no content type)'}, not application/problem+json`];
  let body: unknown;
  try {
    body = JSON.parse(exchange.body);
  } catch {
    return [`${name}: the 404 body is not JSON`];
  }
  const errors = schemas.errors(pointer('components', 'schemas', 'GatewayProblem'), body).map((e) => `${name} 404: ${e}`);
  const type = (body as { type?: unknown } | null)?.type;
  return type === 'urn:netconfig:problem:not-found' ? errors : [...errors, `${name} 404: type ${String(type)} is not urn:netconfig:problem:not-found`];
};

/**
 * Checks one recorded exchange against the document. Requests outside the stage are not the
 * API's (the local issuer's JWKS). A method and path no operation documents must get the 404
 * GatewayProblem the document promises for them.
 */
export const checkExchange = (schemas: OpenApiSchemas, exchange: Exchange): Verdict => {
  const { doc } = schemas;
  const full = exchange.path.split('?')[0]!;
  if (full !== STAGE_PREFIX && !full.startsWith(`${STAGE_PREFIX}/`)) return { kind: 'outside', why: `${full} is not under the stage ${STAGE_PREFIX}` };
  if (exchange.status === 0) return { kind: 'checked', operation: `${exchange.method} ${full}`, problems: [`no answer: ${exchange.body}`] };
  const concrete = full.slice(STAGE_PREFIX.length) || '/';
  const template = matchPath(doc, concrete);
  const method = exchange.method.toLowerCase();
  const operation = template ? ((doc['paths'] as Record<string, Json>)[template]![method] as Json | undefined) : undefined;
  if (!template || !operation || !METHODS.includes(method))
    return { kind: 'checked', operation: 'no operation', problems: checkNoRoute(schemas, exchange, concrete) };
  const name = `${exchange.method} ${template}`;
  const responses = operation['responses'] as Record<string, Json>;
  const key =
    String(exchange.status) in responses
      ? String(exchange.status)
      : `${String(exchange.status)[0]}XX` in responses
        ? `${String(exchange.status)[0]}XX`
        : 'default' in responses
          ? 'default'
          : undefined;
  if (!key)
    return {
      kind: 'checked',
      operation: name,
      problems: [`${name}: status ${exchange.status} is not documented (${Object.keys(responses).join(', ')}): ${exchange.body.slice(0, 300)}`],
    };
  const raw = responses[key]!;
  const ref = typeof raw['$ref'] === 'string' ? (raw['$ref'] as string) : pointer('paths', template, method, 'responses', key);
  return {
    kind: 'checked',
    operation: name,
    problems: checkResponse(schemas, schemas.resolve(raw), ref, exchange).map((p) => `${name} ${exchange.status}: ${p}`),
  };
};

/** Checks exchanges; the problems of all of them, and what was checked and left out. */
export const checkExchanges = (schemas: OpenApiSchemas, exchanges: readonly Exchange[]) => {
  const verdicts = exchanges.map((e) => checkExchange(schemas, e));
  return {
    problems: verdicts.flatMap((v) => (v.kind === 'checked' ? v.problems : [])),
    checked: verdicts.filter((v) => v.kind === 'checked').length,
    outside: verdicts.filter((v) => v.kind === 'outside').length,
    operations: new Set(verdicts.flatMap((v) => (v.kind === 'checked' ? [v.operation] : []))),
  };
};
