// The console: a key form, then one page per hash route (#/usage, …),
// rendered from the API with the held key. No framework: a page is a
// function that fills <main>.
import { button, clear, h } from "./dom.ts";
import { approvals } from "./pages/approvals.ts";
import { audit } from "./pages/audit.ts";
import { keys } from "./pages/keys.ts";
import { overview } from "./pages/overview.ts";
import { usage } from "./pages/usage.ts";
import { webhooks } from "./pages/webhooks.ts";
import { forget, open, remembered, session, type Session } from "./session.ts";
import { notice } from "./ui.ts";

type Render = (main: HTMLElement, s: Session, rerender: () => void) => Promise<void>;

const pages: { path: string; title: string; render: Render }[] = [
  { path: "overview", title: "Overview", render: overview },
  { path: "usage", title: "Usage and ledger", render: usage },
  { path: "keys", title: "Keys", render: keys },
  { path: "audit", title: "Audit events", render: audit },
  { path: "webhooks", title: "Webhooks", render: webhooks },
  { path: "approvals", title: "Approvals", render: approvals },
];

const main = document.getElementById("main") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;
const keyBox = document.getElementById("key") as HTMLElement;

function route(): (typeof pages)[number] {
  const path = location.hash.replace(/^#\/?/, "");
  return pages.find((p) => p.path === path) ?? pages[0];
}

let rendering = 0;
async function render(): Promise<void> {
  const s = session();
  renderKeyBox(s);
  renderNav(s);
  if (!s) return keyForm();
  const page = route();
  const n = ++rendering;
  main.removeAttribute("data-page");
  const heading = h("h1", { tabindex: -1 }, page.title);
  const body = h("div", { "aria-busy": "true" });
  clear(main, heading, body);
  document.title = `${page.title} · Platform API console`;
  if (document.activeElement === document.body || document.activeElement?.closest("nav")) heading.focus();
  try {
    await page.render(body, s, () => void (n === rendering && render()));
  } catch (e) {
    body.append(notice(`Something went wrong: ${(e as Error).message}`, "error"));
  }
  body.removeAttribute("aria-busy");
  // A page left before it finished loading must not mark the one shown now.
  if (n === rendering) main.setAttribute("data-page", page.path);
}

function renderNav(s: Session | null): void {
  const current = route().path;
  clear(
    nav,
    s
      ? h(
          "ul",
          {},
          pages.map((p) => h("li", {}, h("a", { href: `#/${p.path}`, "aria-current": p.path === current ? "page" : null }, p.title))),
        )
      : null,
  );
}

function renderKeyBox(s: Session | null): void {
  if (!s) return clear(keyBox, h("p", {}, "No key held."));
  const who = s.self ? `${s.self.label || s.keyId} (${s.keyId})` : s.keyId;
  clear(
    keyBox,
    h(
      "p",
      { id: "held-key" },
      "Holding ",
      h("strong", {}, who),
      `, ${s.hint}, `,
      s.remembered ? "kept in this tab's sessionStorage." : "kept in memory only.",
      s.self ? "" : " It cannot read its own record (no api_keys:manage), so the console shows no changes it could make.",
    ),
    s.self ? h("details", { class: "scopes" }, h("summary", {}, `${s.self.scopes.length} scopes`), h("p", {}, s.self.scopes.join(", "))) : null,
    button("Forget key", () => {
      forget();
      location.hash = "";
      void render();
    }),
  );
}

function keyForm(): void {
  const input = h("input", { id: "api-key", type: "password", name: "api-key", autocomplete: "off", spellcheck: "false", required: true, "aria-describedby": "api-key-hint" });
  const remember = h("input", { id: "remember", type: "checkbox", name: "remember" });
  const status = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "key-form", "aria-labelledby": "key-form-h" },
    h("h1", { id: "key-form-h" }, "Platform API console"),
    h(
      "p",
      { id: "api-key-hint" },
      "Paste an API key. It stays in this tab and is sent only as the Authorization header to this server. A narrow read-only key (",
      h("code", {}, "credits:read usage:read audit:read approvals:read webhooks:read"),
      ") is enough to look; changes need the matching write scope, and the key tree needs ",
      h("code", {}, "api_keys:manage"),
      ".",
    ),
    h("div", { class: "field" }, h("label", { for: input.id }, "API key"), input),
    h("div", { class: "field check" }, remember, h("label", { for: remember.id }, "Keep it until this tab closes (sessionStorage); otherwise only in memory")),
    h("button", { type: "submit", class: "primary" }, "Use this key"),
    status,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clear(status, notice("Checking the key…"));
    try {
      await open(input.value.trim(), remember.checked);
      input.value = "";
      await render();
    } catch (err) {
      clear(status, notice((err as Error).message, "error"));
    }
  });
  clear(main, form);
  input.focus();
}

window.addEventListener("hashchange", () => void render());
// The skip link moves focus itself: following its #main would be a route.
document.querySelector("a.skip")?.addEventListener("click", (e) => {
  e.preventDefault();
  ((main.querySelector("h1") as HTMLElement | null) ?? main).focus();
});

async function start(): Promise<void> {
  const kept = remembered();
  if (kept) await open(kept, true).catch(() => forget());
  await render();
}
void start();
