// Approvals: each with its decoded input (for a signature, the typed data
// that will be signed), approved or rejected here.
import type { components } from "../../../../sdk/typescript/src/index.ts";
import { button, clear, code, dl, field, h, select, time } from "../dom.ts";
import { can, describe, refused, type Session } from "../session.ts";
import { notice, Pager } from "../ui.ts";

type Approval = components["schemas"]["Approval"];

export async function approvals(main: HTMLElement, s: Session): Promise<void> {
  const write = can("approvals:write");
  const status = select("status", [["pending", "Pending"], ["approved", "Approved"], ["rejected", "Rejected"], ["consumed", "Consumed"], ["expired", "Expired"], ["", "All"]], "pending");
  const form = h("form", { class: "filters", "aria-label": "Approval filters" }, field("Status", status));
  const out = h("div");
  const pager = new Pager("approvals", async (cursor) => {
    const r = await s.client.approvalsList({ query: { limit: 20, ...(status.value ? { status: status.value as Approval["status"] } : {}), ...(cursor ? { cursor } : {}) } });
    if (!r.ok) {
      clear(out, notice(describe(r.error, "approvals"), "denied"));
      return null;
    }
    const list = r.value.data ?? [];
    clear(out, list.length ? h("ul", { class: "approvals", "aria-label": "Approvals" }, list.map((a) => h("li", {}, card(a)))) : notice("No approvals match."));
    return r.value.nextCursor;
  });
  form.addEventListener("change", () => void pager.reset());
  form.addEventListener("submit", (e) => e.preventDefault());
  main.append(form, out, pager.el);
  await pager.reset();

  function card(a: Approval): HTMLElement {
    const result = h("div", { "aria-live": "polite" });
    const reason = h("input", { type: "text", name: "reason", maxlength: 500 });
    const decide = async (decision: "approve" | "reject") => {
      const r = await s.client.approvalsDecide({ path: { approvalId: a.id }, body: { decision, ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) } });
      if (!r.ok) return clear(result, notice(refused(r.error, `${decision} this`), "error"));
      clear(result, notice(`${decision === "approve" ? "Approved" : "Rejected"}: ${r.value.status}.`));
      article.querySelector(".actions")?.remove();
    };
    const article = h(
      "article",
      { class: "approval", "aria-labelledby": `${a.id}-h`, "data-approval-id": a.id },
      h("h3", { id: `${a.id}-h` }, `${a.serviceId} · ${a.operationId} `, h("span", { class: `badge badge-${a.status}` }, a.status)),
      dl([
        ["Id", code(a.id)],
        ["Requested by", code(a.requestedBy)],
        ["Requested", time(a.createdAt)],
        ["Expires", time(a.expiresAt)],
        ...(a.reason ? [["Reason", a.reason] as [string, string]] : []),
        ...(a.decidedBy ? [["Decided by", code(a.decidedBy)] as [string, Node]] : []),
        ["Input SHA-256", code(a.inputSha256)],
      ]),
      h("h4", {}, "What it allows"),
      decoded(a.input),
      write && a.status === "pending"
        ? h(
            "div",
            { class: "actions" },
            field("Reason (optional)", reason),
            button("Approve", () => void decide("approve"), { class: "primary", "data-write": "approve", "aria-label": `Approve ${a.operationId} (${a.id})` }),
            button("Reject", () => void decide("reject"), { class: "danger", "data-write": "reject", "aria-label": `Reject ${a.operationId} (${a.id})` }),
          )
        : null,
      result,
    );
    return article;
  }
}

/**
 * The approval's input, decoded for people: a signature's EIP-712 typed
 * data as its domain, primary type and message, what a transfer-shaped
 * message authorises, and the digest; anything else as indented JSON.
 */
function decoded(input: unknown): HTMLElement {
  const i = (input ?? {}) as Record<string, unknown>;
  const typed = i.typedData as { domain?: Record<string, unknown>; primaryType?: string; message?: unknown } | undefined;
  const parts: HTMLElement[] = [];
  if (typed && typeof typed === "object") {
    parts.push(
      h("p", {}, "A signature over EIP-712 typed data:"),
      dl([
        ["Primary type", code(String(typed.primaryType ?? "?"))],
        ...Object.entries(typed.domain ?? {}).map(([k, v]): [string, Node] => [`Domain ${k}`, code(String(v))]),
      ]),
      h("p", {}, "Message:"),
      h("pre", { class: "json", tabindex: 0 }, JSON.stringify(typed.message ?? null, null, 2)),
    );
  } else if (typeof i.message === "string") {
    parts.push(h("p", {}, "A signature over the message:"), h("pre", { class: "json", tabindex: 0 }, i.message));
  }
  if (Array.isArray(i.transfers) && i.transfers.length) {
    parts.push(h("p", {}, "It authorises these transfers:"), h("pre", { class: "json", tabindex: 0 }, JSON.stringify(i.transfers, null, 2)));
  }
  if (typeof i.digest === "string") parts.push(dl([["Digest", code(i.digest)]]));
  if (typeof i.omitted === "string" || typeof i.omitted === "number") parts.push(h("p", {}, `Too large to show whole: ${i.omitted} omitted.`));
  const raw = h("pre", { class: "json", tabindex: 0, "aria-label": "The exact input as JSON" }, JSON.stringify(input, null, 2));
  parts.push(parts.length ? h("details", {}, h("summary", {}, "The exact input (JSON)"), raw) : raw);
  return h("div", { class: "decoded" }, parts);
}
