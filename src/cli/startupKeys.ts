import type { Logger } from "pino";
import { findMasterKey, loadRetiredMasterKeys, type RetiredMasterKey } from "../secrets/masterKey.js";
import { tightenDataDirModes } from "./dataDirModes.js";

export interface StartupKeys {
  /** The key found in the environment or the data dir; null: agree on the database's, or generate. */
  found: ReturnType<typeof findMasterKey>;
  /** Retired keys (a rotation in progress): they open older records and never seal new ones. */
  retiredKeys: RetiredMasterKey[];
}

/**
 * What every server that holds Control does before it opens storage: the data dir reachable by
 * its user only (said once when tightened), then the master keys, so that a refused key file (too
 * open, malformed) stops start-up with nothing opened. `withKeys` false (a split coordinator):
 * no key is looked for at all.
 */
export function prepareDataDir(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  withKeys = true,
): StartupKeys {
  const tightened = tightenDataDirModes(dataDir);
  if (tightened.length > 0)
    logger.warn(
      { component: "data-dir", tightened },
      `data dir: only the server's user may reach it now (${tightened.join(", ")})`,
    );
  const found = withKeys ? findMasterKey({ env, dataDir }) : null;
  const retiredKeys = found ? loadRetiredMasterKeys({ env, dataDir, currentId: found.masterKey.id }) : [];
  return { found, retiredKeys };
}
