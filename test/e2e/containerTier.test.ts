import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSandboxImage,
  podmanMissing,
  SANDBOX_IMAGE_MARKER,
  type SandboxImage,
} from "../support/sandboxImage.js";
import { isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

/**
 * A session whose environment says `tier: "container"` runs its bash tool in a podman container of
 * the operator-allowed image (a test image made here), over a workspace that persists across tool
 * calls, behind the same egress policy as the bwrap tier. An image the operator did not allow is
 * refused at environment create with a 400.
 */

const KEY = "sk-awaken-container-test";
let image: SandboxImage;
let dir: string;
let server: ServerProcess;
let client: Anthropic;

beforeAll(async () => {
  const missing = podmanMissing();
  if (missing) throw new Error(`the container tier test needs podman: ${missing}`);
  image = buildSandboxImage();
  dir = mkdtempSync(join(tmpdir(), "awaken-container-e2e-"));
  server = await startServerProcess({
    dataDir: join(dir, "data"),
    apiKey: KEY,
    env: { AWAKEN_ALLOWED_CONTAINER_IMAGES: image.reference, AWAKEN_SANDBOX_MEMORY: "256m" },
  });
  client = server.client;
}, 120_000);

afterAll(async () => {
  if (server) {
    server.child.kill("SIGTERM");
    await server.exited;
  }
  image?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function bash(
  sessionId: string,
  command: string,
  turns: number,
): Promise<{ text: string; isError: boolean }> {
  await client.beta.sessions.events.send(sessionId, {
    events: [userMessage(`call bash ${JSON.stringify({ command })}`)],
  });
  const events = await waitForHistory(
    client,
    sessionId,
    (h) => h.filter(isEndTurnIdle).length >= turns,
    60_000,
  );
  const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
  return { text: textOf(result), isError: result?.is_error === true };
}

describe('sandbox tier "container"', () => {
  it("refuses an image the operator did not allow, and a malformed one, with a 400", async () => {
    for (const reference of ["localhost/not-allowed:1", "--privileged"]) {
      const error = (await client.beta.environments
        .create({
          name: "c",
          config: { type: "cloud", sandbox: { tier: "container", image: reference } } as never,
        })
        .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
      expect(error.status, reference).toBe(400);
    }
    const noImage = (await client.beta.environments
      .create({ name: "c", config: { type: "cloud", sandbox: { tier: "container" } } as never })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(noImage.status).toBe(400);
  });

  it("runs the bash tool in the image, keeps the workspace across calls, and holds the egress policy", async () => {
    const environment = await client.beta.environments.create({
      name: "contained",
      config: {
        type: "cloud",
        networking: { type: "limited", allowed_hosts: ["allowed.example"] },
        sandbox: { tier: "container", image: image.reference },
      } as never,
    });
    expect(environment.config).toMatchObject({ sandbox: { tier: "container", image: image.reference } });
    const agent = await client.beta.agents.create({
      name: "hands",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });

    const release = await bash(
      session.id,
      "cat /etc/os-release; cat /" + SANDBOX_IMAGE_MARKER + "; id -u",
      1,
    );
    expect(release.isError).toBe(false);
    expect(release.text).toContain(`ID=${SANDBOX_IMAGE_MARKER}`);
    expect(release.text).toContain("baked into the image");
    expect(release.text).not.toMatch(/^0$/m);

    await bash(session.id, "echo kept > note.txt", 2);
    const read = await bash(session.id, "pwd; cat note.txt", 3);
    expect(read.text).toContain("/workspace");
    expect(read.text).toContain("kept");

    const refused = await bash(
      session.id,
      "exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT refused.example:443 HTTP/1.1\\r\\nHost: refused.example:443\\r\\n\\r\\n' >&3 && head -n 1 <&3",
      4,
    );
    expect(refused.text).toMatch(/HTTP\/1\.1 403/);
  });
});
