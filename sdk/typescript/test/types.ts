// Compile-only checks of the generated typings (tsc --noEmit in
// make sdk-ts-test): each @ts-expect-error fails the build when the line
// below it stops being a type error, so a loosened type is caught.
import { createClient } from "../src/index.js";

const client = createClient({ baseUrl: "http://127.0.0.1:8080", apiKey: "psk_x" });

export async function checks() {
  const created = await client.projectsCreate({ body: { name: "a" } });
  if (created.ok) {
    const id: string = created.value.id;
    void id;
  } else {
    const code: string = created.error.code;
    const retry: number | undefined = created.error.retryAfter;
    void code, retry;
  }
  // @ts-expect-error a create needs its body
  await client.projectsCreate();
  // @ts-expect-error path parameters are required
  await client.projectsRead({});
  // @ts-expect-error limit is a number
  await client.projectsList({ query: { limit: "2" } });
  // @ts-expect-error unknown body fields are rejected
  await client.projectsCreate({ body: { name: "a", colour: "red" } });

  const balance = await client.creditsBalanceRead();
  if (balance.ok) {
    const n: number = balance.value.balance;
    void n;
  }
  for await (const p of client.projectsListAll({ query: { limit: 10 } })) {
    const name: string = p.name;
    void name;
  }
  // @ts-expect-error only list operations have iterators
  client.projectsCreateAll;
  await client.servicesInvoke({ path: { serviceId: "cloud-superbrain" }, body: { operationId: "memory.write", input: {} } });
}

export async function walletChecks() {
  const w = await client.walletsCreate({ body: { label: "ops" } });
  if (w.ok) {
    const address: string = w.value.address;
    void address;
  }
  // @ts-expect-error a signature quote needs its wallet
  await client.walletsSignaturesQuote({ body: { type: "personal_sign", message: "hi" } });
  // @ts-expect-error the signature type is personal_sign or eip712
  await client.walletsSignaturesQuote({ path: { walletId: "wal_1" }, body: { type: "raw", message: "hi" } });
  for await (const t of client.swapsTokensListAll({ query: { chainId: 1337 } })) {
    const symbol: string = t.symbol;
    void symbol;
  }
  // @ts-expect-error swap tokens are listed per chain: chainId is required
  await client.swapsTokensList({ query: {} });
}
