import { useState } from "react";
import { problemOf } from "../api/client.js";

/**
 * Cursor paging as the wire pages: a stack of the cursors of the pages before this one, the last
 * being the current page's (undefined = the first page).
 */
export function useCursorPages() {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  return {
    cursor: cursors.at(-1),
    hasPrevious: cursors.length > 1,
    previous: () => setCursors((stack) => (stack.length > 1 ? stack.slice(0, -1) : stack)),
    next: (cursor: string) => setCursors((stack) => [...stack, cursor]),
    reset: () => setCursors([undefined]),
  };
}

export function Pager({
  pages,
  nextPage,
}: {
  pages: ReturnType<typeof useCursorPages>;
  nextPage: string | null | undefined;
}) {
  if (!pages.hasPrevious && !nextPage) return null;
  return (
    <div className="pager">
      <button type="button" disabled={!pages.hasPrevious} onClick={pages.previous}>
        Previous page
      </button>
      <button type="button" disabled={!nextPage} onClick={() => nextPage && pages.next(nextPage)}>
        Next page
      </button>
    </div>
  );
}

/** A failed read or write, worded by the server. */
export function Problem({ error, prefix }: { error: unknown; prefix?: string }) {
  if (!error) return null;
  return (
    <p role="alert" className="problem">
      {prefix}
      {problemOf(error)}
    </p>
  );
}
