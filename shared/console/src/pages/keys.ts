// Keys: the tree under the held key, and create child, roll and revoke, each
// confirmed by a dialog that says what happens to the key's descendants.
import { button, code, credits, dl, field, h, select, time } from "../dom.ts";
import { can, describe, refused, type Key, type Session } from "../session.ts";
import { confirmAction, notice, secretOnce } from "../ui.ts";

export async function keys(main: HTMLElement, s: Session, rerender: () => void): Promise<void> {
  const all: Key[] = [];
  let cursor: string | undefined;
  do {
    const r = await s.client.apiKeysList({ query: { limit: 100, ...(cursor ? { cursor } : {}) } });
    if (!r.ok) {
      main.append(notice(describe(r.error, "keys"), "denied"));
      return;
    }
    all.push(...(r.value.data ?? []));
    cursor = r.value.nextCursor ?? undefined;
  } while (cursor);
  const children = new Map<string, Key[]>();
  for (const k of all) if (k.parentId) children.set(k.parentId, [...(children.get(k.parentId) ?? []), k]);
  const ids = new Set(all.map((k) => k.id));
  const roots = all.filter((k) => !k.parentId || !ids.has(k.parentId));
  const descendants = (k: Key): Key[] => (children.get(k.id) ?? []).flatMap((c) => [c, ...descendants(c)]);
  const write = can("api_keys:manage");
  main.append(
    h("p", {}, `${all.length} key${all.length === 1 ? "" : "s"}: the held key and its descendants.`, write ? "" : " This key cannot manage keys, so nothing here can be changed."),
    h("ul", { class: "tree", "aria-label": "Key tree" }, roots.map(node)),
  );

  function node(k: Key): HTMLElement {
    const kids = children.get(k.id) ?? [];
    const name = k.label || k.id;
    const active = k.status === "active";
    return h(
      "li",
      {},
      h(
        "article",
        { class: `key key-${k.status}`, "aria-labelledby": `${k.id}-h`, "data-key-id": k.id },
        h("h3", { id: `${k.id}-h` }, name, " ", h("span", { class: `badge badge-${k.status}` }, k.status), k.id === s.keyId ? h("span", { class: "badge" }, "held") : null),
        dl([
          ["Id", code(k.id)],
          ["Prefix", code(k.prefix)],
          ["Scopes", k.scopes.join(", ") || "none"],
          ["Services", k.allowedServices === null ? "any" : k.allowedServices.join(", ") || "none"],
          ["Operations", k.allowedOperations === null ? "any" : ops(k.allowedOperations)],
          ["Limits", limits(k.limits)],
          ["Client networks", k.allowedIps === null ? "anywhere" : k.allowedIps.join(", ")],
          ["Last used", time(k.lastUsedAt, "never")],
          ["Expires", time(k.expiresAt, "never")],
          ...(k.notBefore ? [["Not before", time(k.notBefore)] as [string, Node | string]] : []),
          ["Project", k.projectId ? code(k.projectId) : "account-wide"],
          ["Privacy tier", k.privacyTier],
          ...(k.rolledTo ? [["Rolled into", code(k.rolledTo)] as [string, Node | string]] : []),
        ]),
        write && active
          ? h(
              "div",
              { class: "actions" },
              // A key is created under the key that asks: the held one.
              k.id === s.keyId ? button("Create child", () => createChild(k), { "data-write": "create-child", "aria-label": `Create a child key of ${name}` }) : null,
              k.rolledTo ? null : button("Roll", () => roll(k), { "data-write": "roll", "aria-label": `Roll ${name}` }),
              button("Revoke", () => revoke(k), { class: "danger", "data-write": "revoke", "aria-label": `Revoke ${name}` }),
            )
          : null,
      ),
      kids.length ? h("ul", { "aria-label": `Children of ${name}` }, kids.map(node)) : null,
    );
  }

  /** A key's limits for people: one line per selector, "*" said as every operation. */
  function limits(l: Key["limits"]): Node | string {
    const entries = Object.entries(l ?? {});
    if (!entries.length) return "none of its own";
    const lines = entries.map(([selector, v]) => {
      const parts = [
        v.requestsPerMinute !== undefined && v.requestsPerMinute !== null ? `${v.requestsPerMinute.toLocaleString("en-US")} requests/min` : "",
        v.maxConcurrent !== undefined && v.maxConcurrent !== null ? `${v.maxConcurrent.toLocaleString("en-US")} at once` : "",
        v.creditsPerDay !== undefined && v.creditsPerDay !== null ? `${credits(v.creditsPerDay)} credits/day (UTC)` : "",
      ].filter(Boolean);
      return h("li", { "data-limit": selector }, `${parts.join(", ")} on `, selector === "*" ? "every operation" : code(selector));
    });
    return h("ul", { class: "limits" }, lines);
  }

  function ops(list: string[]): Node {
    return list.length <= 4 ? document.createTextNode(list.join(", ") || "none") : h("details", {}, h("summary", {}, `${list.length} operations`), h("p", {}, list.join(", ")));
  }

  function names(list: Key[]): string {
    const shown = list.slice(0, 8).map((d) => d.label || d.id);
    return shown.join(", ") + (list.length > 8 ? ` and ${list.length - 8} more` : "");
  }

  function revoke(k: Key) {
    const d = descendants(k).filter((x) => x.status === "active");
    const self = k.id === s.keyId || descendants(k).some((x) => x.id === s.keyId);
    confirmAction({
      title: `Revoke ${k.label || k.id}?`,
      body: [
        `${k.label || k.id} (${k.id}) stops working at once, for good.`,
        d.length ? `So do its ${d.length} active descendant${d.length === 1 ? "" : "s"}: ${names(d)}. Their webhooks stop delivering.` : "It has no active descendants.",
        self ? "That includes the key this console holds: the console will stop working." : "",
      ].filter(Boolean),
      confirm: `Revoke ${d.length + 1} key${d.length ? "s" : ""}`,
      danger: true,
      act: async () => {
        const r = await s.client.apiKeysRevoke({ path: { id: k.id } });
        if (!r.ok) return [notice(refused(r.error, "revoke that key"), "error")];
        rerender();
      },
    });
  }

  function roll(k: Key) {
    const max = Math.min(7 * 86400_000, k.expiresAt ? Date.parse(k.expiresAt) - Date.now() : Infinity);
    const choices: [string, string][] = [["0", "Now"], ["3600000", "In 1 hour"], ["86400000", "In 24 hours"], ["604800000", "In 7 days"]];
    const when = select("expiresIn", choices.filter(([ms]) => Number(ms) <= max));
    const d = descendants(k).filter((x) => x.status === "active");
    confirmAction({
      title: `Roll ${k.label || k.id}?`,
      body: [
        "A successor with the same policy (scopes, boundaries, limits, expiry) is created, and its secret shown once. The webhooks this key created move to the successor.",
        field("The old key stops", when),
        d.length
          ? `Its ${d.length} active descendant${d.length === 1 ? "" : "s"} (${names(d)}) stay under the old key and stop when it stops.`
          : "It has no active descendants.",
      ],
      confirm: "Roll",
      act: async () => {
        const expiresAt = new Date(Date.now() + Number(when.value) + (when.value === "0" ? 1000 : 0)).toISOString();
        const r = await s.client.apiKeysRoll({ path: { id: k.id }, body: { expiresAt } });
        if (!r.ok) return [notice(refused(r.error, "roll that key"), "error")];
        rerender();
        return [notice(`Rolled into ${r.value.id}.`), secretOnce("New secret", r.value.secret)];
      },
    });
  }

  function createChild(k: Key) {
    const label = h("input", { type: "text", name: "label", required: true, maxlength: 100 });
    const scopes = k.scopes.map((sc) => h("input", { type: "checkbox", name: "scope", value: sc, checked: !sc.endsWith(":manage") && !sc.endsWith(":write") }));
    const expires = select("expires", [["", "As the parent"], ["86400000", "In 1 day"], ["604800000", "In 7 days"], ["2592000000", "In 30 days"]]);
    confirmAction({
      title: `Create a child of ${k.label || k.id}`,
      body: [
        "The child gets at most what its parent has, and stops when the parent (or any ancestor) is revoked or expires.",
        field("Label", label),
        h("fieldset", {}, h("legend", {}, "Scopes"), scopes.map((c) => h("label", { class: "check" }, c, " ", c.value))),
        field("Expires", expires),
      ],
      confirm: "Create child key",
      act: async () => {
        if (!label.value.trim()) return [notice("Give the key a label.", "error")];
        const exp = Number(expires.value);
        const r = await s.client.apiKeysCreate({
          body: { label: label.value.trim(), scopes: scopes.filter((c) => c.checked).map((c) => c.value), ...(exp ? { expiresAt: new Date(Date.now() + exp).toISOString() } : {}) },
        });
        if (!r.ok) return [notice(refused(r.error, "create that key"), "error")];
        rerender();
        return [notice(`Created ${r.value.id}.`), secretOnce("Child key secret", r.value.secret)];
      },
    });
  }
}
