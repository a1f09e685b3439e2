/**
 * The wire of the remote worker's `environment_variable` routes, the egress-proxy counterpart of
 * `credentialWire.ts` (same claim part, same strictness, same compile-time checks):
 *
 * - `POST /v1/awaken/worker/credentials/secret-variables`: the session's pinned variables, which
 *   the worker's sandbox is set up from (placeholders, hosts, injection). Secret-free: ids, names,
 *   networking and injection only; a strict object per variable, so nothing else can ride along.
 * - `POST /v1/awaken/worker/credentials/open-secret`: one pinned secret for the `egress_proxy`
 *   holder, which substitutes it into a request the sandbox makes, or for the `mcp_process`
 *   (`acp_harness`) holder, a stdio MCP server (an ACP harness) the sandbox starts with it in its
 *   environment.
 *
 * Both name the claim the worker holds; the coordinator checks it is live (and a claim on that
 * session) before anything else, and answers `claim_lost` otherwise, having read, opened and
 * audited nothing. Routes of their own rather than members of `/credentials/open`: each answer
 * type then holds exactly what its port returns (an MCP open can never come back as a secret).
 */
import { z } from "zod";
import type {
  PinnedSecretVariable,
  SecretHolderKind,
  SecretOpening,
  SecretOpenRequest,
  SecretVariablesRequest,
} from "../coordinator/ports.js";
import { claimPart } from "./credentialWire.js";

const id = z.string().min(1).max(200);
const count = z.number().int().nonnegative();
/** A variable name (credentialResolution.ts accepts far shorter ones; this only bounds the wire). */
const secretName = z.string().min(1).max(256);
const host = z.string().min(1).max(2048);

const claimLost = z.strictObject({ kind: z.literal("claim_lost"), reason: z.string() });

export const secretVariablesRequestSchema = z.strictObject(claimPart);

const pinnedSecretVariableSchema = z.strictObject({
  credentialId: id,
  vaultId: id,
  revision: count,
  secretName,
  networking: z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("unrestricted") }),
    z.strictObject({ type: z.literal("limited"), allowed_hosts: z.array(host).max(1_000) }),
  ]),
  injection: z.strictObject({ header: z.boolean(), body: z.boolean() }),
});

export const secretVariablesResponseSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("variables"), variables: z.array(pinnedSecretVariableSchema).max(1_000) }),
  claimLost,
]);

/**
 * One member per holder kind, as for `/credentials/open`: the egress proxy, a stdio MCP process,
 * an ACP Brain's harness process.
 */
const OPEN_SECRET_REQUEST_MEMBERS = [
  z.strictObject({
    ...claimPart,
    holder: z.literal("egress_proxy"),
    /** The use: the pinned variable, by name (never a credential id). */
    secretName,
  }),
  z.strictObject({ ...claimPart, holder: z.literal("mcp_process"), secretName }),
  z.strictObject({ ...claimPart, holder: z.literal("acp_harness"), secretName }),
] as const;

export const secretOpenRequestSchema = z.discriminatedUnion("holder", OPEN_SECRET_REQUEST_MEMBERS);

/** `secret.value` is the material as base64; the worker turns it back into a Buffer it zeroes. */
export const secretOpenResponseSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("none") }),
  z.strictObject({ kind: z.literal("secret"), value: z.base64().min(1), credentialId: id, revision: count }),
  z.strictObject({ kind: z.literal("refused"), credentialId: id, revision: count, reason: z.string() }),
  claimLost,
]);

export type SecretVariablesWireRequest = z.infer<typeof secretVariablesRequestSchema>;
export type SecretVariablesWireResponse = z.infer<typeof secretVariablesResponseSchema>;
export type SecretOpenWireRequest = z.infer<typeof secretOpenRequestSchema>;
export type SecretOpenWireResponse = z.infer<typeof secretOpenResponseSchema>;

// Compile-time proof that the wire carries exactly what the ports exchange, field for field:
// a field added to a port type (a pinned variable's above all: it must stay secret-free) fails
// `tsc` until this wire is extended on purpose.
type Assert<T extends true> = T;
type Keys<T> = T extends unknown ? keyof T : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Exactly<A, B> = Same<A, B> extends true ? Same<Keys<A>, Keys<B>> : false;
type WireVariable = Extract<SecretVariablesWireResponse, { kind: "variables" }>["variables"][number];

export type SecretVariablesRequestMatchesPorts = Assert<
  Exactly<SecretVariablesWireRequest, SecretVariablesRequest>
>;
export type SecretVariableMatchesPorts = Assert<Exactly<WireVariable, PinnedSecretVariable>>;
export type SecretOpenRequestMatchesPorts = Assert<Exactly<SecretOpenWireRequest, SecretOpenRequest>>;
export type SecretHoldersMatchPorts = Assert<Same<SecretOpenWireRequest["holder"], SecretHolderKind>>;
/** Every opening but `secret` crosses as is; `secret` carries base64 instead of a Buffer. */
export type SecretOpeningsMatchPorts = Assert<
  Same<
    Exclude<SecretOpenWireResponse, { kind: "claim_lost" | "secret" }>,
    Exclude<SecretOpening, { kind: "secret" }>
  >
>;
