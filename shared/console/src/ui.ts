// Parts every page uses: notices, the pager, and the confirmation dialog.
import { button, clear, h } from "./dom.ts";

/** A message in a live region, so a screen reader hears it too. */
export function notice(text: string, kind: "info" | "error" | "denied" = "info"): HTMLElement {
  return h("p", { class: `notice notice-${kind}`, role: kind === "info" ? "status" : "alert" }, text);
}

export interface PageOf<T> {
  data: T[] | null;
  nextCursor: string | null;
}

/**
 * Previous and next over a cursor-paged list. load fetches one page for a
 * cursor and renders it; the pager keeps the cursors it has been given, so
 * going back asks for the same page again.
 */
export class Pager {
  readonly el: HTMLElement;
  private cursors: (string | undefined)[] = [undefined];
  private next: string | null = null;
  private readonly prevButton: HTMLButtonElement;
  private readonly nextButton: HTMLButtonElement;
  private readonly label: HTMLElement;

  constructor(
    private readonly what: string,
    private readonly load: (cursor: string | undefined) => Promise<string | null>,
  ) {
    this.prevButton = button("Previous page", () => void this.go(-1), { "aria-label": `Previous page of ${what}` });
    this.nextButton = button("Next page", () => void this.go(1), { "aria-label": `Next page of ${what}` });
    this.label = h("span", { "aria-live": "polite" });
    this.el = h("div", { class: "pager" }, this.prevButton, this.label, this.nextButton);
    this.update();
  }

  /** Starts again from the first page (after a filter changed). */
  async reset(): Promise<void> {
    this.cursors = [undefined];
    await this.go(0);
  }

  private async go(step: number): Promise<void> {
    if (step === 1 && this.next) this.cursors.push(this.next);
    if (step === -1 && this.cursors.length > 1) this.cursors.pop();
    this.next = await this.load(this.cursors[this.cursors.length - 1]);
    this.update();
  }

  private update(): void {
    this.prevButton.disabled = this.cursors.length <= 1;
    this.nextButton.disabled = !this.next;
    this.label.textContent = `Page ${this.cursors.length}`;
  }
}

let dialog: HTMLDialogElement | null = null;

/**
 * A modal dialog (the platform's <dialog>: focus stays inside, Escape
 * cancels) that says what an action will do before it is done. act runs on
 * confirmation and returns what to show afterwards (a secret shown once, an
 * error), or nothing to close.
 */
export function confirmAction(opts: {
  title: string;
  body: (Node | string)[];
  confirm: string;
  danger?: boolean;
  act: () => Promise<(Node | string)[] | void>;
}): void {
  dialog?.remove();
  const d = h("dialog", { "aria-labelledby": "dialog-title", class: "dialog" });
  dialog = d;
  const status = h("div", { "aria-live": "polite" });
  const ok = button(opts.confirm, () => void run(), { class: opts.danger ? "danger" : "primary" });
  const cancel = button("Cancel", () => d.close());
  const actions = h("div", { class: "actions" }, ok, cancel);
  async function run() {
    ok.disabled = true;
    const after = await opts.act().catch((e: Error) => [notice(e.message, "error")]);
    if (!after) {
      d.close();
      return;
    }
    clear(status, ...after);
    clear(actions, button("Close", () => d.close(), { class: "primary" }));
    (actions.firstChild as HTMLElement).focus();
  }
  d.append(h("h2", { id: "dialog-title" }, opts.title), ...opts.body.map((b) => (typeof b === "string" ? h("p", {}, b) : b)), status, actions);
  d.addEventListener("close", () => d.remove());
  document.body.appendChild(d);
  d.showModal();
}

/** A secret shown once, in a read-only field the user can select and copy. */
export function secretOnce(label: string, secret: string): HTMLElement {
  const input = h("input", { type: "text", readonly: true, value: secret, id: "secret-once", spellcheck: "false", autocomplete: "off" });
  return h(
    "div",
    { class: "field secret" },
    h("label", { for: input.id }, label),
    input,
    h("small", {}, "Shown only now: store it before closing this dialog."),
    button("Copy", () => void navigator.clipboard?.writeText(secret), { "aria-label": `Copy ${label}` }),
  );
}
