/** The Memory family's store port (its SQL implementation lives in stores/sql). */
export interface MemoryStore {
  readonly family: "memory";
}
