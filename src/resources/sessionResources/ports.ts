/** The SessionResource family's store port (its SQL implementation lives in stores/sql). */
export interface SessionResourceStore {
  readonly family: "sessionResources";
}
