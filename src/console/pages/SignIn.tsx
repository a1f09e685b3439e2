import { type FormEvent, useId, useState } from "react";
import { storeApiKey } from "../api/apiKeyStore.js";

/** Checks the key with one cheap authenticated read before keeping it for this tab. */
export function SignIn({ onSignedIn }: { onSignedIn(apiKey: string): void }) {
  const [apiKey, setApiKey] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fieldId = useId();
  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const key = apiKey.trim();
    if (key === "") {
      setProblem("Enter an API key.");
      return;
    }
    setBusy(true);
    setProblem(null);
    // The SDK arrives with the signed-in chunk; this is its first use.
    const { apiClient, problemOf } = await import("../api/client.js");
    try {
      // Sessions are what every key's role may read (runtime, builder, admin).
      await apiClient(key).beta.sessions.list({ limit: 1 });
      storeApiKey(key);
      onSignedIn(key);
    } catch (error) {
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <h1>Awaken Console</h1>
      <form onSubmit={onSubmit} className="card">
        <label htmlFor={fieldId}>API key</label>
        <input
          id={fieldId}
          type="password"
          autoComplete="off"
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
          aria-describedby={problem ? `${fieldId}-problem` : undefined}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {problem && (
          <p id={`${fieldId}-problem`} role="alert" className="problem">
            {problem}
          </p>
        )}
        <p className="hint">The key is kept for this browser tab only.</p>
      </form>
    </main>
  );
}
