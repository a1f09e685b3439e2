/**
 * The Console's client routes: paths under its root (`sessions/sesn_…`), kept in the address bar
 * with the History API. The server answers every path under the root with index.html.
 */
import { createContext, type MouseEvent, type ReactNode, useContext, useEffect, useState } from "react";
import { consoleRoot } from "./api/consoleBase.js";
import { type Route, routeOf } from "./routes.js";

/** The path below the Console's root, without a leading slash (`""`, `sessions/sesn_1`). */
function currentPath(root: URL): string {
  const path = window.location.pathname;
  return path.startsWith(root.pathname) ? decodeURIComponent(path.slice(root.pathname.length)) : "";
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
export function Link({
  to,
  children,
  className,
  current,
}: {
  to: string;
  children: ReactNode;
  className?: string;
  /** Marks the link to the page shown (`aria-current="page"`). */
  current?: boolean;
}) {
  const { navigate } = useNavigation();
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} className={className} aria-current={current ? "page" : undefined}>
      {children}
    </a>
  );
}
