import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { problemOf } from "../api/client.js";

/** A read-only table of one kind of resource, read through the public API. */
export function ResourceList<T extends { id: string }>(props: {
  title: string;
  queryKey: string;
  load(signal: AbortSignal): Promise<T[]>;
  columns: ReadonlyArray<{ label: string; cell(item: T): ReactNode }>;
}) {
  const list = useQuery({ queryKey: [props.queryKey, "list"], queryFn: ({ signal }) => props.load(signal) });
  const titleId = `${props.queryKey}-title`;
  return (
    <section aria-labelledby={titleId}>
      <h1 id={titleId}>{props.title}</h1>
      {list.isError && (
        <p role="alert" className="problem">
          {problemOf(list.error)}
        </p>
      )}
      {list.data?.length === 0 && <p>None yet.</p>}
      {list.data && list.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                {props.columns.map((column) => (
                  <th key={column.label} scope="col">
                    {column.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data.map((item) => (
                <tr key={item.id}>
                  <td className="mono">{item.id}</td>
                  {props.columns.map((column) => (
                    <td key={column.label}>{column.cell(item)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
