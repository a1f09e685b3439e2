/**
 * One tool call of an assistant message: its name, state, input and output, and the Approve / Deny
 * buttons while the server waits for the user's answer.
 */
import { type DynamicToolUIPart, getToolName, type ToolUIPart } from "ai";

export interface ToolPartProps {
  part: ToolUIPart | DynamicToolUIPart;
  onAnswer(approved: boolean): void;
}

export function ToolPart({ part, onAnswer }: ToolPartProps) {
  const name = getToolName(part);
  return (
    <section
      data-testid="tool-part"
      data-tool-name={name}
      data-tool-call-id={part.toolCallId}
      data-state={part.state}
      aria-label={`Tool call ${name}`}
    >
      <p>
        Tool <code>{name}</code>: <span data-testid="tool-state">{part.state}</span>
      </p>
      {part.input !== undefined ? <pre data-testid="tool-input">{JSON.stringify(part.input)}</pre> : null}
      {part.state === "output-available" ? (
        <pre data-testid="tool-output">{JSON.stringify(part.output)}</pre>
      ) : null}
      {part.state === "output-error" ? <p data-testid="tool-error">{part.errorText}</p> : null}
      {part.state === "approval-requested" ? (
        <fieldset>
          <legend>Run {name}?</legend>
          <button type="button" data-testid="approve" onClick={() => onAnswer(true)}>
            Approve
          </button>
          <button type="button" data-testid="deny" onClick={() => onAnswer(false)}>
            Deny
          </button>
        </fieldset>
      ) : null}
    </section>
  );
}
