// Overview: the balance, what was spent today and in the last seven days,
// and requests per hour over the last day.
import { stackedChart } from "../chart.ts";
import { credits, h } from "../dom.ts";
import { describe, type Session } from "../session.ts";
import { notice } from "../ui.ts";
import { usageStack } from "../usage.ts";

export async function overview(main: HTMLElement, s: Session): Promise<void> {
  const balance = h("section", { class: "card", "aria-labelledby": "balance-h" }, h("h2", { id: "balance-h" }, "Balance"));
  const whose = spendScope(s);
  const spend = h("section", { class: "card", "aria-labelledby": "spend-h" }, h("h2", { id: "spend-h" }, whose.title));
  const hourly = h("section", { class: "wide", "aria-labelledby": "hourly-h" }, h("h2", { id: "hourly-h" }, "Requests per hour, last 24 hours (UTC)"));
  main.append(h("div", { class: "cards" }, balance, spend), hourly);

  const now = Date.now();
  const today = new Date(new Date(now).toISOString().slice(0, 10) + "T00:00:00Z");
  const weekStart = new Date(today.getTime() - 6 * 86400_000);
  const [bal, week, hours] = await Promise.all([
    s.client.creditsBalanceRead(),
    usageStack(s.client, weekStart, "1d", "", "chargedCredits"),
    usageStack(s.client, new Date(now - 23 * 3600_000), "1h", "", "requests"),
  ]);

  if (bal.ok) balance.append(h("p", { class: "figure", id: "balance", "data-credits": bal.value.balance }, credits(bal.value.balance), h("span", { class: "unit" }, " credits")));
  else balance.append(notice(describe(bal.error, "the balance"), "denied"));

  if (week.ok) {
    const days = week.stack.series[0]?.values ?? [];
    const todays = days.length && week.stack.x[days.length - 1] * 1000 >= today.getTime() ? days[days.length - 1] : 0;
    const total = days.reduce((a, b) => a + b, 0);
    spend.append(
      h("p", { class: "figure", id: "spend-today", "data-credits": todays }, credits(todays), h("span", { class: "unit" }, " credits today (UTC)")),
      h("p", { class: "figure small", id: "spend-week", "data-credits": total }, credits(total), h("span", { class: "unit" }, " credits in the last 7 days")),
      whose.note ? h("p", { class: "note", id: "spend-scope" }, whose.note) : "",
    );
  } else spend.append(notice(describe(week.error, "usage"), "denied"));

  if (hours.ok) stackedChart(hourly.appendChild(h("div")), "Requests per hour", "requests", hours.stack, true, false);
  else hourly.append(notice(describe(hours.error, "usage"), "denied"));
}

/**
 * Whose spend the figure is. /usage counts the requests of the calling key
 * and its descendants (and of its project only, for a project-bound key),
 * while the balance is the account's: a key below the root must not read
 * its own zero as the account's. Only a root key that is bound to no
 * project sees the whole account; a key that cannot read its own record
 * (no api_keys:manage) is not known to be the root, so it is said as a
 * key's.
 */
function spendScope(s: Session): { title: string; note: string | null } {
  const self = s.self;
  if (self && !self.parentId && !self.projectId) return { title: "Spend on this account", note: null };
  const project = self?.projectId ? ` in project ${self.projectId}` : "";
  return {
    title: "Spend by this key and the keys under it",
    note: `The balance is the account's; this counts only the requests of ${self?.label || s.keyId} and its descendants${project}, which is what this key can see.`,
  };
}
