/**
 * The root Dockerfile builds and runs with podman on a machine without registry access: its base is
 * made from this machine's Node 24, the app is this checkout's build (APP_SOURCE=prebuilt), and the
 * running image answers /healthz as a non-root user that keeps its data in the /data volume.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importNodeBaseImage } from "./support/nodeBaseImage.js";
import { attempt, must, podmanUnavailable, runLimits } from "./support/podman.js";
import { CHECKOUT, prebuiltContext } from "./support/prebuiltContext.js";

const BASE = "localhost/awaken-node-base:24";
const suffix = randomBytes(4).toString("hex");
const IMAGE = `localhost/awaken-test-${suffix}:1`;
const CONTAINER = `awaken-test-${suffix}`;
const VOLUME = `awaken-test-data-${suffix}`;
const LABEL = `awaken.test-run=${suffix}`;

let context: string | undefined;

describe("the container image", () => {
  beforeAll(() => {
    const missing = podmanUnavailable();
    if (missing) throw new Error(`the container image test needs podman on this machine: ${missing}`);
  }, 60_000);

  afterAll(() => {
    attempt("podman", ["rm", "--force", "--time", "0", CONTAINER]);
    attempt("podman", ["volume", "rm", "--force", VOLUME]);
    // The image, the base, and the layers buildah cached on the way: all carry the base's label.
    const built = attempt("podman", ["images", "--all", "--quiet", "--filter", `label=${LABEL}`]);
    const ids = [...new Set(built.stdout.split("\n").filter(Boolean))];
    attempt("podman", ["rmi", "--force", "--ignore", IMAGE, BASE, ...ids]);
    if (context) rmSync(context, { recursive: true, force: true });
  }, 120_000);

  it("builds from the root Dockerfile on a local base image", () => {
    importNodeBaseImage(BASE, LABEL);
    context = prebuiltContext();
    must("buildah", [
      "bud",
      ...runLimits,
      // Docker format keeps the HEALTHCHECK (OCI image config has no field for it).
      "--format",
      "docker",
      "--pull=never",
      // Layers mode: without it, this buildah leaves the stage named by APP_SOURCE behind.
      "--layers",
      "--force-rm",
      "--build-arg",
      `NODE_IMAGE=${BASE}`,
      "--build-arg",
      "APP_SOURCE=prebuilt",
      "-t",
      IMAGE,
      "-f",
      join(CHECKOUT, "Dockerfile"),
      context,
    ]);
    const config = JSON.parse(must("podman", ["image", "inspect", IMAGE]))[0];
    expect(config.Config.User).toBe("node");
    expect(Object.keys(config.Config.ExposedPorts)).toEqual(["4600/tcp"]);
    expect(Object.keys(config.Config.Volumes)).toEqual(["/data"]);
    expect((config.Healthcheck ?? config.Config.Healthcheck).Test.join(" ")).toContain("/healthz");
  }, 600_000);

  it("runs as a non-root user, answers /healthz and keeps its data in /data", async () => {
    must("podman", [
      "run",
      "--pull=never",
      "--detach",
      "--name",
      CONTAINER,
      ...runLimits,
      "--publish",
      "127.0.0.1::4600",
      "--volume",
      `${VOLUME}:/data`,
      IMAGE,
    ]);
    const port = must("podman", ["port", CONTAINER, "4600/tcp"]).trim().split(":").at(-1);
    const url = `http://127.0.0.1:${port}/healthz`;
    let status = 0;
    for (let i = 0; i < 120 && status !== 200; i += 1) {
      status = await fetch(url).then(
        (response) => response.status,
        () => 0,
      );
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (status !== 200) {
      const logs = attempt("podman", ["logs", CONTAINER]);
      throw new Error(`/healthz never answered 200 (last ${status}):\n${logs.stdout}${logs.stderr}`);
    }
    // The API's OpenAPI document is served without a key.
    const openApi = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`);
    expect(openApi.status).toBe(200);
    expect(((await openApi.json()) as { openapi: string }).openapi).toBe("3.1.0");
    // The image's own HEALTHCHECK passes (it runs node inside: the image has no shell or curl).
    must("podman", ["healthcheck", "run", CONTAINER]);
    const uid = must("podman", ["exec", CONTAINER, "node", "-p", "process.getuid()"]).trim();
    expect(Number(uid)).not.toBe(0);
    const dataFiles = must("podman", [
      "exec",
      CONTAINER,
      "node",
      "-p",
      "require('fs').readdirSync('/data').join(' ')",
    ]);
    expect(dataFiles).toContain("api-key");
    // The SQLite file: better-sqlite3's binary loaded under the image's Node.
    expect(dataFiles).toContain("awaken.db");
    // The volume, not the container's own layer, holds it.
    const mountpoint = must("podman", ["volume", "inspect", VOLUME, "--format", "{{.Mountpoint}}"]).trim();
    expect(readdirSync(mountpoint)).toContain("api-key");
    expect(statSync(join(mountpoint, "api-key")).uid).toBe(Number(uid));
  }, 120_000);
});
