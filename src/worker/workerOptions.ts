export interface WorkerOptions {
  /** Worker identity; an incarnation suffix is added per process start. */
  id: string;
  /** Runs executed at once by this worker. */
  concurrency: number;
  /** How long a claim lives without renewal. Renewed every third of it. */
  leaseMs: number;
  /** Poll interval when no wake signal arrives; polling alone must finish every run. */
  pollMs: number;
  /** On shutdown, how long in-flight runs may take to settle before their claims are released. */
  drainMs: number;
}

/** `--drain-ms` default: long enough for most model steps to commit, short of orchestrators' grace. */
export const DEFAULT_DRAIN_MS = 3_000;

export const DEFAULT_WORKER_OPTIONS: Omit<WorkerOptions, "id"> = {
  concurrency: 4,
  leaseMs: 15_000,
  pollMs: 500,
  drainMs: DEFAULT_DRAIN_MS,
};
