// Usage: a stacked chart of requests or credits per hour or day, grouped as
// /usage groups, and the ledger below it with its filters, paging and a CSV
// export.
import type { components } from "../../../../sdk/typescript/src/index.ts";
import { stackedChart } from "../chart.ts";
import { button, clear, credits, idCode, opCode, field, h, select, table, time } from "../dom.ts";
import { describe, type Session } from "../session.ts";
import { notice, Pager } from "../ui.ts";
import { usageStack, type Grouping, type Measure } from "../usage.ts";

type Entry = components["schemas"]["EntryView"];
type EntryType = Entry["type"];

const ranges: Record<string, number> = { "24h": 1, "7d": 7, "30d": 30 };

export async function usage(main: HTMLElement, s: Session): Promise<void> {
  main.append(chartSection(s), ledgerSection(s));
}

function chartSection(s: Session): HTMLElement {
  const groupBy = select("groupBy", [["operation", "Operation"], ["key", "Key"], ["project", "Project"], ["service", "Service"]], "operation");
  const measure = select("measure", [["requests", "Requests"], ["chargedCredits", "Credits"]], "requests");
  const width = select("bucketWidth", [["1h", "Hour"], ["1d", "Day"]], "1h");
  const range = select("range", [["24h", "Last 24 hours"], ["7d", "Last 7 days"], ["30d", "Last 30 days"]], "24h");
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "filters", "aria-label": "Usage chart" },
    field("Group by", groupBy),
    field("Measure", measure),
    field("Per", width),
    field("Range", range),
  );
  async function draw() {
    const days = ranges[range.value];
    // Hourly buckets cover at most seven days (one page of /usage).
    const w = days > 7 ? "1d" : (width.value as "1h" | "1d");
    const start = new Date(Date.now() - days * 86400_000 + (w === "1h" ? 3600_000 : 86400_000));
    clear(out, notice("Loading…"));
    const r = await usageStack(s.client, start, w, groupBy.value as Grouping, measure.value as Measure);
    if (!r.ok) return clear(out, notice(describe(r.error, "usage"), "denied"));
    const unit = measure.value === "requests" ? "requests" : "credits";
    stackedChart(out, `${measure.value === "requests" ? "Requests" : "Credits"} per ${w === "1h" ? "hour" : "day"} by ${groupBy.selectedOptions[0].text.toLowerCase()}`, unit, r.stack, w === "1h");
  }
  form.addEventListener("change", () => void draw());
  form.addEventListener("submit", (e) => e.preventDefault());
  void draw();
  return h("section", { "aria-labelledby": "usage-h" }, h("h2", { id: "usage-h" }, "Requests and credits"), form, out);
}

function ledgerSection(s: Session): HTMLElement {
  const type = select("type", [["", "Any"], ...(["grant", "top_up", "charge", "hold", "capture", "release"] as const).map((t): [string, string] => [t, t])]);
  const operation = h("input", { type: "text", name: "operation", placeholder: "services.invoke", spellcheck: "false" });
  const keyId = h("input", { type: "text", name: "keyId", placeholder: "key_…", spellcheck: "false" });
  const since = h("input", { type: "date", name: "since" });
  const until = h("input", { type: "date", name: "until" });
  const limit = select("limit", [["20", "20"], ["50", "50"], ["100", "100"]], "20");
  const form = h(
    "form",
    { class: "filters", "aria-label": "Ledger filters" },
    field("Type", type),
    field("Operation", operation, "Also matches its refinements"),
    field("Key", keyId),
    field("From (UTC)", since),
    field("Before (UTC)", until),
    field("Per page", limit),
    h("div", { class: "field" }, h("button", { type: "submit" }, "Apply filters")),
  );
  const out = h("div");
  const exportStatus = h("span", { "aria-live": "polite" });
  const query = () => ({
    ...(type.value ? { type: type.value as EntryType } : {}),
    ...(operation.value.trim() ? { operation: operation.value.trim() } : {}),
    ...(keyId.value.trim() ? { keyId: keyId.value.trim() } : {}),
    ...(since.value ? { since: since.value + "T00:00:00Z" } : {}),
    ...(until.value ? { until: until.value + "T00:00:00Z" } : {}),
  });
  const pager = new Pager("the ledger", async (cursor) => {
    const r = await s.client.creditsLedgerList({ query: { ...query(), limit: Number(limit.value), ...(cursor ? { cursor } : {}) } });
    if (!r.ok) {
      clear(out, notice(describe(r.error, "the ledger"), "denied"));
      return null;
    }
    const rows = r.value.data ?? [];
    const pageSum = rows.reduce((a, e) => a + e.amountCredits, 0);
    clear(
      out,
      table<Entry>(
        "Ledger entries, newest first",
        [
          { label: "When", value: (e) => time(e.occurredAt) },
          { label: "Type", value: (e) => e.type },
          { label: "Amount", numeric: true, value: (e) => h("span", { "data-amount": e.amountCredits }, credits(e.amountCredits)) },
          { label: "Balance after", numeric: true, value: (e) => credits(e.balanceAfter) },
          { label: "Operation", value: (e) => (e.operation ? opCode(e.operation) : "—") },
          { label: "Key", value: (e) => (e.keyId ? idCode(e.keyId) : "—") },
          { label: "Request", value: (e) => (e.requestId ? idCode(e.requestId) : "—") },
        ],
        rows,
        "No ledger entries match.",
      ),
      h("p", { class: "sum" }, `Sum of the ${rows.length} amounts on this page: `, h("strong", { id: "ledger-page-sum", "data-credits": pageSum }, credits(pageSum)), " credits"),
    );
    return r.value.nextCursor;
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void pager.reset();
  });
  const exportButton = button("Export CSV", () => void exportCSV(), { "aria-label": "Export the ledger entries that match the filters as CSV" });
  async function exportCSV() {
    exportButton.disabled = true;
    exportStatus.textContent = "Exporting…";
    const lines = ["id,occurredAt,type,amountCredits,balanceAfter,operation,keyId,projectId,requestId,referenceId"];
    let cursor: string | undefined;
    do {
      const r = await s.client.creditsLedgerList({ query: { ...query(), limit: 100, ...(cursor ? { cursor } : {}) } });
      if (!r.ok) {
        exportStatus.textContent = describe(r.error, "the ledger");
        exportButton.disabled = false;
        return;
      }
      for (const e of r.value.data ?? []) {
        lines.push([e.id, e.occurredAt, e.type, e.amountCredits, e.balanceAfter, e.operation, e.keyId, e.projectId, e.requestId, e.referenceId].map(csvCell).join(","));
      }
      cursor = r.value.nextCursor ?? undefined;
    } while (cursor && lines.length <= 50_000);
    const url = URL.createObjectURL(new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv" }));
    const a = h("a", { href: url, download: "ledger.csv" });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    exportStatus.textContent = `Exported ${lines.length - 1} entries.`;
    exportButton.disabled = false;
  }
  void pager.reset();
  return h(
    "section",
    { "aria-labelledby": "ledger-h" },
    h("h2", { id: "ledger-h" }, "Ledger"),
    h("p", {}, "Every change of the balance. Holds are negative until captured (0) or released."),
    form,
    out,
    h("div", { class: "row" }, pager.el, exportButton, exportStatus),
  );
}

/** One CSV field (RFC 4180), with a formula's leading character defused for spreadsheets. */
function csvCell(v: unknown): string {
  let s = v === null || v === undefined ? "" : String(v);
  if (/^[=+\-@]/.test(s) && typeof v === "string") s = "'" + s;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
