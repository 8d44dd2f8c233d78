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

/**
 * A table with a caption. On a narrow screen each row is a card of
 * label-value lines (the CSS reads each cell's data-label), so no table is
 * wider than its box; the wrapper scrolls only if a single value cannot wrap.
 */
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
        : rows.map((r) => h("tr", {}, columns.map((c) => h("td", { class: c.numeric ? "num" : null, "data-label": c.label }, h("span", { class: "cell" }, c.value(r)))))),
    ),
  );
  return h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": caption }, t);
}

/** A definition list of the pairs whose value is not undefined. */
export function dl(pairs: [string, Child][]): HTMLElement {
  return h("dl", {}, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

const relative = new Intl.RelativeTimeFormat("en-US", { numeric: "auto" });
const steps: [Intl.RelativeTimeFormatUnit, number][] = [["second", 60], ["minute", 60], ["hour", 24], ["day", 7]];

/** A time as people say it: "3 minutes ago", or a local date past a week; the exact UTC time on hover and in datetime. */
export function time(iso: string | null | undefined, none = "—"): Child {
  if (!iso) return none;
  const d = new Date(iso);
  return h("time", { datetime: iso, title: `${d.toLocaleString()} (${iso})` }, when(d));
}

export function when(d: Date, now = Date.now()): string {
  let v = (d.getTime() - now) / 1000;
  for (const [unit, size] of steps) {
    if (Math.abs(v) < size) return relative.format(Math.round(v), unit);
    v /= size;
  }
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function code(text: string): HTMLElement {
  return h("code", {}, text);
}

/**
 * An id in a table, cut in the middle ("key_01M8…2H4K8"): ids made in the
 * same moment share their start, so the end is what tells them apart. The
 * whole id is on hover and in data-id.
 */
export function idCode(id: string): HTMLElement {
  const cut = id.indexOf("_") + 5;
  const short = id.length > cut + 8 ? `${id.slice(0, cut)}…${id.slice(-5)}` : id;
  return h("code", { class: "id", title: id, "data-id": id }, short);
}

/** An operation id, a path or an error code, which may wrap only after a dot, a slash or an underscore, never inside a word. */
export function opCode(text: string): HTMLElement {
  return h("code", { class: "op" }, text.split(/(?<=[./_])/).flatMap((part, i) => (i ? [h("wbr"), part] : [part])));
}

/**
 * Credits as a decimal string with grouping: the API's number read as whole
 * micro-credits (its precision), so no float noise reaches the page, and at
 * least two decimals, as money is written ("1,234.50", "-0.000125").
 */
export function credits(n: number): string {
  const micro = BigInt(Math.round(n * 1e6));
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  const whole = (abs / 1_000_000n).toLocaleString("en-US");
  let frac = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  if (frac.length < 2) frac = frac.padEnd(2, "0");
  return `${neg ? "-" : ""}${whole}.${frac}`;
}

export function button(text: string, onclick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  return h("button", { type: "button", ...attrs, onclick: () => onclick() }, text);
}
