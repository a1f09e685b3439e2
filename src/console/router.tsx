/**
 * The Console's client routes: paths under its root (`sessions/sesn_…`), kept in the address bar
 * with the History API. The server answers every path under the root with index.html.
 */
import { createContext, type MouseEvent, type ReactNode, useContext, useEffect, useState } from "react";
import { consoleRoot } from "./api/consoleBase.js";

export type Route =
  | { page: "sessions" }
  | { page: "session"; sessionId: string }
  | { page: "approvals" }
  | { page: "agents" }
  | { page: "agent"; agentId: string }
  | { page: "environments" }
  | { page: "vaults" }
  | { page: "vault"; vaultId: string }
  | { page: "credential"; vaultId: string; credentialId: string }
  | { page: "custody" }
  | { page: "environment-keys" }
  | { page: "workers" }
  | { page: "not_found"; path: string };

/** The path below the Console's root, without a leading slash (`""`, `sessions/sesn_1`). */
function currentPath(root: URL): string {
  const path = window.location.pathname;
  return path.startsWith(root.pathname) ? decodeURIComponent(path.slice(root.pathname.length)) : "";
}

export function routeOf(path: string): Route {
  const parts = path.split("/").filter((part) => part !== "");
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "sessions")) return { page: "sessions" };
  if (parts.length === 2 && parts[0] === "sessions") return { page: "session", sessionId: parts[1]! };
  if (parts.length === 2 && parts[0] === "agents") return { page: "agent", agentId: parts[1]! };
  if (parts.length === 2 && parts[0] === "vaults") return { page: "vault", vaultId: parts[1]! };
  if (parts.length === 1 && (parts[0] === "approvals" || parts[0] === "agents")) return { page: parts[0] };
  if (parts.length === 1 && (parts[0] === "environments" || parts[0] === "vaults")) return { page: parts[0] };
  if (parts.length === 4 && parts[0] === "vaults" && parts[2] === "credentials")
    return { page: "credential", vaultId: parts[1]!, credentialId: parts[3]! };
  if (parts.length === 1 && (parts[0] === "custody" || parts[0] === "workers")) return { page: parts[0] };
  if (parts.length === 1 && parts[0] === "environment-keys") return { page: "environment-keys" };
  return { page: "not_found", path };
}

interface Navigation {
  route: Route;
  navigate(path: string): void;
}

const NavigationContext = createContext<Navigation | null>(null);

export function RouterProvider({ children }: { children: ReactNode }) {
  // The root is fixed at load: the document's <base> is frozen then, whatever pushState does later.
  const [root] = useState(consoleRoot);
  const [path, setPath] = useState(() => currentPath(root));
  useEffect(() => {
    const onPop = () => setPath(currentPath(root));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [root]);
  const navigate = (next: string) => {
    window.history.pushState(null, "", new URL(next, root));
    setPath(next);
    window.scrollTo(0, 0);
  };
  return <NavigationContext value={{ route: routeOf(path), navigate }}>{children}</NavigationContext>;
}

export function useNavigation(): Navigation {
  const navigation = useContext(NavigationContext);
  if (!navigation) throw new Error("useNavigation outside RouterProvider");
  return navigation;
}

/** A link to a Console path: a real href (open in a new tab works), navigated in place on a plain click. */
export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  const { navigate } = useNavigation();
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} className={className}>
      {children}
    </a>
  );
}
