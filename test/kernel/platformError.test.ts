import { describe, expect, it } from "vitest";
import { TailOverflowError } from "../../src/coordinator/sessionTail.js";
import { AwakenError, PlatformError } from "../../src/kernel/errors.js";
import { OutboundRefused } from "../../src/kernel/outboundConnector.js";
import { ProviderError } from "../../src/providers/ports.js";
import { SecretOpenError } from "../../src/secrets/errors.js";
import { CoordinatorRejected } from "../../src/worker/httpTransport.js";

describe("PlatformError", () => {
  it("carries a code and a retryable flag, deterministic unless said otherwise", () => {
    const cause = new Error("socket closed");
    const error = new PlatformError("thing_failed", "the thing failed", { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      code: "thing_failed",
      retryable: false,
      message: "the thing failed",
      cause,
    });
    expect(new PlatformError("later", "try again", { retryable: true }).retryable).toBe(true);
  });

  it("names each error by its own class", () => {
    class Example extends PlatformError {}
    expect(new Example("x", "y").name).toBe("Example");
    expect(String(new CoordinatorRejected(409, "stale"))).toBe("CoordinatorRejected: stale");
  });

  it("AwakenError keeps its code table and its retryable default from the category", () => {
    const notFound = new AwakenError("not_found", "nope");
    expect(notFound).toBeInstanceOf(PlatformError);
    expect(notFound).toMatchObject({
      name: "AwakenError",
      code: "not_found",
      category: "not_found",
      retryable: false,
    });
    expect(new AwakenError("unavailable", "down").retryable).toBe(true);
    expect(new AwakenError("internal", "bug").retryable).toBe(true);
    expect(new AwakenError("unavailable", "down", { retryable: false }).retryable).toBe(false);
    expect(new AwakenError("invalid_request", "bad", { details: { field: "x" } }).details).toEqual({
      field: "x",
    });
  });

  it("the platform's own errors extend it with their codes and retryability", () => {
    const transient = new ProviderError("overloaded", "busy", { transient: true, status: 529 });
    expect(transient).toBeInstanceOf(PlatformError);
    expect(transient).toMatchObject({
      code: "overloaded",
      kind: "overloaded",
      retryable: true,
      transient: true,
    });
    expect(new ProviderError("request_failed", "bad", { transient: false }).retryable).toBe(false);
    expect(new TailOverflowError(10)).toMatchObject({ code: "tail_overflow", retryable: true });
    expect(new CoordinatorRejected(409, "stale")).toMatchObject({
      code: "coordinator_rejected",
      status: 409,
      retryable: false,
    });
    expect(new OutboundRefused("db.internal", "10.0.0.5")).toMatchObject({
      code: "outbound_refused",
      retryable: false,
    });
    const identity = { workspaceId: "w", credentialId: "c", revision: 1 };
    expect(new SecretOpenError("not_authentic", identity as never, "tampered")).toMatchObject({
      code: "not_authentic",
      reason: "not_authentic",
    });
  });

  it("only AwakenError is an AwakenError: edges keep answering the others as internal", () => {
    expect(new ProviderError("aborted", "stop", { transient: false })).not.toBeInstanceOf(AwakenError);
  });
});
