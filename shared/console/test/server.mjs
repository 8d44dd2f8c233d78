// Starts the real local server (functions/local) on a free port with a fresh
// data directory, as the SDK's tests do; CONSOLE_LOCAL_BIN names a prebuilt
// binary (make console-test builds one), otherwise it is built here.
// stop() ends the server and removes the directory.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

const repoRoot = resolve(import.meta.dirname, "../../..");

export async function startServer(extraEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), "console-test-"));
  let bin = process.env.CONSOLE_LOCAL_BIN;
  if (!bin) {
    bin = join(dir, "local");
    execFileSync("go", ["build", "-o", bin, "./functions/local"], { cwd: repoRoot, stdio: "inherit" });
  }
  const env = { ...process.env, ...extraEnv, ADDR: "127.0.0.1:0", DATA_DIR: join(dir, "data") };
  const child = spawn(bin, [], { env, stdio: ["ignore", "pipe", "pipe"] });
  let logs = "";
  child.stderr.on("data", (b) => (logs += b));
  const exited = new Promise((ok) => child.once("exit", ok));
  let baseUrl;
  try {
    baseUrl = await new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`server did not start:\n${logs}`)), 60_000);
      child.once("exit", (code) => fail(new Error(`server exited with ${code}:\n${logs}`)));
      createInterface({ input: child.stdout }).on("line", (line) => {
        const m = line.match(/^listening on (\S+)/);
        if (m) {
          clearTimeout(timer);
          ok(m[1]);
        }
      });
    });
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    baseUrl,
    mintCreditToken(credits) {
      return execFileSync(bin, ["mint-credit-token", "--credits", String(credits)], { env, encoding: "utf8" }).trim();
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
    logs: () => logs,
  };
}
