import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { dropSchema, testDatabaseUrl } from "./postgresFixtures.js";

/** deploy/postgres/split-roles.sql, as an operator runs it with psql. */
export const SPLIT_ROLES_SQL = new URL("../../deploy/postgres/split-roles.sql", import.meta.url);

/** The names the script creates; each role owns the schema of the same name. */
export interface SplitRoleNames {
  control: string;
  coordinator: string;
}

export const DEPLOYED_NAMES: SplitRoleNames = {
  control: "awaken_control",
  coordinator: "awaken_coordinator",
};

/** Names no other run uses (roles are cluster-wide, so parallel runs must not share them). */
export function freshSplitRoleNames(): SplitRoleNames {
  const suffix = randomBytes(6).toString("hex");
  return { control: `awaken_control_t${suffix}`, coordinator: `awaken_coordinator_t${suffix}` };
}

/**
 * The script as node-postgres can send it: psql's meta-commands dropped (the `\if … \endif` blocks
 * only check that the variables are set, and `\set ON_ERROR_STOP` is what a multi-statement query
 * does anyway), the password variables substituted as literals the way psql's `:'name'` does, and
 * the role and schema names replaced by `names`.
 */
export function splitRolesScript(names: SplitRoleNames, passwords: SplitRoleNames): string {
  const lines: string[] = [];
  let depth = 0;
  for (const line of readFileSync(SPLIT_ROLES_SQL, "utf8").split("\n")) {
    const meta = line.trimStart();
    if (meta.startsWith("\\if")) depth += 1;
    else if (meta.startsWith("\\endif")) depth -= 1;
    else if (depth === 0 && !meta.startsWith("\\")) lines.push(line);
  }
  if (depth !== 0) throw new Error("split-roles.sql: unbalanced \\if/\\endif");
  const variables: Record<string, string> = {
    control_password: passwords.control,
    coordinator_password: passwords.coordinator,
  };
  return lines
    .join("\n")
    .replace(/:'([a-z_]+)'/g, (whole, name: string) => {
      const value = variables[name];
      if (value === undefined) throw new Error(`split-roles.sql uses psql variable ${whole}, unknown here`);
      return pg.escapeLiteral(value);
    })
    .replace(new RegExp(`\\b${DEPLOYED_NAMES.control}\\b`, "g"), names.control)
    .replace(new RegExp(`\\b${DEPLOYED_NAMES.coordinator}\\b`, "g"), names.coordinator);
}

/** Runs the script on the test server as its superuser. */
export async function applySplitRoles(names: SplitRoleNames, passwords: SplitRoleNames): Promise<void> {
  await asSuperuser((client) => client.query(splitRolesScript(names, passwords)));
}

/** A URL for `role` that selects `schema` through the search_path, as a deployment writes it. */
export function roleUrl(role: string, password: string, schema: string): string {
  const url = new URL(testDatabaseUrl());
  url.username = role;
  url.password = password;
  url.searchParams.set("options", `-c search_path=${schema}`);
  return url.toString();
}

/** Drops both schemas (with everything in them) and both roles; missing ones are fine. */
export async function dropSplitRoles(names: SplitRoleNames): Promise<void> {
  const url = testDatabaseUrl();
  await dropSchema(url, names.control);
  await dropSchema(url, names.coordinator);
  await asSuperuser(async (client) => {
    for (const role of [names.control, names.coordinator]) {
      const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
      if (!rowCount) continue;
      // Privileges granted to the role anywhere in this database, then the role (its per-role
      // settings go with it).
      await client.query(`drop owned by ${pg.escapeIdentifier(role)}`);
      await client.query(`drop role ${pg.escapeIdentifier(role)}`);
    }
  });
}

/** A client on the test server as its superuser (the URL's own user). */
export async function asSuperuser<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
