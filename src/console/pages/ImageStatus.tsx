import type { ImageBuildStatus } from "../api/awaken.js";

const CLASS: Record<ImageBuildStatus, string> = {
  pending: "status-running",
  building: "status-running",
  ready: "status-idle",
  failed: "status-failed",
};

/** An image build's state, colored as session states are: waiting, done, failed. */
export function ImageStatus({ status }: { status: ImageBuildStatus }) {
  return (
    <span className={`status ${CLASS[status] ?? ""}`} data-testid="image-status">
      {status}
    </span>
  );
}
