/** What `GET /readyz` reports: each check's state, and a short reason for the one that failed. */
export interface ReadinessReport {
  ready: boolean;
  /** Set while the process drains on SIGTERM: a load balancer takes it out before it exits. */
  draining: boolean;
  checks: {
    database: "ok" | "unreachable";
    migrations: "current" | "behind" | "ahead" | "unknown";
    workers: "polling" | "none" | "draining" | "stopped";
    /** Only on a split Coordinator: whether some Control replica answers ready. */
    control?: "ok" | "unreachable";
    /**
     * Only where remote workers may connect: how many were heard from in the last minute. Never a
     * reason to be unready (a coordinator without workers still takes sends; runs wait).
     */
    remote_workers?: number;
  };
  /** Names the failing check; never a secret, id, URL or driver message. */
  reason?: string;
}

/** Supplied by the composition (it alone may reach the stores); cheap enough to call per probe. */
export type ReadinessProbe = () => Promise<ReadinessReport>;
