// A method for every operationId of the repository's OpenAPI document: fails
// when the document grows an operation and src/operations.ts was not
// regenerated (make sdk-ts-generate).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createClient, operations } from "../dist/index.js";
import { methodName } from "../scripts/names.mjs";

const doc = JSON.parse(readFileSync(new URL("../../../shared/groups/public/publicapi/openapi.json", import.meta.url), "utf8"));

test("every operationId of the OpenAPI document has a client method with its route", () => {
  const client = createClient({ baseUrl: "http://127.0.0.1:1" });
  const missing = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op?.operationId) continue;
      const name = methodName(op.operationId);
      const entry = operations[name];
      if (typeof client[name] !== "function" || entry?.path !== path || entry?.method !== method.toUpperCase()) {
        missing.push(`${op.operationId} (${method.toUpperCase()} ${path})`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test("operations that require an Idempotency-Key are marked idempotent, and only those", () => {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (!op?.operationId) continue;
      const required = (op.parameters ?? []).some((p) => p.name === "Idempotency-Key" && p.required);
      assert.equal(operations[methodName(op.operationId)]?.idempotent, required, op.operationId);
    }
  }
});
