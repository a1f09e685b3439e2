import { expect } from "vitest";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format's samples (comments skipped); enough of the format for these checks. */
export function parseExposition(text: string): Sample[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        labels[key!] = value!;
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

export interface Scrape {
  text: string;
  samples: Sample[];
  contentType: string | null;
}

/** `GET /metrics` without authentication: an operator's scraper holds no API key. */
export async function scrapeMetrics(baseUrl: string): Promise<Scrape> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parseExposition(text), contentType: response.headers.get("content-type") };
}

/** The sum of a family's samples whose labels include `labels` (0 when none exists yet). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** The `# HELP` text of a family, or null when the exposition has none. */
export function helpOf(text: string, name: string): string | null {
  const line = text.split("\n").find((l) => l.startsWith(`# HELP ${name} `));
  return line ? line.slice(`# HELP ${name} `.length) : null;
}

export async function eventually(check: () => Promise<void>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
