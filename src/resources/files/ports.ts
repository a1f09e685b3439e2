/** The File family's store port (its SQL implementation lives in stores/sql). */
export interface FileStore {
  readonly family: "files";
}
