import { useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { forgetApiKey, storedApiKey } from "./api/apiKeyStore.js";
import { SignIn } from "./pages/SignIn.js";

// Everything behind the sign-in (the SDK, every page) is its own chunk: the sign-in form shows
// before that code has even arrived.
const loadSignedIn = () => import("./SignedIn.js");
const SignedIn = lazy(loadSignedIn);

export function App() {
  const [apiKey, setApiKey] = useState(storedApiKey);
  const queryClient = useQueryClient();
  const signOut = useCallback(() => {
    forgetApiKey();
    // Nothing read with the old key stays on screen or in the cache.
    queryClient.clear();
    setApiKey(null);
  }, [queryClient]);
  // While the operator types the key, fetch the rest, so signing in does not wait for it.
  useEffect(() => {
    if (apiKey === null) void loadSignedIn();
  }, [apiKey]);
  if (apiKey === null) return <SignIn onSignedIn={setApiKey} />;
  return (
    <Suspense fallback={<p className="loading">Loading…</p>}>
      <SignedIn apiKey={apiKey} signOut={signOut} />
    </Suspense>
  );
}
