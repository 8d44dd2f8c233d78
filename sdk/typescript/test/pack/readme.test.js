// The SDK as a user gets it: the tarball `make sdk-ts-pack` wrote
// (PLATFORMAPI_SDK_TARBALL) installed with `npm install` into a fresh npm
// project outside the repository, and the README's first program run there as
// written. The program is taken from the README, so the two cannot drift;
// the freshly started server's URL comes in BASE_URL and its credit token in
// TOKEN, as the README says to run it. A `// → text` comment
// says what the lines above it print (`…` stands for anything), in order, the
// convention of .ci/newcomer.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative, resolve } from "node:path";
import { startServer } from "../server.js";

const sdkDir = resolve(import.meta.dirname, "../..");
const repoRoot = resolve(sdkDir, "../..");
const readme = readFileSync(join(sdkDir, "README.md"), "utf8");
const tarball = process.env.PLATFORMAPI_SDK_TARBALL;
/** BASE_URL's default in the program: the server's default ADDR. */
const readmeURL = "http://127.0.0.1:8080";

/** The fenced block after the README's <!-- first-program … --> marker. */
function firstProgram() {
  const m = readme.match(/^<!-- first-program[^\n]*\n```js\n([\s\S]*?)\n```$/m);
  assert.ok(m, "README.md has no <!-- first-program --> ```js block");
  return m[1];
}

function npm(args, cwd) {
  return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

let project;
let server;
before(async () => {
  assert.ok(tarball, "PLATFORMAPI_SDK_TARBALL is not set: run `make sdk-ts-pack-test`");
  project = mkdtempSync(join(tmpdir(), "sdk-ts-user-"));
  assert.ok(relative(repoRoot, project).startsWith(".."), `${project} is inside the repository`);
  server = await startServer();
});
after(async () => {
  await server?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

test("the README installs the tarball that make sdk-ts-pack writes", () => {
  const version = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")).version;
  assert.equal(basename(tarball), `platformapi-sdk-${version}.tgz`);
  const install = readme.indexOf("npm install ~/src/platformapi/.cache/sdk-ts/" + basename(tarball));
  assert.ok(install >= 0, `README.md does not say npm install …/.cache/sdk-ts/${basename(tarball)}`);
  assert.ok(install < readme.indexOf("<!-- first-program"), "README.md shows the program before the install");
});

test("the packed tarball holds only the built package and no runtime dependencies", () => {
  const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort();
  for (const f of files) assert.match(f, /^package\/(dist\/[^/]+\.(js|d\.ts)|package\.json|README\.md)$/);
  assert.ok(files.includes("package/dist/index.js") && files.includes("package/dist/index.d.ts"), files.join("\n"));
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }));
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"]) {
    assert.equal(manifest[field], undefined, `the package declares ${field}`);
  }
});

test("the README's first program runs as written in a fresh npm project that installed the tarball", () => {
  npm(["init", "-y"], project);
  // Offline: a package without dependencies needs nothing from a registry.
  npm(["install", "--offline", tarball], project);
  assert.deepEqual(readdirSync(join(project, "node_modules")).filter((n) => !n.startsWith(".")), ["@platformapi"]);
  assert.deepEqual(readdirSync(join(project, "node_modules/@platformapi")), ["sdk"]);

  const program = firstProgram();
  assert.ok(program.includes("process.env.BASE_URL"), "the program does not read BASE_URL");
  assert.equal(program.split(readmeURL).length - 1, 1, `the program names ${readmeURL} other than as BASE_URL's default`);
  writeFileSync(join(project, "first.mjs"), program);

  const out = execFileSync("node", ["first.mjs"], {
    cwd: project,
    env: { ...process.env, BASE_URL: server.baseUrl, TOKEN: server.mintCreditToken(50) },
    encoding: "utf8",
  });
  const expected = [...program.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1].trimEnd());
  assert.ok(expected.length > 0, "the program has no // → lines");
  let at = 0;
  for (const want of expected) {
    const pattern = new RegExp(want.split("…").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*?"));
    const m = pattern.exec(out.slice(at));
    assert.ok(m, `the output does not show ${JSON.stringify(want)} after what came before:\n${out}`);
    at += m.index + m[0].length;
  }
});

test("the README's first program type-checks as TypeScript against the installed package", () => {
  // Runs after the install above (node:test runs a file's tests in order).
  const tsc = join(sdkDir, "node_modules/typescript/bin/tsc");
  const args = [tsc, "--noEmit", "--allowJs", "--checkJs", "--strict", "--target", "es2022", "--module", "nodenext",
    "--typeRoots", join(sdkDir, "node_modules/@types"), "--types", "node", "first.mjs"];
  try {
    execFileSync(process.execPath, args, { cwd: project, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    assert.fail(`tsc: ${err.stdout}${err.stderr}`);
  }
});
