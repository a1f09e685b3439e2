import { useState } from "react";

/**
 * Allow / Deny (with an optional message) for one pending ask; the list of approvals and the
 * transcript both answer with it, so both send the same confirmation.
 */
export function DecideButtons({
  disabled,
  onDecide,
  testId,
}: {
  disabled: boolean;
  onDecide: (allow: boolean, denyMessage?: string) => void;
  testId?: string;
}) {
  const [denyMessage, setDenyMessage] = useState("");
  return (
    <div className="decide" data-testid={testId}>
      <button type="button" disabled={disabled} onClick={() => onDecide(true)}>
        Allow
      </button>
      <label>
        Deny message
        <input value={denyMessage} onChange={(event) => setDenyMessage(event.target.value)} />
      </label>
      <button
        type="button"
        className="danger"
        disabled={disabled}
        onClick={() => onDecide(false, denyMessage.trim() || undefined)}
      >
        Deny
      </button>
    </div>
  );
}
