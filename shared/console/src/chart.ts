// The stacked chart (uPlot) and, beside it, the same numbers as a table: a
// chart alone says nothing to a screen reader, and the table is what the
// browser test reads to know what was drawn.
import uPlot from "uplot";
import { h } from "./dom.ts";

export interface Stack {
  /** Bucket start times, Unix seconds. */
  x: number[];
  /** One series per group, in drawing order (bottom first), of one value per bucket. */
  series: { name: string; values: number[] }[];
}

const palette = ["#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#0891b2", "#db2777", "#65a30d", "#78716c", "#ea580c"];

/**
 * Draws stack into host: each series on top of the ones before it. uPlot
 * has no stacking of its own, so the cumulative sums are drawn, the
 * largest first and each smaller one over it; the legend and the table
 * show each series' own values.
 */
export function stackedChart(host: HTMLElement, title: string, unit: string, stack: Stack, hourly: boolean): HTMLElement {
  const figure = h("figure", { class: "chart" });
  const plot = h("div", { class: "chart-plot", role: "img", "aria-label": `${title}: chart; the same data is in the table below` });
  figure.append(h("figcaption", {}, title), plot, dataTable(title, unit, stack, hourly));
  host.replaceChildren(figure);

  const sums: number[][] = [];
  stack.series.forEach((s, i) => sums.push(s.values.map((v, j) => v + (i > 0 ? sums[i - 1][j] : 0))));
  const order = stack.series.map((_, i) => i).reverse();
  const width = Math.max(280, plot.clientWidth || host.clientWidth || 600);
  const bars = uPlot.paths.bars!({ size: [0.8, 48] });
  // Half a bucket of room on each side, so the first and last bars show whole.
  const half = (hourly ? 3600 : 86400) / 2;
  const opts: uPlot.Options = {
    width,
    height: 240,
    legend: { live: true },
    // Buckets are UTC hours and days, as the table says: the axis too.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    scales: { x: { time: true, range: (_u, min, max) => [min - half, max + half] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [{}, { label: unit, size: 60 }],
    series: [
      { label: hourly ? "Hour (UTC)" : "Day (UTC)" },
      ...order.map((i) => ({
        label: stack.series[i].name,
        stroke: palette[i % palette.length],
        fill: palette[i % palette.length],
        paths: bars,
        points: { show: false },
        value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? "—" : String(stack.series[i].values[idx])),
      })),
    ],
  };
  // An empty bucket draws nothing rather than a flat bar.
  const data: uPlot.AlignedData = [stack.x, ...order.map((i) => sums[i].map((v) => (v === 0 ? null : v)))];
  if (stack.x.length === 0) {
    plot.append(h("p", { class: "empty" }, "No requests in this range."));
    return figure;
  }
  const u = new uPlot(opts, data, plot);
  const resize = new ResizeObserver(() => {
    if (!plot.isConnected) {
      resize.disconnect();
      u.destroy();
      return;
    }
    const w = Math.max(280, plot.clientWidth);
    if (Math.abs(w - u.width) > 4) u.setSize({ width: w, height: 240 });
  });
  resize.observe(plot);
  return figure;
}

function dataTable(title: string, unit: string, stack: Stack, hourly: boolean): HTMLElement {
  const fmt = (t: number) => new Date(t * 1000).toISOString().slice(0, hourly ? 16 : 10).replace("T", " ");
  const totals = stack.x.map((_, j) => stack.series.reduce((a, s) => a + s.values[j], 0));
  return h(
    "details",
    { class: "chart-data" },
    h("summary", {}, "The chart's data"),
    h(
      "div",
      { class: "table-wrap", tabindex: 0, role: "region", "aria-label": `${title}: data` },
      h(
        "table",
        { "data-chart": "stack" },
        h("caption", {}, `${title} (${unit})`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, hourly ? "Hour (UTC)" : "Day (UTC)"), stack.series.map((s) => h("th", { scope: "col", class: "num" }, s.name)), h("th", { scope: "col", class: "num" }, "Total"))),
        h(
          "tbody",
          {},
          stack.x.map((t, j) =>
            h(
              "tr",
              {},
              h("th", { scope: "row" }, fmt(t)),
              stack.series.map((s) => h("td", { class: "num", "data-series": s.name, "data-value": s.values[j] }, String(s.values[j]))),
              h("td", { class: "num", "data-total": totals[j] }, String(totals[j])),
            ),
          ),
        ),
      ),
    ),
  );
}
