// Overview: the balance, what was spent today and in the last seven days,
// and requests per hour over the last day.
import { stackedChart } from "../chart.ts";
import { credits, h } from "../dom.ts";
import { describe, type Session } from "../session.ts";
import { notice } from "../ui.ts";
import { usageStack } from "../usage.ts";

export async function overview(main: HTMLElement, s: Session): Promise<void> {
  const balance = h("section", { class: "card", "aria-labelledby": "balance-h" }, h("h2", { id: "balance-h" }, "Balance"));
  const spend = h("section", { class: "card", "aria-labelledby": "spend-h" }, h("h2", { id: "spend-h" }, "Spend"));
  const hourly = h("section", { class: "wide", "aria-labelledby": "hourly-h" }, h("h2", { id: "hourly-h" }, "Requests per hour, last 24 hours"));
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
    );
  } else spend.append(notice(describe(week.error, "usage"), "denied"));

  if (hours.ok) stackedChart(hourly.appendChild(h("div")), "Requests per hour", "requests", hours.stack, true);
  else hourly.append(notice(describe(hours.error, "usage"), "denied"));
}
