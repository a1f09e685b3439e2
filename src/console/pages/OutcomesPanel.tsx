import type { Session } from "../api/wire.js";
import { type OutcomeHistory, verdictTone, verdictWords } from "../projection/outcomes.js";
import { formatTime } from "./formatTime.js";

/**
 * Each outcome the session was given: where it stands now (the session's `outcome_evaluations`)
 * and the grader's verdict on every attempt (its history's evaluation spans).
 */
export function OutcomesPanel({
  current,
  history,
}: {
  current: Session["outcome_evaluations"];
  history: readonly OutcomeHistory[];
}) {
  if (current.length === 0 && history.length === 0) return null;
  const ids = [...new Set([...current.map((o) => o.outcome_id), ...history.map((o) => o.outcomeId)])];
  return (
    <section className="card" aria-labelledby="outcomes-title" data-testid="outcomes">
      <h2 id="outcomes-title">Outcomes</h2>
      <ul className="plain outcomes">
        {ids.map((id) => {
          const now = current.find((o) => o.outcome_id === id);
          const past = history.find((o) => o.outcomeId === id);
          const result = now?.result ?? past?.evaluations.at(-1)?.result ?? null;
          return (
            <li key={id} data-testid="outcome" data-outcome-id={id} data-result={result ?? "evaluating"}>
              <div className="thread-line">
                <strong>{now?.description ?? past?.description ?? id}</strong>
                <span className={`verdict verdict-${verdictTone(result)}`}>{verdictWords(result)}</span>
                {now && <span className="muted">iteration {now.iteration}</span>}
                {past?.maxIterations != null && (
                  <span className="muted">of at most {past.maxIterations}</span>
                )}
              </div>
              {now?.explanation && <p>{now.explanation}</p>}
              {now?.completed_at && <p className="muted">completed {formatTime(now.completed_at)}</p>}
              {past && past.evaluations.length > 0 && (
                <ol className="evaluations">
                  {past.evaluations.map((evaluation) => (
                    <li
                      key={`${evaluation.iteration}:${evaluation.startedAt}`}
                      data-testid="evaluation"
                      data-result={evaluation.result ?? "evaluating"}
                    >
                      Iteration {evaluation.iteration}:{" "}
                      <span className={`verdict verdict-${verdictTone(evaluation.result)}`}>
                        {verdictWords(evaluation.result)}
                      </span>
                      {evaluation.explanation && <span className="muted"> — {evaluation.explanation}</span>}
                    </li>
                  ))}
                </ol>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
