// The client against the real local server: the README's first requests,
// pagination, retries with one Idempotency-Key, rate limiting and the error
// envelope. Only transport behaviour that a server cannot be made to show on
// demand (a lost response, a 503, deprecation headers) is injected through a
// custom fetch that still talks to the real server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createClient, ApiFailure } from "../dist/index.js";
import { startServer } from "./server.js";

let server;
let root; // the first key's secret
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** A fetch that records each request's method, path and Idempotency-Key. */
function recordingFetch(seen, inner = fetch) {
  return async (url, init) => {
    seen.push({ method: init.method, path: new URL(url).pathname, key: new Headers(init.headers).get("Idempotency-Key") });
    return inner(url, init);
  };
}

test("the first key is created with a credit token and reads a balance of 50", async () => {
  const anon = createClient({ baseUrl: server.baseUrl });
  const created = await anon.apiKeysCreate({ body: { label: "root" } }, { creditToken: server.mintCreditToken(50) });
  assert.equal(created.ok, true, JSON.stringify(created.error));
  assert.equal(created.status, 201);
  assert.match(created.value.secret, /^psk_/);
  assert.ok(created.requestId);
  root = created.value.secret;

  const balance = await createClient({ baseUrl: server.baseUrl, apiKey: root }).creditsBalanceRead();
  assert.equal(balance.ok, true);
  assert.deepEqual(balance.value, { balance: 50, unit: "credits" });
});

test("a child key is narrower than its parent", async () => {
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root });
  const child = await client.apiKeysCreate({
    body: {
      label: "search-worker",
      scopes: ["services:invoke"],
      allowedServices: ["cloud-superbrain"],
      allowedOperations: ["services.invoke.cloud-superbrain.memory.search"],
      limits: { "*": { requestsPerMinute: 60 } },
    },
  });
  assert.equal(child.ok, true, JSON.stringify(child.error));
  assert.deepEqual(child.value.scopes, ["services:invoke"]);
  const denied = await createClient({ baseUrl: server.baseUrl, apiKey: child.value.secret }).creditsBalanceRead();
  assert.equal(denied.ok, false);
  assert.equal(denied.error.status, 403);
});

test("the list iterator follows nextCursor across pages", async () => {
  const seen = [];
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, fetch: recordingFetch(seen) });
  const created = [];
  for (const name of ["alpha", "beta", "gamma"]) {
    const r = await client.projectsCreate({ body: { name } });
    assert.equal(r.ok, true, JSON.stringify(r.error));
    created.push(r.value.id);
  }
  seen.length = 0;
  const listed = [];
  for await (const p of client.projectsListAll({ query: { limit: 1 } })) listed.push(p.id);
  for (const id of created) assert.ok(listed.includes(id), `${id} not listed`);
  assert.equal(new Set(listed).size, listed.length, "a project listed twice");
  assert.ok(seen.length >= 3, `one request per page of 1, got ${seen.length}`);

  const page = await client.projectsList({ query: { limit: 2 } });
  assert.equal(page.ok, true);
  assert.equal(page.value.data.length, 2);
  assert.equal(typeof page.value.nextCursor, "string");
});

test("invoking cloud-superbrain memory.write charges what the service reports", async () => {
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root });
  const r = await client.servicesInvoke({
    path: { serviceId: "cloud-superbrain" },
    body: { operationId: "memory.write", input: { text: "the deploy key rotates every 90 days" } },
  });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.value.status, "succeeded");
  assert.match(r.value.result.memoryId, /^mem_/);
  assert.ok(r.headers.get("X-Service-Credits-Charged"));

  // The ledger explains it: newest first, the capture after its hold, and
  // the newest balanceAfter is the balance.
  const entries = [];
  for await (const e of client.creditsLedgerListAll({ query: { limit: 2 } })) entries.push(e);
  assert.deepEqual(entries.slice(0, 2).map((e) => e.type), ["capture", "hold"]);
  assert.equal(entries.at(-1).type, "grant");
  const balance = await client.creditsBalanceRead();
  assert.equal(entries[0].balanceAfter, balance.value.balance);
});

test("a create whose response was lost is retried with the same Idempotency-Key and replayed", async () => {
  const seen = [];
  let lost = false;
  const loseFirstResponse = async (url, init) => {
    const res = await fetch(url, init);
    if (!lost && init.method === "POST") {
      lost = true;
      await res.arrayBuffer(); // the server answered and stored the response
      throw new TypeError("fetch failed: socket hang up");
    }
    return res;
  };
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, baseDelayMs: 10, fetch: recordingFetch(seen, loseFirstResponse) });
  const r = await client.projectsCreate({ body: { name: "lost-response" } });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.attempts, 2);
  assert.equal(r.replayed, true, "second attempt must be Idempotent-Replayed");
  assert.equal(seen.length, 2);
  assert.ok(seen[0].key && seen[0].key === seen[1].key, "one key for both attempts");

  const names = [];
  for await (const p of client.projectsListAll()) names.push(p.name);
  assert.equal(names.filter((n) => n === "lost-response").length, 1, "exactly one project created");
});

test("each logical call gets its own Idempotency-Key", async () => {
  const seen = [];
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, fetch: recordingFetch(seen) });
  await client.projectsCreate({ body: { name: "one" } });
  await client.projectsCreate({ body: { name: "two" } });
  await client.projectsList();
  assert.notEqual(seen[0].key, seen[1].key);
  assert.equal(seen[2].key, null, "reads send no Idempotency-Key");
});

test("a 429 answers with retryAfter and is not waited for beyond maxRetryDelayMs", async () => {
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root });
  const limited = await client.apiKeysCreate({ body: { label: "slow", limits: { "*": { requestsPerMinute: 1 } } } });
  assert.equal(limited.ok, true, JSON.stringify(limited.error));
  const slow = createClient({ baseUrl: server.baseUrl, apiKey: limited.value.secret, maxRetries: 3, maxRetryDelayMs: 500 }); // under any Retry-After (whole seconds)
  assert.equal((await slow.creditsBalanceRead()).ok, true);
  const started = Date.now();
  const r = await slow.creditsBalanceRead();
  assert.equal(r.ok, false);
  assert.equal(r.error.status, 429);
  assert.equal(r.attempts, 1, "a Retry-After above maxRetryDelayMs is returned, not waited for");
  assert.ok(r.error.retryAfter >= 1, `retryAfter ${r.error.retryAfter}`);
  assert.ok(Date.now() - started < 1000);
  assert.equal(typeof r.error.code, "string");
});

test("429 and 503 are retried after Retry-After with the same Idempotency-Key", async () => {
  const seen = [];
  const statuses = [429, 503];
  const busyTwice = async (url, init) => {
    const status = statuses.shift();
    if (status) return new Response("{}", { status, headers: { "Retry-After": "1", "Content-Type": "application/problem+json" } });
    return fetch(url, init);
  };
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, baseDelayMs: 1, fetch: recordingFetch(seen, busyTwice) });
  const started = Date.now();
  const r = await client.projectsCreate({ body: { name: "after-busy" } });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.attempts, 3);
  assert.ok(Date.now() - started >= 2000, "waited Retry-After twice");
  assert.equal(new Set(seen.map((s) => s.key)).size, 1);
});

test("transport failures throw only after the retries, and only for replay-safe calls", async () => {
  let calls = 0;
  const down = async () => {
    calls++;
    throw new TypeError("fetch failed");
  };
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, maxRetries: 2, baseDelayMs: 1, fetch: down });
  await assert.rejects(client.projectsCreate({ body: { name: "x" } }), TypeError);
  assert.equal(calls, 3);
  calls = 0;
  await assert.rejects(client.databasesQuery({ body: { sql: "select 1" } }), TypeError);
  assert.equal(calls, 1, "a POST without Idempotency-Key is not sent twice");
});

test("an AbortSignal ends the wait between retries", async () => {
  const busy = async () => new Response("{}", { status: 503, headers: { "Retry-After": "10" } });
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, maxRetries: 5, fetch: busy });
  const started = Date.now();
  await assert.rejects(client.creditsBalanceRead(undefined, { signal: AbortSignal.timeout(200) }), { name: "TimeoutError" });
  assert.ok(Date.now() - started < 5000);
});

test("a 404 is an error envelope, not an exception", async () => {
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root });
  const r = await client.projectsRead({ path: { projectId: "prj_doesnotexist" } });
  assert.equal(r.ok, false);
  assert.equal(r.status, 404);
  assert.equal(r.error.status, 404);
  assert.equal(r.error.code, "not_found");
  assert.equal(typeof r.error.title, "string");
  assert.equal(typeof r.error.detail, "string");
  assert.ok(Array.isArray(r.error.errors));
  assert.equal(r.error.requestId, r.requestId);
  assert.ok(r.requestId);
  assert.equal(r.error.retryAfter, undefined);
  assert.equal(r.value, undefined);
});

test("a failed page ends the list iterator with ApiFailure", async () => {
  const client = createClient({ baseUrl: server.baseUrl, apiKey: "psk_invalid" });
  await assert.rejects(async () => {
    for await (const _ of client.projectsListAll());
  }, (err) => err instanceof ApiFailure && err.error.status === 401);
});

test("Deprecation, Sunset and Link headers reach onDeprecation", async () => {
  const notices = [];
  const deprecated = async (url, init) => {
    const res = await fetch(url, init);
    const headers = new Headers(res.headers);
    headers.set("Deprecation", "@1767225600");
    headers.set("Sunset", "Wed, 01 Jul 2026 00:00:00 GMT");
    headers.set("Link", '<https://api.example.com/v1/credits/balance-v2>; rel="successor-version"');
    return new Response(res.body, { status: res.status, headers });
  };
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root, fetch: deprecated, onDeprecation: (n) => notices.push(n) });
  const r = await client.creditsBalanceRead();
  assert.equal(r.ok, true);
  assert.equal(notices.length, 1);
  assert.deepEqual(notices[0], {
    operationId: "credits.balance.read",
    method: "GET",
    path: "/credits/balance",
    deprecation: "@1767225600",
    sunset: "Wed, 01 Jul 2026 00:00:00 GMT",
    link: '<https://api.example.com/v1/credits/balance-v2>; rel="successor-version"',
    successor: "https://api.example.com/v1/credits/balance-v2",
  });
  const plain = createClient({ baseUrl: server.baseUrl, apiKey: root, onDeprecation: (n) => notices.push(n) });
  await plain.creditsBalanceRead();
  assert.equal(notices.length, 1, "no notice without the headers");
});

test("every operationId of the served /openapi.json has a client method", async () => {
  const { methodName } = await import("../scripts/names.mjs");
  const client = createClient({ baseUrl: server.baseUrl });
  const doc = await client.openapiRead();
  assert.equal(doc.ok, true);
  const missing = [];
  for (const item of Object.values(doc.value.paths)) {
    for (const op of Object.values(item)) {
      if (op?.operationId && typeof client[methodName(op.operationId)] !== "function") missing.push(op.operationId);
    }
  }
  assert.deepEqual(missing, []);
});

test("a file uploads from bytes and downloads as bytes", async () => {
  const client = createClient({ baseUrl: server.baseUrl, apiKey: root });
  const bytes = new TextEncoder().encode("hello from the SDK");
  const up = await client.filesCreate({ body: bytes }, { headers: { "X-File-Name": "hello.txt", "Content-Type": "text/plain" } });
  assert.equal(up.ok, true, JSON.stringify(up.error));
  const down = await client.filesContentRead({ path: { fileId: up.value.id } });
  assert.equal(down.ok, true, JSON.stringify(down.error));
  assert.ok(down.value instanceof Uint8Array);
  assert.equal(new TextDecoder().decode(down.value), "hello from the SDK");
});
