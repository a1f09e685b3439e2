// Turns raw measurements into the figures docs/operations.md reports, and prints them: one detail line per
// level as it finishes, then one summary table (Markdown, so it can be pasted into
// docs/operations.md as printed) and the two goals (commit rate, commits ≤ facts).

/** Commit-rate goal: the platform's commits/s at concurrency 8 must reach half the raw single-row rate. */
export const RATIO_GOAL = 0.5;
export const RATIO_GOAL_CONCURRENCY = 8;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sortedBy = (xs, key) => xs.map(key).sort((a, b) => a - b);
const fixed = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
const percent = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–");

/**
 * One row of the summary from a finished level (see turnDriver.runLevel) and the raw rates read
 * before and after it; their mean is the yardstick. `cores` is the machine's CPU count.
 */
export function summarize({ topology, concurrency, raw: rawReadings, level, cores }) {
  const { samples, elapsedMs, writes, commits, server, cpu, statements, linkCalls, transportCalls } = level;
  const raw = mean(rawReadings);
  const turns = samples.length;
  const seconds = elapsedMs / 1000;
  const totals = sortedBy(samples, (s) => s.total);
  const commitsPerSecond = commits / seconds;
  return {
    topology,
    concurrency,
    turns,
    seconds,
    turnsPerSecond: turns / seconds,
    p50: percentile(totals, 50),
    p99: percentile(totals, 99),
    toToolP50: percentile(
      sortedBy(samples, (s) => s.toTool),
      50,
    ),
    commitsPerSecond,
    raw,
    rawReadings,
    ratio: commitsPerSecond / raw,
    commitsPerTurn: commits / turns,
    factsPerTurn: writes.facts / turns,
    perTurn: { fenced: writes.fenced / turns, inputs: writes.inputs / turns, claims: writes.claims / turns },
    server: { p50: percentile(server, 50), mean: mean(server), p99: percentile(server, 99) },
    cpu: cpu ? cpuPerTurn(cpu, { turns, cores, commitsPerTurn: commits / turns, raw }) : null,
    statements: statements ? statementsPerTurn(statements, turns, writes.claims) : null,
    linkCallsPerTurn: typeof linkCalls === "number" ? linkCalls / turns : null,
    transportCallsPerTurn: transportCalls
      ? Object.entries(transportCalls)
          .map(([route, n]) => [route, n / turns])
          .sort((a, b) => b[1] - a[1])
      : null,
  };
}

/** The claim statement's kind (src/stores/postgres/statementCounter.ts labels it so). */
const CLAIM_KIND = /^with … update runs$/;

/** Statements, round trips, NOTIFYs and claims per turn, from the server's statement counter. */
function statementsPerTurn(sent, turns, claimsFound) {
  const per = (n) => n / turns;
  const claimStatements = Object.entries(sent.kinds)
    .filter(([kind]) => CLAIM_KIND.test(kind))
    .reduce((sum, [, n]) => sum + n, 0);
  return {
    statements: per(sent.statements),
    roundTrips: per(sent.roundTrips),
    unnamed: per(sent.statements - sent.named),
    notifies: per(sent.kinds["select pg_notify"] ?? 0),
    emptyClaims: per(Math.max(0, claimStatements - claimsFound)),
    kinds: Object.entries(sent.kinds)
      .map(([kind, n]) => [kind, per(n)])
      .sort((a, b) => b[1] - a[1]),
  };
}

/**
 * CPU ms per turn by role, the cores busy on average, and the client's cap: had the platform and
 * the database cost nothing, every core running only the bench client would still allow at most
 * `cores × 1000 / client ms` turns/s, i.e. that many commits/s, i.e. that share of the raw rate.
 * A ratio above the cap is out of reach on this machine with this client, whatever the platform
 * does (and the cap is generous: the client is one Node process, mostly one thread).
 */
function cpuPerTurn(cpu, { turns, cores, commitsPerTurn, raw }) {
  const per = (ms) => ms / turns;
  const clientCapTurns = (cores * 1000) / per(cpu.client);
  return {
    client: per(cpu.client),
    awaken: per(cpu.awaken),
    awakenEach: cpu.awakenEach.map(per),
    postgres: per(cpu.postgres),
    other: per(cpu.other),
    coresBusy: cpu.machine / cpu.wallMs,
    cores,
    clientCapTurns,
    clientCapRatio: (clientCapTurns * commitsPerTurn) / raw,
  };
}

export function detailLines(row) {
  const t = row.perTurn;
  return [
    `${row.topology} c=${row.concurrency}: ${row.turns} turns in ${fixed(row.seconds, 2)} s = ` +
      `${fixed(row.turnsPerSecond, 1)} turns/s | turn p50 ${fixed(row.p50, 1)} ms, p99 ${fixed(row.p99, 1)} ms ` +
      `(message→requires_action p50 ${fixed(row.toToolP50, 1)} ms)`,
    `    commits: ${fixed(row.commitsPerSecond, 0)}/s = ${percent(row.ratio)} of raw ${fixed(row.raw, 0)}/s ` +
      `(${row.rawReadings.map((r) => fixed(r, 0)).join(" before, ")} after) | ` +
      `per turn ${fixed(t.fenced, 2)} fenced + ${fixed(t.inputs, 2)} inputs + ${fixed(t.claims, 2)} claims = ` +
      `${fixed(row.commitsPerTurn, 2)} commits vs ${fixed(row.factsPerTurn, 2)} facts`,
    // The committed timestamps have 1 ms resolution: the mean over many turns is the finer figure.
    `    server-side platform time per turn (input committed → idle committed, both halves): ` +
      `p50 ${row.server.p50} ms, mean ${fixed(row.server.mean, 2)} ms, p99 ${row.server.p99} ms`,
    ...(row.statements
      ? [
          `    PostgreSQL statements per turn: ${fixed(row.statements.statements, 2)} in ` +
            `${fixed(row.statements.roundTrips, 2)} round trips (${fixed(row.statements.unnamed, 2)} unnamed, ` +
            `${fixed(row.statements.notifies, 2)} pg_notify, ${fixed(row.statements.emptyClaims, 2)} claims ` +
            `that found nothing) | ${row.statements.kinds.map(([k, n]) => `${k} ${fixed(n, 2)}`).join(", ")}`,
        ]
      : []),
    ...(row.linkCallsPerTurn === null
      ? []
      : [
          `    Control link calls per turn (the coordinator's internal RPC to Control): ${fixed(row.linkCallsPerTurn, 2)}`,
        ]),
    ...(row.transportCallsPerTurn
      ? [
          `    worker transport calls per turn: ${fixed(
            row.transportCallsPerTurn.reduce((sum, [, n]) => sum + n, 0),
            2,
          )} | ${row.transportCallsPerTurn.map(([route, n]) => `${route} ${fixed(n, 2)}`).join(", ")}`,
        ]
      : []),
    ...(row.cpu
      ? [
          `    CPU per turn: client ${fixed(row.cpu.client, 2)} ms, awaken ${fixed(row.cpu.awaken, 2)} ms` +
            (row.cpu.awakenEach.length > 1
              ? ` (${row.cpu.awakenEach.map((ms) => fixed(ms, 2)).join(" + ")} by process, server first)`
              : "") +
            ", " +
            `PostgreSQL ${fixed(row.cpu.postgres, 2)} ms, rest of the machine ${fixed(row.cpu.other, 2)} ms ` +
            `(${fixed(row.cpu.coresBusy, 2)} of ${row.cpu.cores} cores busy) | client's cap: ` +
            `${fixed(row.cpu.clientCapTurns, 0)} turns/s = ${percent(row.cpu.clientCapRatio)} of raw`,
        ]
      : []),
  ];
}

/** Where the timed turns' CPU went (bench/cpuTime.mjs), one row per level that measured it. */
export function cpuTable(rows) {
  const measured = rows.filter((row) => !row.error && row.cpu);
  if (measured.length === 0) return [];
  const lines = [
    "| topology | concurrency | client ms/turn | awaken ms/turn | PostgreSQL ms/turn | rest ms/turn | cores busy | client's cap turns/s | client's cap ours/raw |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const row of measured) {
    const c = row.cpu;
    lines.push(
      `| ${row.topology} | ${row.concurrency} | ${fixed(c.client, 2)} | ${fixed(c.awaken, 2)} | ` +
        `${fixed(c.postgres, 2)} | ${fixed(c.other, 2)} | ${fixed(c.coresBusy, 2)} of ${c.cores} | ` +
        `${fixed(c.clientCapTurns, 0)} | ${percent(c.clientCapRatio)} |`,
    );
  }
  return lines;
}

export function summaryTable(rows) {
  const header =
    "| topology | concurrency | turns/s | p50 ms | p99 ms | commits/s | raw commits/s | ours/raw | commits/turn | facts/turn |";
  const lines = [header, "|---|---|---|---|---|---|---|---|---|---|"];
  for (const row of rows) {
    if (row.error) {
      lines.push(`| ${row.topology} | ${row.concurrency} | failed: ${row.error} | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${row.topology} | ${row.concurrency} | ${fixed(row.turnsPerSecond, 1)} | ${fixed(row.p50, 1)} | ` +
        `${fixed(row.p99, 1)} | ${fixed(row.commitsPerSecond, 0)} | ${fixed(row.raw, 0)} | ${percent(row.ratio)} | ` +
        `${fixed(row.commitsPerTurn, 2)} | ${fixed(row.factsPerTurn, 2)} |`,
    );
  }
  return lines;
}

/** One verdict line per topology for each goal; "not measured" when its level did not run. */
export function goalLines(rows, topologies) {
  const lines = [
    `Goal: our commits/s ≥ ${100 * RATIO_GOAL}% of the raw single-row commit rate at ` +
      `concurrency ${RATIO_GOAL_CONCURRENCY}:`,
  ];
  for (const topology of topologies) {
    const row = rows.find(
      (r) => r.topology === topology && r.concurrency === RATIO_GOAL_CONCURRENCY && !r.error,
    );
    const cap = row?.cpu
      ? ` (the bench client alone caps it at ${percent(row.cpu.clientCapRatio)} here)`
      : "";
    lines.push(
      row
        ? `  ${topology}: ${percent(row.ratio)} → ${row.ratio >= RATIO_GOAL ? "met" : "NOT met"}${cap}`
        : `  ${topology}: not measured`,
    );
  }
  lines.push("Goal: commits per turn ≤ facts per turn:");
  for (const topology of topologies) {
    const measured = rows.filter((r) => r.topology === topology && !r.error);
    const missed = measured.filter((r) => r.commitsPerTurn > r.factsPerTurn);
    lines.push(
      measured.length === 0
        ? `  ${topology}: not measured`
        : missed.length === 0
          ? `  ${topology}: met at every level`
          : `  ${topology}: NOT met at c=${missed.map((r) => r.concurrency).join(", ")}`,
    );
  }
  return lines;
}
