/**
 * Input this edge cannot honour. It becomes a RUN_ERROR after RUN_STARTED (the client's stream is
 * already open) and nothing of the request is written.
 */
export class RunRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "RunRefusal";
  }
}
