/**
 * Entry of the browser test page. The workspace API key, the agent and optionally the environment
 * come from the page URL's query (`?key=…&agent=…&environment=…`): the page is a test fixture served
 * on the loopback, never a product UI.
 */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";

const query = new URLSearchParams(window.location.search);
const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
createRoot(root).render(
  <StrictMode>
    <App
      apiKey={query.get("key") ?? ""}
      agentId={query.get("agent") ?? ""}
      environmentId={query.get("environment") ?? undefined}
    />
  </StrictMode>,
);
