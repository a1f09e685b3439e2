import { useMemo } from "react";
import { ApiContext } from "./api/apiContext.js";
import { apiClient } from "./api/client.js";
import { Layout } from "./pages/Layout.js";

/** The signed-in Console: one SDK client for the key, and the pages. */
export default function SignedIn({ apiKey, signOut }: { apiKey: string; signOut(): void }) {
  const api = useMemo(() => ({ client: apiClient(apiKey), signOut }), [apiKey, signOut]);
  return (
    <ApiContext value={api}>
      <Layout />
    </ApiContext>
  );
}
