import { useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { ApiContext } from "./api/apiContext.js";
import { forgetApiKey, storedApiKey } from "./api/apiKeyStore.js";
import { apiClient } from "./api/client.js";
import { Layout } from "./pages/Layout.js";
import { SignIn } from "./pages/SignIn.js";

export function App() {
  const [apiKey, setApiKey] = useState(storedApiKey);
  const queryClient = useQueryClient();
  const api = useMemo(
    () =>
      apiKey === null
        ? null
        : {
            client: apiClient(apiKey),
            signOut: () => {
              forgetApiKey();
              // Nothing read with the old key stays on screen or in the cache.
              queryClient.clear();
              setApiKey(null);
            },
          },
    [apiKey, queryClient],
  );
  if (!api) return <SignIn onSignedIn={setApiKey} />;
  return (
    <ApiContext value={api}>
      <Layout />
    </ApiContext>
  );
}
