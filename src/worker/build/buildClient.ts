import { BUILD_WORKER_ROUTE_PREFIX, type BuildJob, buildJobSchema } from "../buildWorkerWire.js";

/** A lease a build worker holds on one build. */
export interface HeldLease {
  buildId: string;
  owner: string;
  epoch: number;
}

export type SettleOutcome =
  | { kind: "ready"; digest: string; imageReference: string; logTail: string }
  | { kind: "failed"; error: string; logTail: string };

/** A refusal from the coordinator's fence: the lease is gone, stop building. */
export class BuildLeaseLost extends Error {}

/** The build worker's HTTP client of the coordinator's build-worker routes (its token, no database). */
export class BuildClient {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async claim(owner: string): Promise<BuildJob | null> {
    const body = (await this.call("/claim", { owner })) as { job: unknown };
    return body.job === null ? null : buildJobSchema.parse(body.job);
  }

  async renew(lease: HeldLease): Promise<void> {
    await this.call("/renew", lease);
  }

  async release(lease: HeldLease): Promise<void> {
    await this.call("/release", lease);
  }

  async settle(lease: HeldLease, outcome: SettleOutcome): Promise<void> {
    await this.call("/settle", { ...lease, outcome });
  }

  private async call(path: string, body: unknown): Promise<unknown> {
    const response = await fetch(`${this.url}${BUILD_WORKER_ROUTE_PREFIX}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status === 409) throw new BuildLeaseLost(messageOf(text));
    if (response.status === 401)
      throw new Error(
        "the coordinator rejected the build worker token (401): AWAKEN_BUILD_WORKER_TOKEN must match",
      );
    if (response.status === 404)
      throw new Error(
        "the coordinator serves no build-worker routes (404): start it with AWAKEN_BUILD_WORKER_TOKEN set",
      );
    if (!response.ok) throw new Error(`build-worker ${path} failed (${response.status}): ${messageOf(text)}`);
    return JSON.parse(text);
  }
}

function messageOf(text: string): string {
  try {
    return (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
