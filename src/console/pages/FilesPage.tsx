import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { saveDownload } from "../api/saveDownload.js";
import type { FileMetadata } from "../api/wire.js";
import { Link } from "../router.js";
import { formatBytes } from "./formatBytes.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const PAGE_SIZE = 50;

/**
 * The workspace's files, newest first, a page at a time. Names and MIME types are the uploader's
 * words: shown as text only. A download goes through the SDK (the key is a header) and is saved,
 * never opened in the Console.
 */
export function FilesPage() {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const files = useQuery({
    queryKey: ["files", pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.files.list(
        { limit: PAGE_SIZE, ...(pages.cursor ? { page: pages.cursor } : {}) },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  const download = useMutation({
    mutationFn: async (file: FileMetadata) =>
      saveDownload(await client.beta.files.download(file.id), file.filename),
  });
  const remove = useMutation({
    mutationFn: (file: FileMetadata) => client.beta.files.delete(file.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["files"] }),
  });
  const onDelete = (file: FileMetadata) => {
    if (window.confirm(`Delete the file “${file.filename}” (${file.id})? Sessions that mount it lose it.`))
      remove.mutate(file);
  };
  return (
    <section aria-labelledby="files-title">
      <h1 id="files-title">Files</h1>
      <p className="hint">Uploaded with the Files API; a session mounts one as a resource.</p>
      <Problem error={files.error} />
      <Problem error={download.error} prefix="Download: " />
      <Problem error={remove.error} prefix="Delete: " />
      {files.data?.data.length === 0 && <p>None yet.</p>}
      {files.data && files.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="files">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">MIME type</th>
                <th scope="col">Size</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {files.data.data.map((file) => (
                <tr key={file.id} data-testid="file-row" data-file-id={file.id}>
                  <td>
                    <span className="file-name">{file.filename}</span>
                    <div className="muted mono">{file.id}</div>
                    {file.scope && (
                      <div className="muted">
                        from <Link to={`sessions/${encodeURIComponent(file.scope.id)}`}>{file.scope.id}</Link>
                      </div>
                    )}
                  </td>
                  <td className="mono">{file.mime_type}</td>
                  <td>{formatBytes(file.size_bytes)}</td>
                  <td>
                    <time dateTime={file.created_at}>{formatTime(file.created_at)}</time>
                  </td>
                  <td className="buttons">
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Download ${file.filename}`}
                      disabled={file.downloadable === false || download.isPending}
                      onClick={() => download.mutate(file)}
                    >
                      Download
                    </button>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete ${file.filename}`}
                      disabled={remove.isPending}
                      onClick={() => onDelete(file)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={files.data?.next} />
    </section>
  );
}
