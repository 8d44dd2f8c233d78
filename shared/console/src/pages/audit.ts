// Audit events: one row per authenticated request, with the list's filters
// and paging.
import type { components } from "../../../../sdk/typescript/src/index.ts";
import { clear, credits, idCode, opCode, field, h, select, table, time } from "../dom.ts";
import { describe, type Session } from "../session.ts";
import { notice, Pager } from "../ui.ts";

type Event = components["schemas"]["Event"];

export async function audit(main: HTMLElement, s: Session): Promise<void> {
  const since = h("input", { type: "date", name: "since" });
  const until = h("input", { type: "date", name: "until" });
  const keyId = h("input", { type: "text", name: "keyId", placeholder: "key_…", spellcheck: "false" });
  const operation = h("input", { type: "text", name: "operation", placeholder: "services.invoke", spellcheck: "false" });
  const status = h("input", { type: "text", name: "status", inputmode: "numeric", pattern: "[1-5][0-9][0-9]", maxlength: 3, placeholder: "429" });
  const limit = select("limit", [["20", "20"], ["50", "50"], ["100", "100"]], "20");
  const form = h(
    "form",
    { class: "filters", "aria-label": "Audit event filters" },
    field("From (UTC)", since),
    field("Before (UTC)", until),
    field("Key", keyId, "The key or one of its descendants"),
    field("Operation", operation),
    field("HTTP status", status),
    field("Per page", limit),
    h("div", { class: "field" }, h("button", { type: "submit" }, "Apply filters")),
  );
  const out = h("div");
  const pager = new Pager("audit events", async (cursor) => {
    const query = {
      ...(since.value ? { since: since.value + "T00:00:00Z" } : {}),
      ...(until.value ? { until: until.value + "T00:00:00Z" } : {}),
      ...(keyId.value.trim() ? { keyId: keyId.value.trim() } : {}),
      ...(operation.value.trim() ? { operation: operation.value.trim() } : {}),
      ...(status.value.trim() ? { status: status.value.trim() } : {}),
      limit: Number(limit.value),
      ...(cursor ? { cursor } : {}),
    };
    const r = await s.client.auditEventsList({ query });
    if (!r.ok) {
      clear(out, notice(describe(r.error, "audit events"), "denied"));
      return null;
    }
    clear(
      out,
      table<Event>(
        "Audit events, newest first",
        [
          { label: "When", value: (e) => time(e.occurredAt) },
          { label: "Operation", value: (e) => opCode(e.operation) },
          { label: "Request", value: (e) => [e.method, " ", opCode(e.path)] },
          { label: "Status", value: (e) => [h("span", { class: e.status >= 400 ? "bad" : "good" }, String(e.status)), e.code ? [h("br"), h("small", { class: "muted" }, opCode(e.code))] : ""] },
          { label: "Credits", numeric: true, value: (e) => credits(e.chargedCredits) },
          { label: "Key", value: (e) => idCode(e.keyId) },
          { label: "End user", value: (e) => e.endUser ?? "—" },
          { label: "Request id", value: (e) => [idCode(e.requestId), e.idempotentReplayed ? " (replayed)" : ""] },
        ],
        r.value.data ?? [],
        "No audit events match.",
      ),
    );
    return r.value.nextCursor;
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void pager.reset();
  });
  main.append(form, out, pager.el);
  await pager.reset();
}
