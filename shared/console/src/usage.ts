// /usage read into a stack of series: one per value of the grouping.
import type { ApiError, Client, components } from "../../../sdk/typescript/src/index.ts";
import type { Stack } from "./chart.ts";

type Result = components["schemas"]["UsageResult"];
export type Grouping = "operation" | "key" | "project" | "service" | "";
export type Measure = "requests" | "chargedCredits";

const field: Record<Exclude<Grouping, "">, keyof Result> = { operation: "operation", key: "keyId", project: "projectId", service: "serviceId" };

export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** Every bucket from start to now (following nextCursor), as a stack. */
export async function usageStack(client: Client, start: Date, width: "1h" | "1d", groupBy: Grouping, measure: Measure): Promise<{ ok: true; stack: Stack } | { ok: false; error: ApiError }> {
  const x: number[] = [];
  const byGroup = new Map<string, number[]>();
  let cursor: string | undefined;
  do {
    const r = await client.usageRead({ query: { start: start.toISOString(), bucketWidth: width, ...(groupBy ? { groupBy } : {}), ...(cursor ? { cursor } : {}) } });
    if (!r.ok) return { ok: false, error: r.error };
    for (const bucket of r.value.data ?? []) {
      const j = x.length;
      x.push(Date.parse(bucket.startTime) / 1000);
      for (const res of bucket.results ?? []) {
        const name = groupBy ? String(res[field[groupBy]] ?? "(none)") : measure === "requests" ? "requests" : "credits";
        let values = byGroup.get(name);
        if (!values) byGroup.set(name, (values = []));
        values[j] = round6((values[j] ?? 0) + Number(res[measure] ?? 0));
      }
    }
    cursor = r.value.nextCursor ?? undefined;
  } while (cursor);
  const series = [...byGroup.entries()]
    .map(([name, values]) => ({ name, values: x.map((_, j) => values[j] ?? 0) }))
    .sort((a, b) => sum(b.values) - sum(a.values));
  return { ok: true, stack: { x, series } };
}

function sum(v: number[]): number {
  return v.reduce((a, b) => a + b, 0);
}
