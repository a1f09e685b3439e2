import type { FastifyInstance } from "fastify";
import { principalKey, principalOf, type RouteAccess } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { consentsDto, erasureDto } from "../dataSubjectDto.js";
import { parseBody } from "../schemas/common.js";
import { eraseBodySchema, setConsentBodySchema } from "../schemas/dataSubjects.js";

type SubjectParams = { Params: { subject_id: string } };
type ConsentParams = { Params: { subject_id: string; purpose: string } };

const ADMIN: RouteAccess = { accepts: ["api_key"] };

/**
 * Data subjects, Awaken extensions for operators (admin keys, see `routeRoles.ts`), always within
 * the caller's workspace:
 * - `POST /v1/awaken/data_subjects/{subject_id}/erasure` → erases the subject's captured content
 *   (tombstones in place of message text, tool inputs and results), deletes the sessions' sandbox
 *   workspaces this server's host holds, vacuums the rewritten tables (PostgreSQL), and answers
 *   what it removed and what it could not reach; 409 while one of the subject's sessions has a
 *   run executing; a repeat removes nothing from the database (no memory write-backs or uploads
 *   exist to erase);
 * - `GET /v1/awaken/data_subjects/{subject_id}/erasures` → the erasures done, newest first (audit);
 * - `GET …/consents`, `PUT …/consents/{purpose}` `{granted}` → the subject's consent per purpose.
 */
export function dataSubjectRoutes(app: FastifyInstance, deps: EdgeServices): void {
  consentRoutes(app, deps);
  app.post<SubjectParams>(
    "/v1/awaken/data_subjects/:subject_id/erasure",
    { config: { access: ADMIN } },
    async (request) => {
      if (request.body !== undefined && request.body !== null) parseBody(eraseBodySchema, request.body);
      const principal = principalOf(request);
      const receipt = await deps.dataSubjects.erasure.erase(
        principal.workspaceId,
        request.params.subject_id,
        principalKey(principal),
      );
      request.log.info(
        {
          erasure: receipt.id,
          removed: receipt.removed,
          counts: receipt.counts,
          workspaces: receipt.workspaces,
          vacuum: receipt.vacuum,
        },
        "data subject erasure",
      );
      return erasureDto(receipt);
    },
  );

  app.get<SubjectParams>(
    "/v1/awaken/data_subjects/:subject_id/erasures",
    { config: { access: ADMIN } },
    async (request) => {
      const { subject_id } = request.params;
      const receipts = await deps.dataSubjects.erasure.listErasures(
        principalOf(request).workspaceId,
        subject_id,
      );
      return { data: receipts.map(erasureDto) };
    },
  );
}

/** A data subject's consent per purpose: Control's, served by the coordinator and by Control's door. */
export function consentRoutes(
  app: FastifyInstance,
  deps: { dataSubjects: Pick<EdgeServices["dataSubjects"], "consents"> },
): void {
  app.get<SubjectParams>(
    "/v1/awaken/data_subjects/:subject_id/consents",
    { config: { access: ADMIN } },
    async (request) => {
      const { subject_id } = request.params;
      const records = await deps.dataSubjects.consents.list(principalOf(request).workspaceId, subject_id);
      return consentsDto(subject_id, records);
    },
  );

  app.put<ConsentParams>(
    "/v1/awaken/data_subjects/:subject_id/consents/:purpose",
    { config: { access: ADMIN } },
    async (request) => {
      const { granted } = parseBody(setConsentBodySchema, request.body);
      const principal = principalOf(request);
      const { subject_id, purpose } = request.params;
      const records = await deps.dataSubjects.consents.set(
        principal.workspaceId,
        subject_id,
        purpose,
        granted,
        principalKey(principal),
      );
      return consentsDto(subject_id, records);
    },
  );
}
