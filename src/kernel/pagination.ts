export interface ListQuery {
  limit: number;
  /** Opaque position from a previous page. */
  cursor: string | null;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
  prevCursor?: string | null;
}
