// Managed wallets and swaps against the real local server, whose local chain
// functions/local starts (or the API of PLATFORMAPI_URL and its chain): a
// wallet is created and read, holds what the faucet sent, and signs a
// personal_sign message once another key approved it; a swap for one's own
// address is quoted and prepared.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "../dist/index.js";
import { startServer } from "./server.js";

const chainId = 1337;
let server;
let api;
before(async () => {
  server = await startServer();
  const first = await createClient({ baseUrl: server.baseUrl }).apiKeysCreate(
    { body: { label: "root" } },
    { creditToken: server.mintCreditToken(10) },
  );
  assert.equal(first.ok, true, JSON.stringify(first.error));
  api = createClient({ baseUrl: server.baseUrl, apiKey: first.value.secret });
});
after(async () => {
  await server?.stop();
});

test("a wallet is created, read, listed and shows the funds the chain holds", async () => {
  const created = await api.walletsCreate({ body: { label: "ops" } });
  assert.equal(created.ok, true, JSON.stringify(created.error));
  assert.equal(created.status, 201);
  const wallet = created.value;
  assert.match(wallet.address, /^0x[0-9a-fA-F]{40}$/);
  assert.ok(wallet.chainIds.includes(chainId), `chainIds ${wallet.chainIds}`);

  const read = await api.walletsRead({ path: { walletId: wallet.id } });
  assert.equal(read.ok, true);
  assert.equal(read.value.address, wallet.address);
  assert.equal(read.value.policy.revision, 1);

  const listed = [];
  for await (const w of api.walletsListAll({ query: { limit: 1 } })) listed.push(w.id);
  assert.ok(listed.includes(wallet.id), `${wallet.id} not in ${listed}`);

  server.fund(wallet.address, "ETH", "0.25");
  if (!server.external) server.fund(wallet.address, "USDC", "2.5");
  const balances = await api.walletsBalancesRead({ path: { walletId: wallet.id }, query: { chainId } });
  assert.equal(balances.ok, true, JSON.stringify(balances.error));
  const eth = balances.value.data.find((b) => b.symbol === "ETH");
  assert.equal(eth?.amount, "250000000000000000");
  assert.equal(eth.decimals, 18);
  if (!server.external) {
    const usdc = balances.value.data.find((b) => b.symbol === "USDC");
    assert.equal(usdc?.amount, "2500000");
    assert.equal(usdc.decimals, 6);
  }
  assert.ok(balances.value.blockNumber > 0);
});

test("a personal_sign signature needs another key's approval, then signs as the wallet", async () => {
  // A child key requests; a key beside it, outside its lineage, decides
  // (its parent, the root, is in the lineage and is refused).
  const child = await api.apiKeysCreate({ body: { label: "signer" } });
  assert.equal(child.ok, true, JSON.stringify(child.error));
  const signer = createClient({ baseUrl: server.baseUrl, apiKey: child.value.secret });
  const approverKey = await api.apiKeysCreate({ body: { label: "approver", scopes: ["approvals:read", "approvals:write"] } });
  assert.equal(approverKey.ok, true, JSON.stringify(approverKey.error));
  const approver = createClient({ baseUrl: server.baseUrl, apiKey: approverKey.value.secret });
  const wallet = (await signer.walletsCreate({ body: {} })).value;
  const path = { walletId: wallet.id };
  const quote = await signer.walletsSignaturesQuote({ path, body: { type: "personal_sign", message: "sign in, nonce 42" } });
  assert.equal(quote.ok, true, JSON.stringify(quote.error));
  assert.equal(quote.status, 201);
  assert.match(quote.value.digest, /^0x[0-9a-f]{64}$/);
  assert.equal(quote.value.policy.decision, "require_approval");
  const approvalId = quote.value.approvalId;
  assert.ok(approvalId);

  const early = await signer.walletsSignaturesCreate({ path, body: { quoteId: quote.value.id } });
  assert.equal(early.ok, false);
  assert.equal(early.error.status, 403);
  assert.equal(early.error.code, "approval_required");

  const own = await signer.approvalsDecide({ path: { approvalId }, body: { decision: "approve" } });
  assert.equal(own.ok, false);
  assert.equal(own.error.code, "self_approval_denied");
  const parent = await api.approvalsDecide({ path: { approvalId }, body: { decision: "approve" } });
  assert.equal(parent.ok, false);
  assert.equal(parent.error.code, "self_approval_denied");
  const decided = await approver.approvalsDecide({ path: { approvalId }, body: { decision: "approve" } });
  assert.equal(decided.ok, true, JSON.stringify(decided.error));

  const signed = await signer.walletsSignaturesCreate({ path, body: { quoteId: quote.value.id, approvalId } });
  assert.equal(signed.ok, true, JSON.stringify(signed.error));
  assert.match(signed.value.signature, /^0x[0-9a-f]{128}(1b|1c)$/);
  assert.equal(signed.value.digest, quote.value.digest);
  assert.equal(signed.value.address, wallet.address);
});

// A deployment knows chain 1337 by its RPC_URL_1337 alone: its native coin,
// not the local chain's test tokens and pool, which only the local server's
// in-process chain names.
const swapsSkip = process.env.PLATFORMAPI_URL ? "a deployment knows chain 1337 by RPC_URL_1337 alone: no test tokens, no pool" : false;

test("a swap for one's own address is quoted with an Idempotency-Key and prepared without one", { skip: swapsSkip }, async () => {
  const seen = [];
  const root = (await api.apiKeysCreate({ body: { label: "swapper" } })).value.secret;
  const recording = createClient({
    baseUrl: server.baseUrl,
    apiKey: root,
    fetch: async (url, init) => {
      seen.push({ path: new URL(url).pathname, key: new Headers(init.headers).get("Idempotency-Key") });
      return fetch(url, init);
    },
  });
  const symbols = [];
  for await (const t of recording.swapsTokensListAll({ query: { chainId, limit: 1 } })) symbols.push(t.symbol);
  assert.ok(symbols.includes("USDC") && symbols.includes("WETH"), `tokens ${symbols}`);

  const me = "0x" + "ab".repeat(20);
  const quote = await recording.swapsQuote({
    body: { fromAddress: me, fromChainId: chainId, toChainId: chainId, fromToken: "USDC", toToken: "WETH", fromAmount: "1000000" },
  });
  assert.equal(quote.ok, true, JSON.stringify(quote.error));
  const prepared = await recording.swapsPrepare({ body: { quoteId: quote.value.id } });
  assert.equal(prepared.ok, true, JSON.stringify(prepared.error));
  assert.equal(prepared.value.routeId, quote.value.routeId);
  assert.equal(prepared.value.transaction.from.toLowerCase(), me);
  assert.ok(seen.find((r) => r.path === "/v1/swaps/quote").key);
  assert.equal(seen.find((r) => r.path === "/v1/swaps/prepare").key, null);

  const route = await recording.swapsRoutesRead({ path: { routeId: prepared.value.routeId } });
  assert.equal(route.ok, true, JSON.stringify(route.error));
  assert.equal(route.value.status, "not_found");
});
