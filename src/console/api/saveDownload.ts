/**
 * Saves what an SDK download answered as a file. The key travels in a header, so a plain link
 * could not fetch it; and the bytes are handed over as `application/octet-stream` whatever type the
 * upload claimed, so the browser saves them and never renders them in the Console's origin.
 */
export async function saveDownload(response: Response, filename: string): Promise<void> {
  saveBytes(await response.arrayBuffer(), filename);
}

/** Saves bytes already read (a bundle the page has shown) under `filename`. */
export function saveBytes(bytes: ArrayBuffer, filename: string): void {
  const blob = new Blob([bytes], { type: "application/octet-stream" });
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement("a");
  anchor.href = url;
  // The browser strips path separators and reserved characters from a download's name.
  anchor.download = filename;
  anchor.rel = "noopener";
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // The click has started the download; the URL is no longer needed once it has been read.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
