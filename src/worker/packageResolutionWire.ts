/**
 * The wire of `POST /v1/awaken/worker/package-resolution`: a remote worker reads an environment
 * revision's frozen package resolution (`resolution: null`) or records the one it made
 * (first writer wins; the answer is the recorded one, another worker's when it was first). It names
 * the claim it holds and the revision; the coordinator checks the claim is live, on that session,
 * and that the session pins that revision, before it reads or writes anything. The resolution is a
 * JSON object here; the coordinator and the worker check its content (kernel/packageResolution.ts).
 */
import { z } from "zod";
import type { PackageResolution } from "../kernel/packageResolution.js";
import { claimPart } from "./credentialWire.js";

const isObject = (value: unknown): boolean =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const resolution = z.custom<PackageResolution>(isObject, "expected a package resolution");

export const packageResolutionRequestSchema = z.strictObject({
  ...claimPart,
  environmentId: z.string().min(1).max(200),
  revision: z.number().int().nonnegative(),
  resolution: resolution.nullable(),
});

export const packageResolutionResponseSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("resolution"), resolution: resolution.nullable() }),
  z.strictObject({ kind: z.literal("claim_lost"), reason: z.string() }),
]);
