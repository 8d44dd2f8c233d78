// A few DOM helpers instead of a framework: every text goes in through
// textContent (never innerHTML), so nothing an API answer holds can become
// markup.

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
    else if (k === "class") el.className = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

let ids = 0;
/** A fresh element id, to tie a label to its control. */
export function uid(prefix: string): string {
  return `${prefix}-${++ids}`;
}

/** A labelled control: the label's for names the control's id. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  if (!control.id) control.id = uid("f");
  const hintEl = hint ? h("small", { id: control.id + "-hint" }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl);
}

export function select(name: string, options: [value: string, text: string][], value?: string): HTMLSelectElement {
  const s = h("select", { name });
  for (const [v, t] of options) s.appendChild(h("option", { value: v, selected: v === value }, t));
  return s;
}

export interface Column<T> {
  label: string;
  value: (row: T) => Child;
  /** Numbers align right. */
  numeric?: boolean;
}

/** A table with a caption, in a wrapper that scrolls sideways on a narrow screen. */
export function table<T>(caption: string, columns: Column<T>[], rows: T[], empty = "Nothing here yet."): HTMLElement {
  const t = h(
    "table",
    {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.numeric ? "num" : null }, c.label)))),
    h(
      "tbody",
      {},
      rows.length === 0
        ? h("tr", {}, h("td", { colspan: columns.length, class: "empty" }, empty))
        : rows.map((r) => h("tr", {}, columns.map((c) => h("td", { class: c.numeric ? "num" : null }, c.value(r))))),
    ),
  );
  return h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": caption }, t);
}

/** A definition list of the pairs whose value is not undefined. */
export function dl(pairs: [string, Child][]): HTMLElement {
  return h("dl", {}, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export function time(iso: string | null | undefined, none = "—"): Child {
  if (!iso) return none;
  return h("time", { datetime: iso, title: iso }, iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC"));
}

export function code(text: string): HTMLElement {
  return h("code", {}, text);
}

/** Credits as the API gives them, with up to 6 decimals (micro-credits) and no float noise. */
export function credits(n: number): string {
  return (Math.round(n * 1e6) / 1e6).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

export function button(text: string, onclick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  return h("button", { type: "button", ...attrs, onclick: () => onclick() }, text);
}
