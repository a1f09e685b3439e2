// The two SQLite drivers that run on Node 22, 24 and 26, side by side on the store's own settings
// (WAL, synchronous=NORMAL, a file on disk): better-sqlite3 (the one the product uses) and Node's
// built-in node:sqlite. Per driver: single-row INSERT commits, a 16-row transaction, and a prepared
// primary-key read, each for --seconds (default 2), in alternating rounds (--rounds, default 3);
// prints the median rate of each and node:sqlite's ratio to better-sqlite3.
//
//   node bench/sqliteDrivers.mjs [--seconds 2] [--rounds 3]
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchArgs } from "./args.mjs";

const args = benchArgs(import.meta.url, {
  seconds: { type: "string", default: "2" },
  rounds: { type: "string", default: "3" },
});
const seconds = Number(args.seconds);
const rounds = Number(args.rounds);
const require = createRequire(import.meta.url);

/** Both drivers' connections answer prepare/run/get/exec/close alike; only how one opens differs. */
const drivers = {
  "better-sqlite3": (path) => new (require("better-sqlite3"))(path),
  "node:sqlite": (path) => new (require("node:sqlite").DatabaseSync)(path),
};

function open(name, dir) {
  const db = drivers[name](join(dir, `${name.replace(/\W/g, "_")}.db`));
  db.exec("pragma journal_mode = WAL; pragma synchronous = NORMAL;");
  db.exec("create table if not exists facts (id integer primary key, session text, body text)");
  return db;
}

/** Operations per second of `step` run back to back for `seconds`. */
function rate(step) {
  const deadline = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < deadline) {
    step(n);
    n += 1;
  }
  return n / seconds;
}

const body = JSON.stringify({ type: "agent.message", content: [{ type: "text", text: "x".repeat(200) }] });
const operations = {
  "insert commit": (db) => {
    const insert = db.prepare("insert into facts (session, body) values (?, ?)");
    return () => insert.run("sesn_1", body);
  },
  "16-row transaction": (db) => {
    const insert = db.prepare("insert into facts (session, body) values (?, ?)");
    return () => {
      db.exec("begin");
      for (let i = 0; i < 16; i += 1) insert.run("sesn_1", body);
      db.exec("commit");
    };
  },
  "primary-key read": (db) => {
    const read = db.prepare("select id, session, body from facts where id = ?");
    return (n) => read.get((n % 1000) + 1);
  },
};

const dir = mkdtempSync(join(tmpdir(), "awaken-bench-sqlite-"));
const results = {};
try {
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? Object.keys(drivers) : Object.keys(drivers).reverse();
    for (const name of order) {
      const db = open(name, dir);
      for (const [operation, make] of Object.entries(operations)) {
        const key = `${operation}|${name}`;
        results[key] ??= [];
        results[key].push(rate(make(db)));
      }
      db.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`SQLite drivers on node ${process.version}, ${rounds} rounds of ${seconds} s (median ops/s)`);
for (const operation of Object.keys(operations)) {
  const better = median(results[`${operation}|better-sqlite3`]);
  const builtin = median(results[`${operation}|node:sqlite`]);
  console.log(
    `  ${operation.padEnd(20)} better-sqlite3 ${Math.round(better).toString().padStart(8)}  ` +
      `node:sqlite ${Math.round(builtin).toString().padStart(8)}  ratio ${(builtin / better).toFixed(2)}`,
  );
}
