import { useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { forgetApiKey, storedApiKey } from "./api/apiKeyStore.js";
import { SignIn } from "./pages/SignIn.js";

// Everything behind the sign-in (the SDK, every page) is its own chunk: the sign-in form shows
// before that code has even arrived.
type SignedInModule = typeof import("./SignedIn.js");
let loaded: SignedInModule | null = null;
const loadSignedIn = () =>
  import("./SignedIn.js").then((module) => {
    loaded = module;
    return module;
  });
const LazySignedIn = lazy(loadSignedIn);

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
  // Loaded while the form was shown (the usual case): render it at once, without suspending.
  const SignedIn = loaded?.default;
  if (SignedIn) return <SignedIn apiKey={apiKey} signOut={signOut} />;
  return (
    <Suspense fallback={<p className="loading">Loading…</p>}>
      <LazySignedIn apiKey={apiKey} signOut={signOut} />
    </Suspense>
  );
}
