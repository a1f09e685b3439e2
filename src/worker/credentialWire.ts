/**
 * The wire of the remote worker's credential route (`POST /v1/awaken/worker/credentials/open`):
 * a remote worker's last-mile holder asks the coordinator to open its session's pinned credential,
 * naming the claim it holds; the coordinator checks the claim is live, runs custody's admission and
 * answers with the opening. Declared once, like the rest of `transportWire.ts`, and parsed by both
 * ends.
 *
 * Extending it (a new holder kind, extra fields): the request is a union discriminated by `holder`
 * over one shared claim part, so a new holder is one more member in `OPEN_REQUEST_MEMBERS`. Objects
 * are strict, so a field one side sends and the other does not know is an error, never silently
 * dropped; and the compile-time checks at the bottom fail as soon as `CredentialOpenRequest` or
 * `CredentialHolderKind` (coordinator/ports.ts) gains a member or a field this wire does not carry.
 */
import { z } from "zod";
import type { CredentialHolderKind, CredentialOpening, CredentialOpenRequest } from "../coordinator/ports.js";

const id = z.string().min(1).max(200);
const count = z.number().int().nonnegative();

/**
 * Who asks: the session and the claim (run, owner, epoch) the worker holds on it. Audited. Shared
 * with the `environment_variable` routes (secretWire.ts), whose claim is checked the same way.
 */
export const claimPart = {
  workspaceId: id,
  sessionId: id,
  runId: id,
  owner: id,
  epoch: count,
};

/** One member per holder kind; each names the use it opens for. */
const OPEN_REQUEST_MEMBERS = [
  z.strictObject({
    ...claimPart,
    holder: z.literal("mcp_connection"),
    /** The use: the MCP server (by URL) this connection is for. Admission matches it to the pin. */
    mcpServerUrl: z.string().min(1).max(2048),
  }),
  z.strictObject({
    ...claimPart,
    holder: z.literal("a2a_delegate"),
    /** The use: the remote A2A agent (by its agent card URL) the delegate connects to. */
    agentCardUrl: z.string().min(1).max(2048),
  }),
] as const;

export const credentialOpenRequestSchema = z.discriminatedUnion("holder", OPEN_REQUEST_MEMBERS);

/**
 * The answer. `bearer.token` is the material as base64 (JSON cannot carry bytes); the worker turns
 * it back into a Buffer it zeroes after use. `claim_lost`: the claim named is not live (another
 * owner or epoch, lease lapsed, run cancelled or settled, or not a claim on that session): nothing
 * was opened or audited, and the worker treats the run as lost.
 */
export const credentialOpenResponseSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("none") }),
  z.strictObject({ kind: z.literal("bearer"), token: z.base64().min(1), credentialId: id, revision: count }),
  z.strictObject({ kind: z.literal("refused"), credentialId: id, revision: count, reason: z.string() }),
  z.strictObject({ kind: z.literal("claim_lost"), reason: z.string() }),
]);

export type CredentialOpenWireRequest = z.infer<typeof credentialOpenRequestSchema>;
export type CredentialOpenWireResponse = z.infer<typeof credentialOpenResponseSchema>;

// Compile-time proof that the wire carries exactly what the port exchanges, field for field and
// holder for holder: extending the port without this wire (or the other way round) fails `tsc`.
type Assert<T extends true> = T;
type Keys<T> = T extends unknown ? keyof T : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type CredentialWireMatchesPorts = Assert<
  Same<CredentialOpenWireRequest, CredentialOpenRequest> extends true
    ? Same<Keys<CredentialOpenWireRequest>, Keys<CredentialOpenRequest>>
    : false
>;
export type CredentialHoldersMatchPorts = Assert<
  Same<CredentialOpenWireRequest["holder"], CredentialHolderKind>
>;
/** Every opening but `bearer` crosses as is; `bearer` carries base64 instead of a Buffer. */
export type CredentialOpeningsMatchPorts = Assert<
  Same<
    Exclude<CredentialOpenWireResponse, { kind: "claim_lost" | "bearer" }>,
    Exclude<CredentialOpening, { kind: "bearer" }>
  >
>;
