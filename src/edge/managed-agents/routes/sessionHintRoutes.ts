import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { scopeGrants, UNSCOPED } from "../../../control/callerScope.js";
import { AwakenError } from "../../../kernel/errors.js";
import { principalKey, principalOf } from "../../http/auth.js";
import { guardedListener, onReplyClosed } from "../../http/closeListener.js";
import { credentialLifetime } from "../../http/credentialLifetime.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { PrincipalSlots } from "../../http/principalShares.js";
import { SseWriter } from "../../http/sseWriter.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { sessionHintsQuerySchema } from "../schemas/workers.js";

/**
 * Hint streams open at once per workspace on this replica. Each costs a lookup per batch of
 * commits; a Console tab holds one, so this is far above use and bounds what a key can make us do.
 */
export const MAX_HINT_STREAMS_PER_WORKSPACE = 64;

/**
 * `GET /v1/awaken/sessions/stream` (runtime keys, an Awaken extension): an SSE stream that says
 * when the workspace's sessions may have changed (one was created, archived or deleted; a run
 * committed; an ask appeared or a decision was made on any edge or replica). It carries no data: a
 * client reads the sessions and their events through the public API when told. The first hint goes
 * out as the stream opens, after it is listening, so a read made then misses nothing. Frames:
 * `event: sessions.changed`, and `ping` keep-alives. A key with an agent allow-list, or an access
 * token (which needs `read`), hears only of the sessions it reaches.
 *
 * `GET /v1/awaken/approvals/stream` is the same feed under its first name (`event: approvals.changed`):
 * pending approvals change only when a session does.
 *
 * One credential holds at most its share of the workspace's streams (`principalShares.ts`), and a
 * stream ends when its credential expires or is revoked, which frees its slot.
 */
const PING_FRAME = `event: ping\ndata: ${JSON.stringify({ type: "ping" })}\n\n`;

export function sessionHintRoutes(app: FastifyInstance, deps: EdgeServices): void {
  const slots = new PrincipalSlots(MAX_HINT_STREAMS_PER_WORKSPACE);
  const stream = (type: string) => {
    const frame = `event: ${type}\ndata: ${JSON.stringify({ type })}\n\n`;
    return async (request: FastifyRequest<{ Querystring: RawQuery }>, reply: FastifyReply) => {
      parseQuery(sessionHintsQuerySchema, request.query);
      const principal = principalOf(request);
      const { workspaceId } = principal;
      // A key limited to some agents, or a token confined to one session or a namespace, hears of those alone.
      const scope = principal.kind === "api_key" ? principal.scope : UNSCOPED;
      if (!scopeGrants(scope, "read"))
        throw new AwakenError(
          "permission_denied",
          'This access token does not grant "read", which the hint streams need; mint one that does.',
        );
      const release = slots.take(workspaceId, principalKey(principal));
      if (release === "principal_full")
        throw new AwakenError(
          "unavailable",
          `this credential already holds ${slots.perPrincipal} hint streams on this server, its share of the workspace's ${MAX_HINT_STREAMS_PER_WORKSPACE}; close one or retry later`,
          { retryable: true },
        );
      if (release === "workspace_full")
        throw new AwakenError(
          "unavailable",
          `this workspace already holds ${MAX_HINT_STREAMS_PER_WORKSPACE} hint streams on this server; close one or retry later`,
          { retryable: true },
        );
      reply.hijack();
      const raw = reply.raw;
      const gone = new AbortController();
      onReplyClosed(reply, "hint stream", () => gone.abort());
      credentialLifetime(deps, request, gone.signal).addEventListener("abort", () => gone.abort());
      // A slow reader gets no backlog: hints are idempotent, the next one says the same.
      let writer: SseWriter | undefined;
      deps.sessionChanges.watch(
        {
          workspaceId,
          agentIds: scope.agentIds,
          sessionId: scope.sessionId,
          namePrefix: scope.sessionNamespace,
        },
        () => writer?.offer(frame),
        gone.signal,
      );
      raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        "x-accel-buffering": "no",
        "request-id": request.id,
      });
      writer = new SseWriter(reply, {
        hook: "hint stream",
        heartbeat: { frame: PING_FRAME, everyMs: deps.stream.pingMs },
        clock: deps.clock,
        signal: gone.signal,
      });
      writer.offer(frame);
      const opened = writer;
      gone.signal.addEventListener(
        "abort",
        guardedListener("hint stream", request.log, () => {
          release();
          opened.end();
        }),
      );
    };
  };
  app.get<{ Querystring: RawQuery }>("/v1/awaken/sessions/stream", stream("sessions.changed"));
  app.get<{ Querystring: RawQuery }>("/v1/awaken/approvals/stream", stream("approvals.changed"));
}
