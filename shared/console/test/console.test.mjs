// The console in a real browser (make console-test): Playwright drives
// Debian's Chromium against the real local server. Traffic goes through
// several groups first; then the console, with the root key pasted, must
// show it: the usage chart's data counts the requests made, the ledger sums
// to the balance shown, revoking a child key in the tree makes the API
// answer 401 to it, approving a pending approval lets the gated call
// through; and a read-only key sees no write control. Screenshots at 1280
// and 390 px wide land in CONSOLE_SCREENSHOTS (default .cache/console).
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { chromium } from "playwright-core";
import { startServer } from "./server.mjs";

const shots = process.env.CONSOLE_SCREENSHOTS ?? resolve(import.meta.dirname, "../../../.cache/console");
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let server, browser, receiver, hookURL;
let idem = 0;
const keys = {};

async function call(secret, method, path, body, headers = {}) {
  const h = { ...headers };
  if (secret) h.Authorization = `Bearer ${secret}`;
  if (method !== "GET") h["Idempotency-Key"] = `console-test-${++idem}`;
  if (body !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(server.baseUrl + "/v1" + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function ok(secret, method, path, body, headers) {
  const r = await call(secret, method, path, body, headers);
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The EIP-712 "Mail" example. */
const mail = {
  types: {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ],
    Person: [
      { name: "name", type: "string" },
      { name: "wallet", type: "address" },
    ],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person" },
      { name: "contents", type: "string" },
    ],
  },
  primaryType: "Mail",
  domain: { name: "Ether Mail", version: "1", chainId: 1, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" },
  message: {
    from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents: "Hello, Bob!",
  },
};

/** The exact number of requests per operation this test makes, for the ones the console itself never calls. */
const made = { "projects.create": 0, "projects.list": 0, "services.invoke.cloud-superbrain.memory.write": 0 };

async function newPage(width) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems = [];
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && !/status of 40[134]/.test(m.text()) && problems.push(`console: ${m.text()}`));
  return { page, context, problems };
}

async function signIn(page, secret) {
  await page.goto(server.baseUrl + "/console");
  await page.getByLabel("API key").fill(secret);
  await page.getByRole("button", { name: "Use this key" }).click();
  await page.locator("#held-key").waitFor();
}

async function go(page, path) {
  await page.getByRole("navigation", { name: "Console pages" }).getByRole("link", { name: path.title }).click();
  await page.waitForSelector(`main[data-page="${path.name}"] [aria-busy]`, { state: "detached" });
  await page.waitForSelector(`main[data-page="${path.name}"]`);
}

const pages = {
  overview: { name: "overview", title: "Overview" },
  usage: { name: "usage", title: "Usage and ledger" },
  keys: { name: "keys", title: "Keys" },
  audit: { name: "audit", title: "Audit events" },
  webhooks: { name: "webhooks", title: "Webhooks" },
  approvals: { name: "approvals", title: "Approvals" },
};

/** Every form control has a label, every button a name. */
async function unlabelled(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll("input, select, textarea")) {
      if (!(el.labels?.length || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby"))) out.push(el.outerHTML.slice(0, 80));
    }
    for (const el of document.querySelectorAll("button")) {
      if (!(el.textContent.trim() || el.getAttribute("aria-label"))) out.push(el.outerHTML.slice(0, 80));
    }
    return out;
  });
}

/**
 * What sticks out sideways: the page wider than the window, or a table,
 * legend or form wider than its box (closed <details> opened first, so the
 * chart's data table is measured too).
 */
async function overflow(page) {
  return page.evaluate(() => {
    for (const d of document.querySelectorAll("main details")) d.open = true;
    const out = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) out.push(`page ${root.scrollWidth} > ${root.clientWidth}`);
    for (const el of document.querySelectorAll(".table-wrap, ul.chart-legend, nav ul, .chart-plot, form")) {
      const inner = el.matches(".table-wrap") ? el.querySelector("table") : el;
      const wide = Math.max(el.scrollWidth, inner?.offsetWidth ?? 0);
      if (wide > el.clientWidth + 1) out.push(`${el.className || el.tagName} "${el.getAttribute("aria-label") ?? ""}" ${wide} > ${el.clientWidth}`);
    }
    for (const d of document.querySelectorAll("main details")) d.open = false;
    return out;
  });
}

/** The page's and each table's width against its box, for the log. */
async function widths(page) {
  return page.evaluate(() => {
    const root = document.documentElement;
    const tables = [...document.querySelectorAll("main .table-wrap")]
      .filter((w) => w.offsetParent)
      .map((w) => `${w.getAttribute("aria-label")} ${w.querySelector("table").offsetWidth}/${w.clientWidth}`);
    return [`page ${root.scrollWidth}/${root.clientWidth}`, ...tables].join("; ");
  });
}

describe("the console", () => {
  before(async () => {
    let hits = 0;
    receiver = createServer((req, res) => {
      req.resume();
      // The first delivery fails, so the page has attempts and an error to show.
      res.writeHead(++hits === 1 ? 500 : 204).end();
    });
    await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
    hookURL = `http://127.0.0.1:${receiver.address().port}/hook`;
    server = await startServer({ ALLOW_PRIVATE_WEBHOOKS: "true" });
    browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
    mkdirSync(shots, { recursive: true });

    const first = await ok(null, "POST", "/api-keys", { label: "root" }, { "X-Service-Credit-Token": server.mintCreditToken(40) });
    keys.root = first.secret;
    keys.rootId = first.id;
    const child = await ok(keys.root, "POST", "/api-keys", { label: "ci-deployer", scopes: ["projects:read", "projects:write", "api_keys:manage"] });
    keys.child = child;
    keys.grandchild = await ok(child.secret, "POST", "/api-keys", { label: "ci-step", scopes: ["projects:read"] });
    keys.reader = await ok(keys.root, "POST", "/api-keys", {
      label: "dashboard-reader",
      scopes: ["credits:read", "usage:read", "audit:read", "approvals:read", "webhooks:read"],
    });
    keys.worker = await ok(keys.root, "POST", "/api-keys", {
      label: "memory-worker",
      scopes: ["services:invoke", "approvals:write"],
      allowedServices: ["cloud-superbrain"],
      allowedOperations: ["services.invoke.cloud-superbrain.memory.write", "services.invoke.cloud-superbrain.memory.delete", "approvals.create", "approvals.decide"],
    });

    // Traffic through the projects, services, credits and webhooks groups.
    for (const name of ["shop", "blog", "crm"]) {
      await ok(keys.root, "POST", "/projects", { name });
      made["projects.create"]++;
    }
    for (let i = 0; i < 2; i++) {
      await ok(keys.root, "GET", "/projects");
      made["projects.list"]++;
    }
    let memoryId;
    for (let i = 0; i < 4; i++) {
      const r = await ok(keys.worker.secret, "POST", "/services/cloud-superbrain/invoke", { operationId: "memory.write", input: { text: `note ${i}` } });
      memoryId = r.result.memoryId;
      made["services.invoke.cloud-superbrain.memory.write"]++;
    }
    await ok(keys.root, "GET", "/credits/balance");
    await ok(keys.root, "POST", "/webhooks", { url: hookURL, events: ["*"], description: "ops receiver" });
    await ok(keys.root, "POST", "/projects", { name: "after-hook" });
    made["projects.create"]++;

    // A signature over EIP-712 typed data, which a new wallet's policy sends for approval.
    keys.signer = await ok(keys.root, "POST", "/api-keys", { label: "signer", scopes: ["wallets:create", "wallets:sign", "wallets:read"] });
    // No key of the signer's lineage (the root above it included) may decide its approval: a key beside it does.
    // It reads its own record (api_keys:manage), or the console would show it no write control.
    keys.approver = await ok(keys.root, "POST", "/api-keys", { label: "approver", scopes: ["approvals:read", "approvals:write", "api_keys:manage"] });
    keys.wallet = await ok(keys.signer.secret, "POST", "/wallets", { label: "ops" });
    keys.sigQuote = await ok(keys.signer.secret, "POST", `/wallets/${keys.wallet.id}/signatures/quote`, { type: "eip712", typedData: mail });
    assert.ok(keys.sigQuote.approvalId, "the signature needs no approval");

    // Traffic through enough operations that the chart has more series than colours (≥ 19).
    for (const path of ["/services", "/capabilities", "/actions", "/credits/ledger", `/projects/${(await ok(keys.root, "GET", "/projects")).data[0].id}`,
      "/audit-events", "/usage?bucketWidth=1h", "/wallets", `/wallets/${keys.wallet.id}`, "/runs", "/approvals", "/webhooks", "/webhook-deliveries", "/swaps/tokens", "/api-keys"]) {
      await call(keys.root, "GET", path);
    }
    made["projects.list"]++;
    for (const name of ["ledger", "billing"]) {
      await ok(keys.root, "POST", "/projects", { name });
      made["projects.create"]++;
    }
    // A key with limits of its own: one on every operation, one on a single operation.
    keys.limited = await ok(keys.root, "POST", "/api-keys", {
      label: "rate-limited",
      scopes: ["projects:read"],
      limits: { "*": { requestsPerMinute: 60 }, "projects.list": { requestsPerMinute: 5, maxConcurrent: 2 } },
    });

    // A gated call: memory.delete needs an approval; the worker asks for one.
    keys.gated = { operationId: "memory.delete", input: { memoryId } };
    keys.approval = await ok(keys.worker.secret, "POST", "/approvals/service-actions", { serviceId: "cloud-superbrain", ...keys.gated });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    receiver?.close();
  });

  test("the console answers under its strict policy and holds the key it says", async () => {
    const { page, context, problems } = await newPage(1280);
    const res = await page.goto(server.baseUrl + "/console");
    const csp = res.headers()["content-security-policy"];
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    await page.getByText("A narrow read-only key").waitFor();
    await page.screenshot({ path: join(shots, "sign-in-1280.png") });
    await signIn(page, keys.root);
    const held = await page.locator("#held-key").textContent();
    assert.match(held, new RegExp(`root \\(${keys.rootId}\\)`));
    assert.match(held, /kept in memory only/);
    assert.ok(!held.includes(keys.root), "the page shows the whole secret");
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    await page.locator("#balance").waitFor();
    await page.screenshot({ path: join(shots, "overview-1280.png"), fullPage: true });
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("audit events page forward and back, and filter by operation", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.audit);
    const ids = () => page.locator("main tbody tr").evaluateAll((rows) => rows.map((r) => r.textContent));
    const first = await ids();
    assert.equal(first.length, 20);
    await page.getByRole("button", { name: "Next page of audit events" }).click();
    await page.getByText("Page 2").waitFor();
    const second = await ids();
    assert.ok(second.length > 0 && !second.some((r) => first.includes(r)), "page 2 repeats page 1");
    await page.getByRole("button", { name: "Previous page of audit events" }).click();
    await page.getByText("Page 1").waitFor();
    assert.ok(await page.getByRole("button", { name: "Previous page of audit events" }).isDisabled());
    await page.getByLabel("Operation").fill("projects.create");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction((n) => document.querySelectorAll("main tbody tr").length === n, made["projects.create"]);
    const ops = await page.locator("main tbody tr td:nth-child(2)").allTextContents();
    assert.deepEqual(new Set(ops), new Set(["projects.create"]));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a key kept for the tab survives a reload, and Forget key drops it", async () => {
    const { page, context, problems } = await newPage(1280);
    await page.goto(server.baseUrl + "/v1/console");
    await page.getByLabel("API key").fill(keys.reader.secret);
    await page.getByLabel(/Keep it until this tab closes/).check();
    await page.getByRole("button", { name: "Use this key" }).click();
    assert.match(await page.locator("#held-key").textContent(), /dashboard-reader|kept in this tab's sessionStorage/);
    await page.reload();
    await page.locator("#held-key").waitFor();
    assert.match(await page.locator("#held-key").textContent(), new RegExp(keys.reader.id));
    await page.getByRole("button", { name: "Forget key" }).click();
    await page.getByLabel("API key").waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("the usage chart has drawn the recorded requests and the ledger sums to the balance shown", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    const balance = Number(await page.locator("#balance").getAttribute("data-credits"));
    assert.ok(balance > 0 && balance < 40, `balance ${balance}: the invokes were charged`);

    await go(page, pages.usage);
    const chart = page.locator('table[data-chart="stack"]').first();
    await chart.waitFor({ state: "attached" });
    const drawn = await chart.evaluate((t) => {
      const sums = {};
      for (const td of t.querySelectorAll("td[data-series]")) sums[td.dataset.series] = (sums[td.dataset.series] ?? 0) + Number(td.dataset.value);
      return sums;
    });
    for (const [op, n] of Object.entries(made)) assert.equal(drawn[op], n, `chart: ${op}`);
    assert.ok(drawn["credits.balance.read"] >= 1);
    assert.equal(await page.locator(".chart-plot canvas").count(), 1, "uPlot drew no canvas");
    // Grouped by key, the worker's requests are its own series.
    await page.getByLabel("Group by").selectOption("key");
    await page.waitForFunction((id) => !!document.querySelector(`table[data-chart="stack"] td[data-series="${id}"]`), keys.worker.id);

    await page.getByLabel("Per page").selectOption("100");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-amount]").length > 0);
    const amounts = await page.locator("[data-amount]").evaluateAll((els) => els.map((e) => Number(e.dataset.amount)));
    const micro = (n) => Math.round(n * 1e6);
    assert.equal(amounts.reduce((a, n) => a + micro(n), 0), micro(balance), `ledger ${amounts.join(" ")} vs balance ${balance}`);
    assert.ok(amounts.length >= 5, "a grant and the charges");

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: /Export the ledger/ }).click()]);
    const csv = readFileSync(await download.path(), "utf8").trim().split("\r\n");
    assert.equal(csv.length, amounts.length + 1);
    assert.match(csv[0], /^id,occurredAt,type,amountCredits/);
    await page.screenshot({ path: join(shots, "usage-1280.png"), fullPage: true });
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("revoking a child key from the tree makes the API answer 401 to it and to its descendants", async () => {
    assert.equal((await call(keys.child.secret, "GET", "/projects")).status, 200);
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.keys);
    const card = page.locator(`article[data-key-id="${keys.child.id}"]`);
    await card.getByRole("button", { name: "Revoke ci-deployer" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("its 1 active descendant: ci-step").waitFor();
    await page.screenshot({ path: join(shots, "keys-revoke-1280.png") });
    await dialog.getByRole("button", { name: "Revoke 2 keys" }).click();
    await page.locator(`article[data-key-id="${keys.child.id}"] .badge-revoked`).waitFor();
    assert.equal((await call(keys.child.secret, "GET", "/projects")).status, 401);
    assert.equal((await call(keys.grandchild.secret, "GET", "/projects")).status, 401);
    assert.equal((await call(keys.root, "GET", "/projects")).status, 200);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("approving a pending approval lets the gated call through", async () => {
    const before = await call(keys.worker.secret, "POST", "/services/cloud-superbrain/invoke", { ...keys.gated, approvalId: keys.approval.id });
    assert.ok(before.status >= 400, `the gated call went through unapproved: ${before.status}`);
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.approvals);
    const card = page.locator(`article[data-approval-id="${keys.approval.id}"]`);
    await card.getByText(keys.gated.input.memoryId).first().waitFor();
    await page.screenshot({ path: join(shots, "approval-pending-1280.png") });
    await card.getByRole("button", { name: /^Approve / }).click();
    await card.getByText("Approved: approved.").waitFor();
    const after = await call(keys.worker.secret, "POST", "/services/cloud-superbrain/invoke", { ...keys.gated, approvalId: keys.approval.id });
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a child key created in the tree works, and rolling it shows the successor's secret once", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.keys);
    await page.locator(`article[data-key-id="${keys.rootId}"]`).getByRole("button", { name: "Create a child key of root" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Label").fill("made-in-console");
    await dialog.getByRole("button", { name: "Create child key" }).click();
    const secret = await dialog.getByLabel("Child key secret", { exact: true }).inputValue();
    assert.match(secret, /^psk_key_/);
    await dialog.getByRole("button", { name: "Close" }).click();
    assert.equal((await call(secret, "GET", "/credits/balance")).status, 200);
    const made = page.locator("article", { has: page.getByRole("heading", { name: /^made-in-console/ }) });
    await made.getByRole("button", { name: "Roll made-in-console" }).click();
    await dialog.getByText("It has no active descendants.").waitFor();
    await dialog.getByLabel("The old key stops").selectOption({ label: "In 1 hour" });
    await dialog.getByRole("button", { name: "Roll" }).click();
    const successor = await dialog.getByLabel("New secret", { exact: true }).inputValue();
    assert.equal((await call(successor, "GET", "/credits/balance")).status, 200);
    assert.equal((await call(secret, "GET", "/credits/balance")).status, 200, "the rolled key works until the chosen time");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a delivery is redelivered and a webhook's secret rotated from the webhooks page", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.webhooks);
    await page.getByRole("button", { name: /^Redeliver webhook\.created / }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Redeliver" }).click();
    await dialog.getByText(/^Queued as whd_/).waitFor();
    await dialog.getByRole("button", { name: "Close" }).click();
    await page.getByRole("button", { name: `Rotate the secret of ${hookURL}` }).click();
    await dialog.getByRole("button", { name: "Rotate secret" }).click();
    assert.match(await dialog.getByLabel("New signing secret", { exact: true }).inputValue(), /^whsec_/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a signature's approval shows the typed data it signs, and approving it lets the signature through", async () => {
    const body = { quoteId: keys.sigQuote.id, approvalId: keys.sigQuote.approvalId };
    const refused = await call(keys.root, "POST", `/approvals/${keys.sigQuote.approvalId}`, { decision: "approve" });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.code, "self_approval_denied");
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.approver.secret);
    await go(page, pages.approvals);
    const card = page.locator(`article[data-approval-id="${keys.sigQuote.approvalId}"]`);
    await card.getByText("A signature over EIP-712 typed data:").waitFor();
    const terms = await card.locator(".decoded").evaluate((d) => d.textContent);
    assert.match(terms, /Primary typeMail/);
    assert.match(terms, /Domain nameEther Mail/);
    assert.match(terms, /Domain verifyingContract0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC/);
    await card.getByText(/"contents": "Hello, Bob!"/).first().waitFor();
    await card.getByText(keys.sigQuote.digest).first().waitFor();
    await page.screenshot({ path: join(shots, "approval-signature-1280.png"), fullPage: true });
    await card.getByRole("button", { name: /^Approve / }).click();
    await card.getByText("Approved: approved.").waitFor();
    const signed = await call(keys.signer.secret, "POST", `/wallets/${keys.wallet.id}/signatures`, body);
    assert.equal(signed.status, 201, JSON.stringify(signed.body));
    assert.match(signed.body.signature, /^0x[0-9a-f]{130}$/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("every page renders at 1280 and 390 px, every control labelled, reachable by keyboard", async (t) => {
    for (const width of [1280, 390]) {
      const { page, context, problems } = await newPage(width);
      await signIn(page, keys.root);
      for (const p of Object.values(pages)) {
        await go(page, p);
        assert.deepEqual(await unlabelled(page), [], `${p.name} at ${width}`);
        if (p === pages.usage || p === pages.overview) await page.locator(".chart-plot canvas").first().waitFor();
        if (p === pages.usage) await page.locator("[data-amount]").first().waitFor();
        if (p === pages.webhooks) await page.locator("td .badge").first().waitFor();
        t.diagnostic(`${p.name} at ${width} px: ${await widths(page)}`);
        assert.deepEqual(await overflow(page), [], `${p.name} at ${width} px sticks out`);
        await page.screenshot({ path: join(shots, `${p.name}-${width}.png`), fullPage: true });
      }
      assert.equal(await page.locator("text=Something went wrong").count(), 0);
      // From the top: the skip link, then the header's controls, then the page links.
      await page.click(".brand");
      await page.keyboard.press("Shift+Tab");
      assert.equal(await page.evaluate(() => document.activeElement.textContent), "Skip to the page");
      let guard = 0;
      while ((await page.evaluate(() => document.activeElement.textContent)) !== "Audit events" && guard++ < 10) await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await page.waitForSelector('main[data-page="audit"]');
      assert.equal(await page.evaluate(() => document.activeElement.tagName), "H1");
      assert.deepEqual(await page.evaluate(() => window.__violations), []);
      assert.deepEqual(problems, []);
      await context.close();
    }
  });

  test("the chart draws the top series by volume and the rest as other, each in a colour of its own, its legend inside its box", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.usage);
    await page.locator(".chart-plot canvas").waitFor();
    const groups = await page.locator('table[data-chart="stack"] td[data-series]').evaluateAll((tds) => {
      const sums = {};
      for (const td of tds) sums[td.dataset.series] = (sums[td.dataset.series] ?? 0) + Number(td.dataset.value);
      return sums;
    });
    assert.ok(Object.keys(groups).length >= 19, `only ${Object.keys(groups).length} operations: too few for the rule to mean anything`);
    const legend = await page.locator("ul.chart-legend li").evaluateAll((lis) => lis.map((li) => ({ name: li.dataset.legend, colour: li.dataset.colour })));
    assert.equal(legend.length, 9, `legend: ${JSON.stringify(legend)}`);
    assert.equal(new Set(legend.map((l) => l.colour)).size, legend.length, `a colour repeats: ${JSON.stringify(legend)}`);
    assert.match(legend[8].name, /^other \(\d+\)$/);
    const byVolume = Object.entries(groups).sort((a, b) => b[1] - a[1]);
    assert.deepEqual(legend.slice(0, 8).map((l) => groups[l.name]), byVolume.slice(0, 8).map(([, n]) => n), "the legend is not the top 8 by volume");
    // The rest is summed into other, so the chart counts every request.
    const otherCount = Number(legend[8].name.match(/\d+/)[0]);
    assert.equal(otherCount, byVolume.length - 8);
    // Hovering the bar says its bucket's values, largest first.
    await page.locator(".chart-plot .u-over").hover();
    await page.locator(".chart-tip").waitFor();
    assert.equal(await page.locator(".chart-tip .name").first().textContent(), legend[0].name);
    await page.screenshot({ path: join(shots, "usage-chart-1280.png") });
    assert.deepEqual(await overflow(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("the overview's chart fits its time axis to the data and says its title once", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await page.locator(".chart-plot canvas").waitFor();
    const section = page.locator('section[aria-labelledby="hourly-h"]');
    const text = await section.evaluate((s) => s.innerText);
    assert.equal(text.match(/Requests per hour/g)?.length, 1, text);
    const [lo, hi] = ((await page.locator(".chart-plot").getAttribute("data-range")) ?? "0,86400").split(",").map(Number);
    // All of this test's traffic falls in one or two hours: the axis shows a few hours, not 24.
    assert.ok(hi - lo <= 4 * 3600, `the axis spans ${(hi - lo) / 3600} hours`);
    // Figures for people: credits with grouping and decimals, times relative.
    assert.match(await page.locator("#balance").textContent(), /^\d{1,3}(,\d{3})*\.\d{2,6} credits$/);
    assert.equal(await page.locator("#spend-h").textContent(), "Spend on this account");
    await go(page, pages.audit);
    assert.match(await page.locator("main tbody tr td time").first().textContent(), /ago|now/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a key's limits are said for people, one line per operation", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.root);
    await go(page, pages.keys);
    const card = page.locator(`article[data-key-id="${keys.limited.id}"]`);
    assert.equal(await card.locator('[data-limit="*"]').textContent(), "60 requests/min on every operation");
    assert.equal(await card.locator('[data-limit="projects.list"]').textContent(), "5 requests/min, 2 at once on projects.list");
    assert.doesNotMatch(await card.textContent(), /[{}]/);
    await card.screenshot({ path: join(shots, "key-limits-1280.png") });
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a read-only sibling key sees the account's balance and spend said as its own subtree's", async () => {
    for (const width of [1280, 390]) {
      const { page, context, problems } = await newPage(width);
      await signIn(page, keys.reader.secret);
      await page.locator("#balance").waitFor();
      await page.locator("#spend-scope").waitFor();
      assert.equal(await page.locator("#spend-h").textContent(), "Spend by this key and the keys under it");
      assert.match(await page.locator("#spend-scope").textContent(), /The balance is the account's; this counts only the requests of key_\w+ and its descendants/);
      assert.deepEqual(await overflow(page), [], `read-only overview at ${width}`);
      await page.screenshot({ path: join(shots, `read-only-overview-${width}.png`), fullPage: true });
      assert.deepEqual(problems, []);
      await context.close();
    }
  });

  test("a read-only key sees what it may and no write control, and a friendly word where it may not", async () => {
    const { page, context, problems } = await newPage(1280);
    await signIn(page, keys.reader.secret);
    assert.match(await page.locator("#held-key").textContent(), /cannot read its own record/);
    for (const p of Object.values(pages)) {
      await go(page, p);
      assert.equal(await page.locator("[data-write]").count(), 0, `${p.name} shows a write control`);
      assert.equal(await page.getByRole("button", { name: /^(Approve|Reject|Revoke|Roll|Redeliver|Rotate|Create)/ }).count(), 0, p.name);
    }
    await go(page, pages.keys);
    await page.getByText("This key cannot see keys.").waitFor();
    // It sees what its own subtree did: here, nothing of its siblings' or its parent's.
    await go(page, pages.webhooks);
    await page.getByText("No webhooks.").waitFor();
    await go(page, pages.audit);
    await page.getByRole("region", { name: "Audit events, newest first" }).waitFor();
    await page.screenshot({ path: join(shots, "read-only-1280.png") });
    assert.deepEqual(problems, []);
    await context.close();
  });
});
