import { randomUUID } from "node:crypto";
import { Backoff } from "../kernel/backoff.js";
import { type Clock, sleep } from "../kernel/clock.js";
import { AwakenError, invalid } from "../kernel/errors.js";
import type { NameSpace, SessionNameStore } from "./ports.js";

export const SESSION_NAME_MAX_CHARS = 256;

// Control characters, lone surrogates, private use, invisible format characters (bidi overrides,
// zero-width) and line/paragraph separators: a name is shown, logged and compared as typed.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u;

/** A client-chosen session name: 1–256 printable characters. Anything else is a 400. */
export function validateSessionName(name: unknown, field = "session name"): asserts name is string {
  const ok =
    typeof name === "string" &&
    name.length > 0 &&
    [...name].length <= SESSION_NAME_MAX_CHARS &&
    !UNPRINTABLE.test(name);
  if (!ok) {
    throw invalid(
      `${field}: must be 1-${SESSION_NAME_MAX_CHARS} printable characters (no control, format or separator characters)`,
    );
  }
}

/** A session id names its own session; the prefix is never taken as a client-chosen name. */
export const isSessionId = (name: string): boolean => name.startsWith("sesn_");

export interface NameClaimTiming {
  /**
   * After this long a reservation's creator is presumed gone and another caller takes it over. It
   * outlasts a slow creation (package preparation happens before a session exists).
   */
  staleAfterMs: number;
  /** First and longest pause between looks while another caller creates the target. */
  minPollMs: number;
  maxPollMs: number;
}

export const DEFAULT_NAME_CLAIM_TIMING: NameClaimTiming = {
  staleAfterMs: 10 * 60_000,
  minPollMs: 10,
  maxPollMs: 250,
};

export interface NameKey {
  workspaceId: string;
  space: NameSpace;
  name: string;
}

export interface NameTarget<T> {
  /** The bound target, or null when it no longer exists (then it is made anew). */
  existing(targetId: string): Promise<T | null>;
  create(): Promise<{ id: string; value: T }>;
  /** Undoes a creation whose name another caller bound in the meantime. */
  discard(value: T): Promise<void>;
}

/**
 * The target `key` names, created by exactly one of any number of concurrent callers.
 *
 * Reserve first, then create, then bind: the name's row is inserted as a reservation before the
 * target exists, so the primary key lets one caller create and the others wait for its binding;
 * no loser ever creates a session (which would have run its initial inputs) that must be undone.
 * The target cannot be created inside the reservation's transaction (it is written through other
 * services), so a creator that dies leaves a reservation, taken over once `staleAfterMs` passed.
 * Only then can two targets exist; the late creator's bind fails and it discards its own.
 */
export async function claimName<T>(
  names: SessionNameStore,
  clock: Clock,
  timing: NameClaimTiming,
  key: NameKey,
  target: NameTarget<T>,
): Promise<T> {
  const { workspaceId, space, name } = key;
  const token = randomUUID();
  // Past twice the stale time even a taken-over reservation should have bound: give up.
  const backoff = new Backoff(
    {
      baseMs: timing.minPollMs,
      maxMs: timing.maxPollMs,
      jitter: "none",
      deadlineMs: timing.staleAfterMs * 2,
    },
    { clock },
  );
  for (;;) {
    const entry = await names.get(workspaceId, space, name);
    let replacing: string | undefined;
    if (entry?.state === "bound") {
      const found = await target.existing(entry.targetId);
      if (found !== null) return found;
      replacing = entry.targetId;
    }
    const now = clock.now();
    const staleBefore = now - timing.staleAfterMs;
    const free =
      entry === null ||
      replacing !== undefined ||
      (entry.state === "reserved" && entry.reservedAt < staleBefore);
    if (free) {
      if (await names.reserve(workspaceId, space, name, token, now, staleBefore, replacing)) {
        let created: { id: string; value: T };
        try {
          created = await target.create();
        } catch (error) {
          await names.release(workspaceId, space, name, token);
          throw error;
        }
        if (await names.bind(workspaceId, space, name, token, created.id, clock.now())) return created.value;
        await target.discard(created.value);
      }
      continue; // another caller reserved or bound it first: look again at once
    }
    const pause = backoff.next();
    if (pause === null) {
      throw new AwakenError(
        "unavailable",
        `${space === "session" ? "session name" : "default environment"} is being created by another request; retry`,
      );
    }
    await sleep(pause, undefined, clock);
  }
}
