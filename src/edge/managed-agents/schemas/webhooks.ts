/**
 * Webhook endpoint request schemas (param types from `@anthropic-ai/sdk`
 * resources/beta/organization/webhooks) and the Awaken deliveries extension. Event types are
 * checked against every type the SDK's webhook event union names; the URL is checked by the
 * outbound address policy in the service.
 */
import { z } from "zod";
import { WEBHOOK_EVENT_TYPES } from "../webhookEvents.js";
import { boundedString, PAGE_LIMIT, queryInt } from "./common.js";

export const WEBHOOK_LIMITS = { name: 255, description: 1024, url: 2048 } as const;

const eventType = z.enum(WEBHOOK_EVENT_TYPES, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a webhook event type`,
});
const name = boundedString(0, WEBHOOK_LIMITS.name);
const description = boundedString(0, WEBHOOK_LIMITS.description);
const url = boundedString(1, WEBHOOK_LIMITS.url);

export const createWebhookBodySchema = z.strictObject({
  url,
  enabled_events: z.array(eventType).min(1, { error: "must list at least one event type" }).max(64),
  name: name.optional(),
  description: description.optional(),
});

export const updateWebhookBodySchema = z.strictObject({
  url: url.optional(),
  enabled_events: z.array(eventType).max(64).optional(),
  name: name.optional(),
  description: description.optional(),
  state: z.enum(["enabled", "disabled"]).optional(),
});

/** The SDK's `Page` params (`before_id` pages backwards, `after_id` forwards) and `order`. */
export const listWebhooksQuerySchema = z.strictObject({
  limit: queryInt(PAGE_LIMIT.min, PAGE_LIMIT.max).default(PAGE_LIMIT.default),
  after_id: z.string().min(1).max(256).optional(),
  before_id: z.string().min(1).max(256).optional(),
  order: z.enum(["asc", "desc"]).default("desc"),
});

export const listDeliveriesQuerySchema = z.strictObject({
  limit: queryInt(1, 100).default(20),
  /** A page ends before this delivery id (ids sort by creation). */
  before_id: z.string().min(1).max(256).optional(),
  state: z.enum(["pending", "delivered", "abandoned"]).optional(),
});
