import { existsSync } from "node:fs";
import { join } from "node:path";
import { MIN_CONTROL_TOKEN_LENGTH } from "../edge/control-link/linkServices.js";
import { MASTER_KEY_ENV, MASTER_KEY_FILE, MASTER_KEY_RETIRED_ENV } from "../secrets/masterKey.js";

/** Forbidden or missing configuration of a split process: printed, and the process exits 2. */
export class SplitConfigError extends Error {}

/** A setting a process of this role must not hold, and why; each is a start-up error naming it. */
interface Forbidden {
  name: string;
  why: string;
}

const FORBIDDEN: Record<"control" | "coordinator", Forbidden[]> = {
  control: [
    {
      name: "AWAKEN_WORKER_TOKEN",
      why: "Control serves no workers; set it on the coordinator (and the workers) only",
    },
  ],
  coordinator: [
    {
      name: MASTER_KEY_ENV,
      why: "the seal key lives only in Control; the coordinator asks Control to seal and open",
    },
    {
      name: MASTER_KEY_RETIRED_ENV,
      why: "the seal keys live only in Control; the coordinator asks Control to seal and open",
    },
    {
      name: "AWAKEN_API_KEY",
      why: "API keys are Control's: set it on `awaken control`, which registers it",
    },
  ],
};

/** No forbidden setting, and the control token both sides need: present, long enough. */
export function checkSplitConfig(
  role: "control" | "coordinator",
  env: NodeJS.ProcessEnv,
  dataDir: string,
): { token: string } {
  for (const { name, why } of FORBIDDEN[role]) {
    if (env[name]) throw new SplitConfigError(`${name} is set, but ${why}: remove it.`);
  }
  const keyFile = join(dataDir, MASTER_KEY_FILE);
  if (role === "coordinator" && existsSync(keyFile)) {
    throw new SplitConfigError(
      `${keyFile} exists, but the seal key lives only in Control. Leave the file where it is (what was sealed under it needs it) and give the coordinator a data dir of its own (--data-dir; by default .awaken-coordinator).`,
    );
  }
  const token = env.AWAKEN_CONTROL_TOKEN;
  if (!token) {
    throw new SplitConfigError(
      "missing AWAKEN_CONTROL_TOKEN: the private Control↔Coordinator token, the same on both " +
        "(generate one with `openssl rand -base64 48`).",
    );
  }
  if (token.length < MIN_CONTROL_TOKEN_LENGTH) {
    throw new SplitConfigError(
      `AWAKEN_CONTROL_TOKEN must be at least ${MIN_CONTROL_TOKEN_LENGTH} characters.`,
    );
  }
  return { token };
}

/** `--<flag>` or its variable: one http(s) URL, or several replicas' separated by commas. */
export function peerUrl(flag: string, value: string | undefined, example: string): string {
  if (!value) throw new SplitConfigError(`missing ${flag} (e.g. ${example})`);
  for (const entry of value.split(",")) {
    let parsed: URL;
    try {
      parsed = new URL(entry.trim());
    } catch {
      throw new SplitConfigError(`${flag} is not a URL: ${entry}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new SplitConfigError(`${flag} must be an http:// or https:// URL, not ${parsed.protocol}`);
    }
  }
  return value;
}
