import { PlatformError } from "../kernel/errors.js";

/**
 * A new session's insert found the environment revision it pins no longer the newest revision of a
 * live environment: the environment was updated, archived or deleted after the session read it (or
 * after this process last saw it). Nothing was written; the session starts again on a fresh read.
 */
export class EnvironmentPinMoved extends PlatformError<"environment_pin_moved"> {
  constructor(environmentId: string, revision: number) {
    super(
      "environment_pin_moved",
      `environment ${environmentId} is no longer at revision ${revision}, or no longer live`,
      { retryable: true },
    );
  }
}
