// The Platform API client for TypeScript and Node 20+: one method per
// operation of the API, typed from the OpenAPI document (src/schema.d.ts,
// generated), answering with a result envelope ({ ok: true, value, … } or
// { ok: false, error, … }) instead of throwing on API failures. It depends on nothing but the platform's fetch and
// crypto.randomUUID.
import type { components, operations as Ops } from "./schema.js";
import { operations } from "./operations.js";

export { operations };
export type { components, paths, operations as OperationTypes } from "./schema.js";

type Table = typeof operations;
/** A body that is not JSON (file uploads, transfer parts): what Node's fetch accepts. */
export type RawBody = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;
/** A client method name, e.g. "projectsCreate". */
export type MethodName = keyof Table;
type OpOf<M extends MethodName> = Ops[Table[M]["id"]];

type Defined<T> = [T] extends [never] ? never : [T] extends [undefined] ? never : Exclude<T, undefined>;
type Params<O> = O extends { parameters: infer P } ? P : never;
type PathOf<O> = Defined<Params<O> extends { path?: infer X } ? X : never>;
type QueryOf<O> = Defined<Params<O> extends { query?: infer X } ? X : never>;
type BodyOf<O> = O extends { requestBody?: { content: infer C } }
  ? C extends { "application/json": infer J }
    ? J
    : RawBody
  : never;
type BodyRequired<O> = O extends { requestBody: unknown } ? true : false;

type SuccessCodes = 200 | 201 | 202 | 203 | 204 | 206;
type ContentValue<C> = C extends { "application/json": infer J }
  ? J
  : C extends { "text/html": unknown }
    ? string
    : Uint8Array;
type ResponseValue<R> = R extends { content: infer C } ? ContentValue<C> : undefined;
/** What a successful call of method M answers: the decoded JSON, or bytes/text for other media. */
export type ValueOf<M extends MethodName> = OpOf<M> extends { responses: infer Rs }
  ? { [K in keyof Rs]: K extends SuccessCodes ? ResponseValue<Rs[K]> : never }[keyof Rs]
  : never;

type PathPart<O> = [PathOf<O>] extends [never] ? unknown : { path: PathOf<O> };
type QueryPart<O> = [QueryOf<O>] extends [never] ? unknown : { query?: QueryOf<O> };
type BodyPart<O> = [BodyOf<O>] extends [never]
  ? unknown
  : BodyRequired<O> extends true
    ? { body: BodyOf<O> }
    : { body?: BodyOf<O> };
/** The request of method M: path parameters, query and body, as the document defines them. */
export type InputOf<M extends MethodName> = PathPart<OpOf<M>> & QueryPart<OpOf<M>> & BodyPart<OpOf<M>>;

type HasRequired<T> = T extends { path: unknown } ? true : T extends { body: unknown } ? true : false;
type Args<M extends MethodName> =
  HasRequired<InputOf<M>> extends true
    ? [input: InputOf<M>, options?: CallOptions]
    : [input?: InputOf<M>, options?: CallOptions];

export type FieldError = components["schemas"]["FieldError"];

/** An API failure, from the problem+json body and the response headers. */
export interface ApiError {
  status: number;
  code: string;
  title: string;
  detail: string;
  type: string;
  errors: FieldError[];
  requestId: string | undefined;
  /** Seconds the server asked to wait (Retry-After), when it did. */
  retryAfter: number | undefined;
}

interface Meta {
  status: number;
  requestId: string | undefined;
  headers: Headers;
  /** The server replayed a stored response for this Idempotency-Key. */
  replayed: boolean;
  /** How many requests the call made (1 + retries). */
  attempts: number;
}

export type Result<T> = ({ ok: true; value: T } & Meta) | ({ ok: false; error: ApiError } & Meta);

/** The deprecation headers of a response (RFC 9745 Deprecation, RFC 8594 Sunset, Link). */
export interface DeprecationNotice {
  operationId: string;
  method: string;
  path: string;
  deprecation: string | undefined;
  sunset: string | undefined;
  link: string | undefined;
  /** The URI of the Link with rel="successor-version", when there is one. */
  successor: string | undefined;
}

export interface ClientOptions {
  /** e.g. "https://api.example.com" or "http://127.0.0.1:8080"; "/v1" is added when the URL has no path. */
  baseUrl: string;
  /** A psk_… key, sent as Authorization: Bearer. Omit only for public operations or with creditToken. */
  apiKey?: string;
  /** Retries after the first attempt for 429, 503 and connection failures. Default 2. */
  maxRetries?: number;
  /** Cap of one backoff delay; a Retry-After longer than this is not waited for. Default 30 000 ms. */
  maxRetryDelayMs?: number;
  /** Base of the exponential backoff (full jitter). Default 500 ms. */
  baseDelayMs?: number;
  /** Called for each response that carries Deprecation or Sunset. Default: one process warning per operation. */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Overrides the generated Idempotency-Key (operations that require one). */
  idempotencyKey?: string;
  /** X-Service-Project: the project an account-level key acts in. */
  project?: string;
  /** X-Service-End-User: the end user of your app the call is for. */
  endUser?: string;
  /** X-Service-Credit-Token: creates the first key of a new account (apiKeysCreate without apiKey). */
  creditToken?: string;
  /** Extra headers, e.g. Payment-Signature or X-File-Name. */
  headers?: Record<string, string>;
  /** Ends the call, including any wait between retries. */
  signal?: AbortSignal;
  maxRetries?: number;
}

type Methods = { [M in MethodName]: (...args: Args<M>) => Promise<Result<ValueOf<M>>> };
type ItemOf<M extends MethodName> = ValueOf<M> extends { data: (infer I)[] | null } ? I : never;
type Paginated = { [M in MethodName]: Table[M]["paginated"] extends true ? M : never }[MethodName];
type Iterators = {
  [M in Paginated as `${M}All`]: (...args: Args<M>) => AsyncGenerator<ItemOf<M>, void, undefined>;
};

export type Client = Methods & Iterators;

/** Thrown by the list iterators (…All) when a page fails; carries the failed result. */
export class ApiFailure extends Error {
  readonly error: ApiError;
  constructor(error: ApiError) {
    super(`${error.status} ${error.code}: ${error.detail}`);
    this.name = "ApiFailure";
    this.error = error;
  }
}

const retryStatuses = new Set([429, 503]);

/** Creates a client. Nothing is sent until a method is called. */
export function createClient(options: ClientOptions): Client {
  const base = normaliseBase(options.baseUrl);
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const warned = new Set<string>();
  const onDeprecation =
    options.onDeprecation ??
    ((n: DeprecationNotice) => {
      if (warned.has(n.operationId)) return;
      warned.add(n.operationId);
      process.emitWarning(
        `${n.operationId} is deprecated${n.sunset ? `, sunset ${n.sunset}` : ""}${n.successor ? `; use ${n.successor}` : ""}`,
        "DeprecationWarning",
      );
    });
  const cfg = {
    maxRetries: options.maxRetries ?? 2,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    baseDelayMs: options.baseDelayMs ?? 500,
  };

  async function call(name: MethodName, input: Record<string, unknown> = {}, opts: CallOptions = {}) {
    const op = operations[name];
    const url = new URL(base + fillPath(op.path, input.path as Record<string, unknown> | undefined));
    for (const [k, v] of Object.entries((input.query as Record<string, unknown>) ?? {})) {
      if (v === undefined || v === null) continue;
      url.searchParams.set(k, Array.isArray(v) ? v.join(",") : String(v));
    }
    const headers = new Headers(opts.headers);
    headers.set("Accept", op.response === "json" ? "application/json, application/problem+json" : "*/*");
    if (options.apiKey) headers.set("Authorization", `Bearer ${options.apiKey}`);
    if (opts.creditToken) headers.set("X-Service-Credit-Token", opts.creditToken);
    if (opts.project) headers.set("X-Service-Project", opts.project);
    if (opts.endUser) headers.set("X-Service-End-User", opts.endUser);
    // One key per logical call, made before the first attempt, so that every
    // retry is recognised by the server as the same call.
    if (op.idempotent) headers.set("Idempotency-Key", opts.idempotencyKey ?? crypto.randomUUID());
    let body: RawBody | undefined;
    if (input.body !== undefined) {
      if (op.body === "json") {
        headers.set("Content-Type", "application/json");
        body = JSON.stringify(input.body);
      } else {
        if (!headers.has("Content-Type")) headers.set("Content-Type", "application/octet-stream");
        body = input.body as RawBody;
      }
    }
    // A connection failure leaves it unknown whether the server acted: only
    // reads and calls carrying an Idempotency-Key are safe to send again.
    // A stream is read once: it cannot be sent again.
    const stream = body instanceof ReadableStream;
    const replaySafe = (op.idempotent || op.method === "GET") && !stream;
    const maxRetries = opts.maxRetries ?? cfg.maxRetries;
    for (let attempt = 0; ; attempt++) {
      opts.signal?.throwIfAborted();
      let res: Response;
      try {
        // Node's fetch needs duplex "half" to send a stream.
        const init = { method: op.method, headers, body, signal: opts.signal, ...(stream ? { duplex: "half" } : {}) };
        res = await doFetch(url, init as RequestInit);
      } catch (err) {
        if (opts.signal?.aborted || !replaySafe || attempt >= maxRetries) throw err;
        await sleep(backoff(attempt, undefined), opts.signal);
        continue;
      }
      if (retryStatuses.has(res.status) && attempt < maxRetries && !stream) {
        const retryAfter = parseRetryAfter(res.headers.get("Retry-After"));
        if (retryAfter === undefined || retryAfter * 1000 <= cfg.maxRetryDelayMs) {
          await res.body?.cancel();
          await sleep(backoff(attempt, retryAfter), opts.signal);
          continue;
        }
      }
      notifyDeprecation(op, res.headers);
      return envelope(op.response, res, attempt + 1);
    }
  }

  function backoff(attempt: number, retryAfterSeconds: number | undefined): number {
    const ceiling = Math.min(cfg.maxRetryDelayMs, cfg.baseDelayMs * 2 ** attempt);
    const jitter = Math.random() * ceiling;
    return retryAfterSeconds === undefined ? jitter : Math.max(retryAfterSeconds * 1000, jitter);
  }

  function notifyDeprecation(op: Table[MethodName], h: Headers) {
    const deprecation = h.get("Deprecation") ?? undefined;
    const sunset = h.get("Sunset") ?? undefined;
    if (deprecation === undefined && sunset === undefined) return;
    const link = h.get("Link") ?? undefined;
    const successor = link?.match(/<([^>]*)>\s*;[^,]*rel="?successor-version"?/)?.[1];
    onDeprecation({ operationId: op.id, method: op.method, path: op.path, deprecation, sunset, link, successor });
  }

  async function* iterate(name: MethodName, input: Record<string, unknown> = {}, opts: CallOptions = {}) {
    let cursor: string | null | undefined = (input.query as Record<string, string> | undefined)?.cursor;
    do {
      const query = { ...(input.query as object), ...(cursor ? { cursor } : {}) };
      const r = await call(name, { ...input, query }, opts);
      if (!r.ok) throw new ApiFailure(r.error);
      const page = r.value as { data: unknown[] | null; nextCursor: string | null };
      yield* page.data ?? [];
      cursor = page.nextCursor;
    } while (cursor);
  }

  const client: Record<string, unknown> = {};
  for (const name of Object.keys(operations) as MethodName[]) {
    client[name] = (input?: Record<string, unknown>, opts?: CallOptions) => call(name, input, opts);
    if (operations[name].paginated) {
      client[`${name}All`] = (input?: Record<string, unknown>, opts?: CallOptions) => iterate(name, input, opts);
    }
  }
  return client as Client;
}

function normaliseBase(baseUrl: string): string {
  const u = new URL(baseUrl);
  const path = u.pathname.replace(/\/+$/, "");
  return `${u.origin}${path === "" ? "/v1" : path}`;
}

function fillPath(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === null) throw new TypeError(`missing path parameter ${name}`);
    return encodeURIComponent(String(v));
  });
}

/** Retry-After as seconds: delay-seconds or an HTTP-date. */
function parseRetryAfter(v: string | null): number | undefined {
  if (v === null || v.trim() === "") return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(t);
      reject(signal!.reason);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function envelope(kind: string, res: Response, attempts: number): Promise<Result<unknown>> {
  const meta: Meta = {
    status: res.status,
    requestId: res.headers.get("X-Request-Id") ?? undefined,
    headers: res.headers,
    replayed: res.headers.get("Idempotent-Replayed") === "true",
    attempts,
  };
  if (res.ok) {
    let value: unknown;
    if (res.status === 204 || kind === "none") {
      await res.body?.cancel();
      value = undefined;
    } else if (kind === "json") value = await res.json();
    else if (kind === "text") value = await res.text();
    else value = new Uint8Array(await res.arrayBuffer());
    return { ok: true, value, ...meta };
  }
  const text = await res.text();
  let problem: Partial<ApiError> & { errors?: FieldError[] | null } = {};
  try {
    problem = JSON.parse(text);
  } catch {
    // A body that is not problem+json (a proxy's page): keep the status and the text.
  }
  const error: ApiError = {
    status: res.status,
    code: problem.code ?? "http_" + res.status,
    title: problem.title ?? res.statusText,
    detail: problem.detail ?? text.slice(0, 500),
    type: problem.type ?? "about:blank",
    errors: problem.errors ?? [],
    requestId: problem.requestId ?? meta.requestId,
    retryAfter: parseRetryAfter(res.headers.get("Retry-After")),
  };
  return { ok: false, error, ...meta };
}
