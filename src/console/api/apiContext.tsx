import type Anthropic from "@anthropic-ai/sdk";
import { createContext, useContext } from "react";

export interface Api {
  client: Anthropic;
  signOut(): void;
}

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside a signed-in Console");
  return api;
}
