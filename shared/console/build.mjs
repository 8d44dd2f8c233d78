// Builds the console into the directory named by the first argument (dist,
// or a temporary one for make console-check): console.js and console.css,
// minified by esbuild, and index.html copied. The output depends only on
// the sources and the pinned versions, so a rebuild is byte-identical.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2] ?? "dist";
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { console: "src/main.ts", "console-style": "src/console.css" },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022", "chrome110", "firefox115", "safari16"],
  outdir: out,
  entryNames: "[name]",
  legalComments: "eof",
  charset: "utf8",
  logLevel: "warning",
});
// The style sheet's entry has a name of its own (two entries cannot share
// one); it is served as console.css.
renameSync(join(out, "console-style.css"), join(out, "console.css"));
copyFileSync("src/index.html", join(out, "index.html"));
