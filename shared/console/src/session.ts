// The key the console holds, and the client that sends it. The key lives in
// this module's memory, or in sessionStorage when the user asks (it then
// survives a reload of this tab, and nothing else); it is sent only as the
// Authorization header, and only to the origin that served the page.
import { createClient, type ApiError, type Client, type components } from "../../../sdk/typescript/src/index.ts";

export type Key = components["schemas"]["Key"];

const storageKey = "platformapi.console.key";

export interface Session {
  client: Client;
  /** The key's id, read from the secret (psk_<key id>_…). */
  keyId: string;
  /** What the user may recognise the key by: the secret's first characters. */
  hint: string;
  /** The key's own record, when the key may list keys (api_keys:manage). */
  self: Key | null;
  remembered: boolean;
}

let current: Session | null = null;

export function session(): Session | null {
  return current;
}

/** The API's base URL: this page's own origin and path prefix, then /v1. */
export function apiBase(): string {
  const prefix = location.pathname.replace(/\/(v1\/)?console\/?$/, "");
  return `${location.origin}${prefix}/v1`;
}

export function keyIdOf(secret: string): string | null {
  return /^psk_(key_[0-9A-Za-z]+)_/.exec(secret)?.[1] ?? null;
}

export async function open(secret: string, remember: boolean): Promise<Session> {
  const keyId = keyIdOf(secret);
  if (!keyId) throw new Error("That is not an API key: keys start with psk_key_.");
  const client = createClient({
    baseUrl: apiBase(),
    apiKey: secret,
    maxRetries: 1,
    onDeprecation: (n) => console.warn(`${n.operationId} is deprecated`, n),
  });
  const probe = await client.apiKeysList({ query: { limit: 1 } });
  if (!probe.ok && probe.error.status === 401) throw new Error(`The server refused this key: ${probe.error.detail}`);
  const self = probe.ok ? (probe.value.data?.find((k) => k.id === keyId) ?? null) : null;
  if (remember) sessionStorage.setItem(storageKey, secret);
  else sessionStorage.removeItem(storageKey);
  current = { client, keyId, hint: secret.slice(0, 12) + "…", self, remembered: remember };
  return current;
}

export function remembered(): string | null {
  return sessionStorage.getItem(storageKey);
}

export function forget(): void {
  sessionStorage.removeItem(storageKey);
  current = null;
}

/**
 * Whether the held key may do what scope allows. Known only from the key's
 * own record: a key that cannot read it is treated as read-only, so it is
 * shown no control that would only answer 403.
 */
export function can(scope: string): boolean {
  const self = current?.self;
  return !!self && self.status === "active" && self.scopes.includes(scope);
}

/** A refused change, said for people: a 403 is what this key may not do. */
export function refused(error: ApiError, action: string): string {
  if (error.status === 403) return `This key may not ${action}. ${error.detail}`;
  return `Could not ${action}: ${error.status} ${error.code}. ${error.detail}`;
}

/** A failed call, said for people: a 403 is what this key cannot see, not an error page. */
export function describe(error: ApiError, what: string): string {
  if (error.status === 403) return `This key cannot see ${what}. ${error.detail}`;
  if (error.status === 401) return `The server no longer accepts this key (${error.code}). ${error.detail}`;
  return `Could not load ${what}: ${error.status} ${error.code}. ${error.detail}`;
}
