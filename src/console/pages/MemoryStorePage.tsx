import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import type { MemoryVersion } from "../api/wire.js";
import { actorLabel, nameBelow, parentPrefix, prefixCrumbs } from "../projection/memoryTree.js";
import { Link } from "../router.js";
import { formatBytes } from "./formatBytes.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const TREE_PAGE_SIZE = 100;
/** The wire's cap on a page of versions with their content (`view: "full"`). */
const VERSIONS_PAGE_SIZE = 20;

const storePath = (storeId: string) => `memory-stores/${encodeURIComponent(storeId)}`;

/**
 * One memory store: its memories a level at a time, and (when the path names one) a memory's
 * content and its versions, who wrote each and when, with redaction. Paths and contents were written
 * by clients and agents: shown as text only.
 */
export function MemoryStorePage({ storeId, memoryId }: { storeId: string; memoryId?: string }) {
  const { client } = useApi();
  const store = useQuery({
    queryKey: ["memory-store", storeId],
    queryFn: ({ signal }) => client.beta.memoryStores.retrieve(storeId, {}, { signal }),
  });
  const metadata = Object.entries(store.data?.metadata ?? {});
  return (
    <>
      <p>
        <Link to="memory-stores">← Memory stores</Link>
      </p>
      <section aria-labelledby="memory-store-title">
        <h1 id="memory-store-title">
          {store.data?.name ?? "Memory store"} <span className="mono muted">{storeId}</span>
        </h1>
        <Problem error={store.error} />
        {store.data && (
          <dl>
            <dt>Description</dt>
            <dd>{store.data.description || "—"}</dd>
            <dt>Metadata</dt>
            <dd className="mono">
              {metadata.length > 0 ? metadata.map(([key, value]) => `${key}=${value}`).join(", ") : "none"}
            </dd>
            <dt>Created</dt>
            <dd>{formatTime(store.data.created_at)}</dd>
            <dt>Archived</dt>
            <dd>{store.data.archived_at ? formatTime(store.data.archived_at) : "no"}</dd>
          </dl>
        )}
      </section>
      <MemoryTree storeId={storeId} openMemoryId={memoryId} />
      {memoryId && <MemoryDetail key={memoryId} storeId={storeId} memoryId={memoryId} />}
    </>
  );
}

/** A memory with its content (one read shared by the tree and the detail); none without an id. */
function useMemory(storeId: string, memoryId: string | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: ["memory", storeId, memoryId],
    enabled: memoryId !== undefined,
    queryFn: ({ signal }) =>
      client.beta.memoryStores.memories.retrieve(
        memoryId!,
        { memory_store_id: storeId, view: "full" },
        { signal },
      ),
  });
}

function MemoryTree({ storeId, openMemoryId }: { storeId: string; openMemoryId: string | undefined }) {
  const { client } = useApi();
  // Opened at a memory, the tree starts at that memory's folder; once walked, where the operator went.
  const [walked, setWalked] = useState<string | null>(null);
  const opened = useMemory(storeId, openMemoryId);
  const waiting = walked === null && openMemoryId !== undefined && opened.isPending;
  const prefix = walked ?? (opened.data ? parentPrefix(opened.data.path) : "/");
  const pages = useCursorPages();
  const items = useQuery({
    queryKey: ["memories", storeId, prefix, pages.cursor],
    enabled: !waiting,
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.memoryStores.memories.list(
        storeId,
        {
          depth: 1,
          limit: TREE_PAGE_SIZE,
          // The root is the whole store: the wire lists it with no prefix.
          ...(prefix !== "/" ? { path_prefix: prefix } : {}),
          ...(pages.cursor ? { page: pages.cursor } : {}),
        },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  const open = (next: string) => {
    setWalked(next);
    pages.reset();
  };
  return (
    <section aria-labelledby="memory-tree-title">
      <h2 id="memory-tree-title">Memories</h2>
      <nav aria-label="Memory path" className="crumbs">
        {prefixCrumbs(prefix).map((crumb) => (
          <button
            key={crumb.prefix}
            type="button"
            className="link"
            aria-current={crumb.prefix === prefix ? "location" : undefined}
            onClick={() => open(crumb.prefix)}
          >
            {crumb.label}
          </button>
        ))}
      </nav>
      <Problem error={items.error} />
      {items.data?.data.length === 0 && <p>Nothing here.</p>}
      {items.data && items.data.data.length > 0 && (
        <ul className="plain memory-tree" data-testid="memory-tree">
          {items.data.data.map((item) =>
            item.type === "memory_prefix" ? (
              <li key={`prefix:${item.path}`} data-testid="memory-prefix">
                <button type="button" className="link mono" title={item.path} onClick={() => open(item.path)}>
                  {nameBelow(prefix, item.path)}
                </button>
              </li>
            ) : (
              <li
                key={item.id}
                data-testid="memory-item"
                data-memory-id={item.id}
                aria-current={item.id === openMemoryId ? "true" : undefined}
              >
                <Link to={`${storePath(storeId)}/memories/${encodeURIComponent(item.id)}`} className="mono">
                  {nameBelow(prefix, item.path)}
                </Link>{" "}
                <span className="muted">
                  {formatBytes(item.content_size_bytes)} · {formatTime(item.updated_at)}
                </span>
              </li>
            ),
          )}
        </ul>
      )}
      <Pager pages={pages} nextPage={items.data?.next} />
    </section>
  );
}

function MemoryDetail({ storeId, memoryId }: { storeId: string; memoryId: string }) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const memory = useMemory(storeId, memoryId);
  const versions = useQuery({
    queryKey: ["memory-versions", storeId, memoryId, pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.memoryStores.memoryVersions.list(
        storeId,
        {
          memory_id: memoryId,
          view: "full",
          limit: VERSIONS_PAGE_SIZE,
          ...(pages.cursor ? { page: pages.cursor } : {}),
        },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  const redact = useMutation({
    mutationFn: (version: MemoryVersion) =>
      client.beta.memoryStores.memoryVersions.redact(version.id, { memory_store_id: storeId }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: ["memory-versions", storeId, memoryId] }),
        queryClient.invalidateQueries({ queryKey: ["memory", storeId, memoryId] }),
      ]),
  });
  const onRedact = (version: MemoryVersion) => {
    if (
      window.confirm(
        `Redact version ${version.id}? Its content and path are erased for good; who wrote it and when stay.`,
      )
    )
      redact.mutate(version);
  };
  return (
    <section aria-labelledby="memory-title" data-testid="memory-detail">
      <h2 id="memory-title" className="mono">
        {memory.data?.path ?? memoryId}
      </h2>
      <Problem error={memory.error} />
      {memory.data && (
        <>
          <dl>
            <dt>Id</dt>
            <dd className="mono">{memory.data.id}</dd>
            <dt>Size</dt>
            <dd>{formatBytes(memory.data.content_size_bytes)}</dd>
            <dt>SHA-256</dt>
            <dd className="mono">{memory.data.content_sha256}</dd>
            <dt>Current version</dt>
            <dd className="mono">{memory.data.memory_version_id}</dd>
            <dt>Updated</dt>
            <dd>{formatTime(memory.data.updated_at)}</dd>
          </dl>
          <pre data-testid="memory-content">{memory.data.content ?? ""}</pre>
        </>
      )}
      <h3>Versions</h3>
      <Problem error={versions.error} />
      <Problem error={redact.error} prefix="Redact: " />
      {versions.data && (
        <div className="table-wrap">
          <table data-testid="memory-versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Change</th>
                <th scope="col">By</th>
                <th scope="col">When</th>
                <th scope="col">Path and content</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.data.data.map((version) => (
                <VersionRow
                  key={version.id}
                  version={version}
                  current={version.id === memory.data?.memory_version_id}
                  redacting={redact.isPending}
                  onRedact={() => onRedact(version)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={versions.data?.next} />
    </section>
  );
}

function VersionRow({
  version,
  current,
  redacting,
  onRedact,
}: {
  version: MemoryVersion;
  current: boolean;
  redacting: boolean;
  onRedact(): void;
}) {
  const redacted = Boolean(version.redacted_at);
  return (
    <tr data-testid="memory-version" data-version-id={version.id} data-redacted={redacted ? "true" : "false"}>
      <td className="mono">
        {version.id}
        {current && <span className="badge">current</span>}
      </td>
      <td>{version.operation}</td>
      <td className="mono">{actorLabel(version.created_by)}</td>
      <td>
        <time dateTime={version.created_at}>{formatTime(version.created_at)}</time>
      </td>
      <td>
        {redacted ? (
          <span className="muted" data-testid="redacted">
            Redacted {formatTime(version.redacted_at)} by {actorLabel(version.redacted_by)}
          </span>
        ) : (
          <>
            <div className="mono">{version.path}</div>
            {version.content !== null && version.content !== undefined && (
              <details>
                <summary>{formatBytes(version.content_size_bytes)}</summary>
                <pre>{version.content}</pre>
              </details>
            )}
          </>
        )}
      </td>
      <td>
        {!redacted && version.operation !== "deleted" && (
          <button
            type="button"
            className="danger"
            aria-label={`Redact ${version.id}`}
            disabled={redacting}
            onClick={onRedact}
          >
            Redact
          </button>
        )}
      </td>
    </tr>
  );
}
