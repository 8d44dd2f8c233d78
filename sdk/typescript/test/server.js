// Starts the real local server (functions/local) on a free port with a fresh
// data directory, the way a customer runs it, and mints first-key credit
// tokens and funds addresses on its local chain with the same binary and
// DATA_DIR. PLATFORMAPI_LOCAL_BIN names a prebuilt binary (make sdk-ts-test
// builds one); otherwise it is built here.
//
// With PLATFORMAPI_URL set the tests call that API instead (make
// stack-sdk-test: the synthesized stack's front). PLATFORMAPI_LOCAL_BIN then
// mints with the environment it is given (BACKEND=aws,
// CREDIT_TOKEN_SECRET_ARN and the emulator's endpoint and credentials) and
// funds on the chain kept in PLATFORMAPI_DATA_DIR through its JSON-RPC.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

const repoRoot = resolve(import.meta.dirname, "../../..");

export async function startServer() {
  if (process.env.PLATFORMAPI_URL) return externalServer();
  const dir = mkdtempSync(join(tmpdir(), "sdk-ts-"));
  let bin = process.env.PLATFORMAPI_LOCAL_BIN;
  if (!bin) {
    bin = join(dir, "local");
    execFileSync("go", ["build", "-o", bin, "./functions/local"], { cwd: repoRoot, stdio: "inherit" });
  }
  const env = { ...process.env, ADDR: "127.0.0.1:0", DATA_DIR: join(dir, "data") };
  const child = spawn(bin, [], { env, stdio: ["ignore", "pipe", "pipe"] });
  let logs = "";
  child.stderr.on("data", (b) => (logs += b));
  const baseUrl = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start:\n${logs}`)), 60_000);
    child.on("exit", (code) => fail(new Error(`server exited with ${code}:\n${logs}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = line.match(/^listening on (\S+)/);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
  });
  return {
    baseUrl,
    mintCreditToken(credits) {
      return execFileSync(bin, ["mint-credit-token", "--credits", String(credits)], { env, encoding: "utf8" }).trim();
    },
    /** Sends amount (whole units, e.g. "2.5") of ETH, USDC or WETH to address from the local chain's faucet. */
    fund(address, asset, amount) {
      execFileSync(bin, ["fund", "--address", address, "--asset", asset, "--amount", amount], { env, encoding: "utf8" });
    },
    async stop() {
      const exited = new Promise((ok) => child.once("exit", ok));
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
    logs: () => logs,
  };
}

/** The API of PLATFORMAPI_URL, which these tests neither start nor stop. */
function externalServer() {
  const bin = process.env.PLATFORMAPI_LOCAL_BIN;
  if (!bin) throw new Error("PLATFORMAPI_URL needs PLATFORMAPI_LOCAL_BIN to mint credit tokens and fund addresses");
  const dataDir = process.env.PLATFORMAPI_DATA_DIR ?? "";
  return {
    baseUrl: process.env.PLATFORMAPI_URL,
    external: true,
    mintCreditToken(credits) {
      return execFileSync(bin, ["mint-credit-token", "--credits", String(credits)], { encoding: "utf8" }).trim();
    },
    fund(address, asset, amount) {
      execFileSync(bin, ["fund", "--data-dir", dataDir, "--address", address, "--asset", asset, "--amount", amount], { encoding: "utf8" });
    },
    async stop() {},
    logs: () => "",
  };
}
