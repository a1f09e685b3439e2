import { z } from "zod";

/** The roster takes no parameters; an unknown one is refused rather than ignored. */
export const workerRosterQuerySchema = z.strictObject({});
/** Nor do the hint streams. */
export const sessionHintsQuerySchema = z.strictObject({});
