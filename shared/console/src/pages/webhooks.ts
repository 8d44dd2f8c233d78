// Webhooks: the endpoints, their recent deliveries with status and
// attempts, redelivery, and secret rotation.
import type { components } from "../../../../sdk/typescript/src/index.ts";
import { button, clear, code, field, idCode, h, select, table, time } from "../dom.ts";
import { can, describe, refused, type Session } from "../session.ts";
import { confirmAction, notice, Pager, secretOnce } from "../ui.ts";

type Webhook = components["schemas"]["Webhook"];
type Delivery = components["schemas"]["Delivery"];

export async function webhooks(main: HTMLElement, s: Session, rerender: () => void): Promise<void> {
  const write = can("webhooks:write");
  const hooks: Webhook[] = [];
  let cursor: string | undefined;
  do {
    const r = await s.client.webhooksList({ query: { limit: 100, ...(cursor ? { cursor } : {}) } });
    if (!r.ok) {
      main.append(notice(describe(r.error, "webhooks"), "denied"));
      return;
    }
    hooks.push(...(r.value.data ?? []));
    cursor = r.value.nextCursor ?? undefined;
  } while (cursor);

  main.append(
    h(
      "section",
      { "aria-labelledby": "endpoints-h" },
      h("h2", { id: "endpoints-h" }, "Endpoints"),
      table<Webhook>(
        "Webhook endpoints",
        [
          { label: "URL", value: (w) => code(w.url) },
          { label: "Events", value: (w) => w.events.join(", ") },
          { label: "Status", value: (w) => w.status },
          { label: "Description", value: (w) => w.description || "—" },
          { label: "Project", value: (w) => (w.projectId ? code(w.projectId) : "all") },
          { label: "Previous secret until", value: (w) => time(w.previousSecretExpiresAt) },
          ...(write ? [{ label: "Actions", value: (w: Webhook) => (w.status === "active" ? button("Rotate secret", () => rotate(w), { "data-write": "rotate", "aria-label": `Rotate the secret of ${w.url}` }) : "—") }] : []),
        ],
        hooks,
        "No webhooks.",
      ),
    ),
  );

  const hook = select("webhookId", [["", "All"], ...hooks.map((w): [string, string] => [w.id, w.url])]);
  const status = select("status", [["", "Any"], ["pending", "pending"], ["delivered", "delivered"], ["failed", "failed"]]);
  const form = h("form", { class: "filters", "aria-label": "Delivery filters" }, field("Webhook", hook), field("Status", status));
  const out = h("div");
  const pager = new Pager("deliveries", async (c) => {
    const r = await s.client.webhookDeliveriesList({ query: { limit: 20, ...(hook.value ? { webhookId: hook.value } : {}), ...(status.value ? { status: status.value as Delivery["status"] } : {}), ...(c ? { cursor: c } : {}) } });
    if (!r.ok) {
      clear(out, notice(describe(r.error, "webhook deliveries"), "denied"));
      return null;
    }
    clear(
      out,
      table<Delivery>(
        "Recent deliveries, newest first",
        [
          { label: "Created", value: (d) => time(d.createdAt) },
          { label: "Event", value: (d) => [d.event, h("br"), h("small", { class: "muted" }, "to ", idCode(d.webhookId))] },
          { label: "Status", value: (d) => [h("span", { class: `badge badge-${d.status}` }, d.status), " ", h("small", { class: "muted" }, `${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`)] },
          { label: "Last answer", value: (d) => [d.lastStatusCode === null ? "none" : String(d.lastStatusCode), d.lastError ? [h("br"), h("small", { class: "bad-soft" }, d.lastError)] : ""] },
          { label: "Delivered", value: (d) => (d.deliveredAt ? time(d.deliveredAt) : d.nextAttemptAt ? ["next ", time(d.nextAttemptAt)] : "—") },
          ...(write ? [{ label: "Actions", value: (d: Delivery) => button("Redeliver", () => redeliver(d), { "data-write": "redeliver", "aria-label": `Redeliver ${d.event} ${d.id}` }) }] : []),
        ],
        r.value.data ?? [],
        "No deliveries.",
      ),
    );
    return r.value.nextCursor;
  });
  form.addEventListener("change", () => void pager.reset());
  form.addEventListener("submit", (e) => e.preventDefault());
  main.append(h("section", { "aria-labelledby": "deliveries-h" }, h("h2", { id: "deliveries-h" }, "Deliveries"), form, out, pager.el));
  await pager.reset();

  function rotate(w: Webhook) {
    confirmAction({
      title: "Rotate the signing secret?",
      body: [`${w.url} gets a new secret, shown once. Deliveries are signed with both the old and the new secret for a while, so the receiver can switch over.`],
      confirm: "Rotate secret",
      act: async () => {
        const r = await s.client.webhooksRotate({ path: { webhookId: w.id } });
        if (!r.ok) return [notice(refused(r.error, "rotate that secret"), "error")];
        rerender();
        return [notice(`The old secret also signs until ${r.value.previousSecretExpiresAt ?? "now"}.`), secretOnce("New signing secret", r.value.secret)];
      },
    });
  }

  function redeliver(d: Delivery) {
    confirmAction({
      title: "Redeliver this event?",
      body: [`${d.event} (${d.eventId}) is sent again to its webhook as a new delivery with the same payload.`],
      confirm: "Redeliver",
      act: async () => {
        const r = await s.client.webhookDeliveriesReplay({ path: { deliveryId: d.id } });
        if (!r.ok) return [notice(refused(r.error, "redeliver that event"), "error")];
        void pager.reset();
        return [notice(`Queued as ${r.value.id}.`)];
      },
    });
  }
}
