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

/**
 * The chart draws the largest series and folds the rest into "other": past
 * about eight, colours stop being told apart and the legend stops being
 * read. Each of these nine colours is distinct from the others (Tableau 10
 * without its grey, which "other" takes).
 */
export const topN = 8;
const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
const otherColour = "#8c8c8c";

/** The top n series by volume (stack is sorted largest first), and the rest summed as "other". */
export function foldSmall(stack: Stack, n = topN): Stack {
  if (stack.series.length <= n + 1) return stack;
  const rest = stack.series.slice(n);
  const other = { name: `other (${rest.length})`, values: stack.x.map((_, j) => rest.reduce((a, s) => a + s.values[j], 0)) };
  return { x: stack.x, series: [...stack.series.slice(0, n), other] };
}

/**
 * The x range the data needs, not the range that was asked: a day of traffic
 * inside one hour is one bar, drawn wide in the middle rather than a sliver
 * at the edge of 24. At least three buckets wide, so one bar stays a bar.
 */
export function fitRange(stack: Stack, bucket: number): [number, number] {
  const used = stack.x.filter((_, j) => stack.series.some((s) => s.values[j] !== 0));
  const xs = used.length ? used : stack.x;
  let lo = Math.min(...xs);
  let hi = Math.max(...xs);
  const minSpan = 2 * bucket;
  if (hi - lo < minSpan) {
    const grow = (minSpan - (hi - lo)) / 2;
    lo -= grow;
    hi += grow;
  }
  return [lo - bucket / 2, hi + bucket / 2];
}

/**
 * Draws stack into host: each series on top of the ones before it. uPlot
 * has no stacking of its own, so the cumulative sums are drawn, the
 * largest first and each smaller one over it; the legend and the table
 * show each series' own values. caption is null when the section's
 * heading already says what the chart is.
 */
export function stackedChart(host: HTMLElement, title: string, unit: string, full: Stack, hourly: boolean, caption = true): HTMLElement {
  const stack = foldSmall(full);
  const figure = h("figure", { class: "chart", "aria-label": caption ? null : title });
  const plot = h("div", { class: "chart-plot", role: "img", "aria-label": `${title}: chart; the same data is in the table below` });
  figure.append(caption ? h("figcaption", {}, title) : "", plot, dataTable(title, unit, full, hourly));
  host.replaceChildren(figure);
  if (stack.x.length === 0 || stack.series.length === 0) {
    plot.append(h("p", { class: "empty" }, "No requests in this range."));
    return figure;
  }

  const colour = (i: number) => (i === topN && stack.series.length > topN ? otherColour : palette[i % palette.length]);
  const sums: number[][] = [];
  stack.series.forEach((s, i) => sums.push(s.values.map((v, j) => v + (i > 0 ? sums[i - 1][j] : 0))));
  const order = stack.series.map((_, i) => i).reverse();
  const width = Math.max(280, plot.clientWidth || host.clientWidth || 600);
  const bucket = hourly ? 3600 : 86400;
  const [lo, hi] = fitRange(stack, bucket);
  plot.dataset.range = `${lo},${hi}`;
  const bars = uPlot.paths.bars!({ size: [0.7, 160], gap: 2 });
  const narrow = width < 500;
  const opts: uPlot.Options = {
    width,
    height: narrow ? 200 : 240,
    legend: { show: false },
    cursor: { points: { show: false } },
    // Buckets are UTC hours and days, as the table says: the axis too.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    scales: { x: { time: true, range: () => [lo, hi] }, y: { range: (_u, _min, max) => [0, niceMax(max)] } },
    axes: [
      {
        space: narrow ? 70 : 90,
        // A tick per bucket at most, labelled as people say it: 14:00, or Nov 28.
        incrs: hourly ? [3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400] : [86400, 2 * 86400, 7 * 86400, 14 * 86400],
        values: (_u, ticks) => ticks.map((t) => tick(t, hourly)),
        stroke: "#4b5563",
        grid: { show: false },
        ticks: { stroke: "#d1d5db" },
      },
      { label: unit, size: 56, stroke: "#4b5563", grid: { stroke: "#eef0f3" }, ticks: { show: false }, values: (_u, ticks) => ticks.map(compact) },
    ],
    series: [
      { label: hourly ? "Hour (UTC)" : "Day (UTC)" },
      ...order.map((i) => ({
        label: stack.series[i].name,
        stroke: colour(i),
        fill: colour(i),
        width: 0,
        paths: bars,
        points: { show: false },
      })),
    ],
  };
  // An empty bucket draws nothing rather than a flat bar.
  const data: uPlot.AlignedData = [stack.x, ...order.map((i) => sums[i].map((v) => (v === 0 ? null : v)))];
  const tip = h("div", { class: "chart-tip", "aria-hidden": "true", hidden: true });
  opts.hooks = { setCursor: [(u) => showTip(u, tip, stack, colour, hourly)] };
  const u = new uPlot(opts, data, plot);
  u.over.append(tip);
  figure.insertBefore(legend(stack, colour, unit), figure.querySelector(".chart-data"));
  const resize = new ResizeObserver(() => {
    if (!plot.isConnected) {
      resize.disconnect();
      u.destroy();
      return;
    }
    const w = Math.max(280, plot.clientWidth);
    if (Math.abs(w - u.width) > 4) u.setSize({ width: w, height: u.height });
  });
  resize.observe(plot);
  return figure;
}

/** The legend as a list in a box that wraps, and scrolls inside itself if it must: largest first, with totals. */
function legend(stack: Stack, colour: (i: number) => string, unit: string): HTMLElement {
  return h(
    "ul",
    { class: "chart-legend", "aria-label": "Legend" },
    stack.series.map((s, i) => {
      const total = s.values.reduce((a, b) => a + b, 0);
      const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
      // CSSOM, not a style attribute: the policy allows no inline style.
      swatch.style.background = colour(i);
      return h("li", { "data-legend": s.name, "data-colour": colour(i), title: s.name }, swatch, h("span", { class: "name" }, s.name), h("span", { class: "total" }, `${compact(total)} ${unit}`));
    }),
  );
}

/** The top of the y axis: the first of 1, 2, 2.5, 5 or 10 times a power of ten above the tallest bar plus a tenth. */
/** The hovered bucket's values, largest first, in a box beside the cursor (kept inside the plot). */
function showTip(u: uPlot, tip: HTMLElement, stack: Stack, colour: (i: number) => string, hourly: boolean): void {
  const j = u.cursor.idx;
  const rows = j === null || j === undefined ? [] : stack.series.map((s, i) => ({ s, i, v: s.values[j] })).filter((r) => r.v !== 0);
  if (j === null || j === undefined || rows.length === 0) {
    tip.hidden = true;
    return;
  }
  const at = new Date(stack.x[j] * 1000).toISOString();
  tip.replaceChildren(
    h("strong", {}, hourly ? `${at.slice(0, 10)} ${at.slice(11, 16)} UTC` : at.slice(0, 10)),
    ...rows.map((r) => {
      const swatch = h("span", { class: "swatch" });
      swatch.style.background = colour(r.i);
      return h("div", {}, swatch, h("span", { class: "name" }, r.s.name), h("span", { class: "total" }, r.v.toLocaleString("en-US", { maximumFractionDigits: 6 })));
    }),
  );
  tip.hidden = false;
  const left = u.cursor.left ?? 0;
  const flip = left + tip.offsetWidth + 16 > u.over.clientWidth;
  tip.style.left = `${Math.max(0, flip ? left - tip.offsetWidth - 12 : left + 12)}px`;
  tip.style.top = "4px";
}

function niceMax(max: number): number {
  const m = Math.max(1, max) * 1.1;
  const p = 10 ** Math.floor(Math.log10(m));
  return [1, 2, 2.5, 5, 10].map((f) => f * p).find((v) => v >= m) ?? 10 * p;
}

/** 1,234 as 1.2K, and small fractions kept. */
export function compact(n: number): string {
  return new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: n < 10 ? 2 : 1 }).format(n);
}

function tick(t: number, hourly: boolean): string {
  const d = new Date(t * 1000);
  const day = d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
  if (!hourly) return day;
  const hh = d.toISOString().slice(11, 16);
  return hh === "00:00" ? day : hh;
}

/**
 * Every non-zero value as its own row (bucket, group, value): a long table
 * stays as narrow as three columns however many groups there are.
 */
function dataTable(title: string, unit: string, stack: Stack, hourly: boolean): HTMLElement {
  const fmt = (t: number) => new Date(t * 1000).toISOString().slice(0, hourly ? 16 : 10).replace("T", " ");
  const rows: { t: number; name: string; v: number }[] = [];
  stack.x.forEach((t, j) => {
    for (const s of stack.series) if (s.values[j] !== 0) rows.push({ t, name: s.name, v: s.values[j] });
  });
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
        h("caption", {}, `${title} (${unit}), every group on its own row`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, hourly ? "Hour (UTC)" : "Day (UTC)"), h("th", { scope: "col" }, "Group"), h("th", { scope: "col", class: "num" }, unit))),
        h(
          "tbody",
          {},
          rows.length === 0
            ? h("tr", {}, h("td", { colspan: 3, class: "empty" }, "Nothing in this range."))
            : rows.map((r) =>
                h(
                  "tr",
                  {},
                  h("th", { scope: "row", "data-label": hourly ? "Hour (UTC)" : "Day (UTC)" }, fmt(r.t)),
                  h("td", { "data-label": "Group" }, h("span", { class: "cell" }, r.name)),
                  h("td", { class: "num", "data-label": unit, "data-series": r.name, "data-value": r.v }, r.v.toLocaleString("en-US", { maximumFractionDigits: 6 })),
                ),
              ),
        ),
      ),
    ),
  );
}
