#!/usr/bin/env node
// Summarizes a V8 CPU profile of an awaken process (AWAKEN_BENCH_NODE_ARGS='--cpu-prof
// --cpu-prof-dir=/tmp/prof' on any bench): the functions with the most self time, the most
// inclusive time, and self time by where the code lives (our dist/<folder>, each dependency,
// Node's own). Idle samples are left out; percentages are of the busy samples kept.
//
// Usage: node bench/profileTop.mjs --profile <file.cpuprofile> [--from S] [--to S] [--top N]
//   --from, --to  keep the samples between these seconds since the profile started (negative:
//                 seconds before its end), e.g. --from -6 --to -0.2 for a timed part that ended
//                 just before the server stopped; default the whole profile
//   --top         rows per table (default 10)
//
// The profiler samples wall time of the JavaScript thread: on a machine with more runnable work
// than cores, a process preempted inside a system call (a socket write that wakes its reader)
// shows that wait as the call's self time. Compare such rows against `perf` or /proc CPU time.
import { readFileSync } from "node:fs";
import { benchArgs } from "./args.mjs";

const values = benchArgs(import.meta.url, {
  profile: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  top: { type: "string", default: "10" },
});
const file = values.profile;
if (!file) {
  process.stderr.write("profileTop.mjs: --profile <file.cpuprofile> is required (see --help)\n");
  process.exit(2);
}
const top = Number(values.top);
const profile = JSON.parse(readFileSync(file, "utf8"));

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

/** Sample time per node id inside the [from, to] window, in µs. */
function windowedTimes() {
  const total = profile.timeDeltas.reduce((sum, d) => sum + d, 0);
  const at = (seconds, fallback) => {
    if (seconds === undefined) return fallback;
    const us = Number(seconds) * 1e6;
    return us < 0 ? total + us : us;
  };
  const from = at(values.from, 0);
  const to = at(values.to, total);
  const times = new Map();
  let clock = 0;
  profile.samples.forEach((id, i) => {
    clock += profile.timeDeltas[i] ?? 0;
    if (clock >= from && clock <= to) times.set(id, (times.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return { times, keptSeconds: (Math.min(to, total) - Math.max(from, 0)) / 1e6 };
}

const shortUrl = (url) =>
  url.includes("node_modules/")
    ? `nm/${url.split("node_modules/").pop()}`
    : url.replace(/^file:\/\/.*?\/dist\//, "dist/");
const frameName = ({ callFrame: f }) =>
  `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ""}`;

/** Where a frame's code lives: dist/<folder>, a dependency, a Node module, or a VM entry. */
function area({ callFrame: f }) {
  if (f.url.includes("node_modules/")) {
    const parts = f.url.split("node_modules/").pop().split("/");
    return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (f.url.includes("/dist/")) return `dist/${f.url.split("/dist/").pop().split("/")[0]}`;
  if (f.url.startsWith("node:")) return `node:${f.url.slice(5).split("/")[0]}`;
  return f.functionName || "(vm)";
}

const { times, keptSeconds } = windowedTimes();
const self = new Map();
const inclusive = new Map();
const areas = new Map();
let busy = 0;
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
for (const [id, us] of times) {
  const node = nodes.get(id);
  if (node.callFrame.functionName === "(idle)") continue;
  busy += us;
  add(self, frameName(node), us);
  add(areas, area(node), us);
  // Each function once per sample, however often it recurs on the stack.
  const seen = new Set();
  for (let at = id; at !== undefined; at = parents.get(at)) {
    const name = frameName(nodes.get(at));
    if (!seen.has(name)) {
      seen.add(name);
      add(inclusive, name, us);
    }
  }
}

const table = (title, map) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((100 * us) / busy).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`,
    );
  }
};
console.log(`${file}: ${keptSeconds.toFixed(2)} s kept, ${(busy / 1000).toFixed(0)} ms busy`);
table("Self time", self);
table("Inclusive time (root and event-loop frames included)", inclusive);
table("Self time by area", areas);
