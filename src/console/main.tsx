import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { RouterProvider } from "./router.js";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    // An operator's screen: show a failure at once rather than retry it out of sight.
    queries: { retry: false, refetchOnWindowFocus: true, staleTime: 1_000 },
  },
});

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider>
        <App />
      </RouterProvider>
    </QueryClientProvider>
  </StrictMode>,
);
