import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const PAGE_SIZE = 50;

/** The workspace's memory stores (archived ones on request). */
export function MemoryStoresPage() {
  const { client } = useApi();
  const pages = useCursorPages();
  const [includeArchived, setIncludeArchived] = useState(false);
  const stores = useQuery({
    queryKey: ["memory-stores", includeArchived, pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.memoryStores.list(
        {
          limit: PAGE_SIZE,
          ...(includeArchived ? { include_archived: true } : {}),
          ...(pages.cursor ? { page: pages.cursor } : {}),
        },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  return (
    <section aria-labelledby="memory-stores-title">
      <h1 id="memory-stores-title">Memory stores</h1>
      <p className="hint">
        A session mounts a store under /mnt/memory/; each change to a memory is a version.
      </p>
      <div className="toolbar">
        <label className="inline">
          <input
            type="checkbox"
            checked={includeArchived}
            onChange={(event) => {
              setIncludeArchived(event.target.checked);
              pages.reset();
            }}
          />
          Include archived
        </label>
      </div>
      <Problem error={stores.error} />
      {stores.data?.data.length === 0 && <p>None yet.</p>}
      {stores.data && stores.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="memory-stores">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Updated</th>
                <th scope="col">Archived</th>
              </tr>
            </thead>
            <tbody>
              {stores.data.data.map((store) => (
                <tr key={store.id} data-testid="memory-store-row" data-memory-store-id={store.id}>
                  <td>
                    <Link to={`memory-stores/${encodeURIComponent(store.id)}`}>{store.name}</Link>
                    <div className="muted mono">{store.id}</div>
                  </td>
                  <td>{store.description}</td>
                  <td>{formatTime(store.updated_at)}</td>
                  <td>{store.archived_at ? formatTime(store.archived_at) : "no"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={stores.data?.next} />
    </section>
  );
}
