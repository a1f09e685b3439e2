/**
 * How the memory store page walks a store: one level at a time (`depth: 1` below a `path_prefix`),
 * with a trail of the prefixes above. Pure: paths are the store's, as the list answered them.
 */
import type { Actor } from "../api/wire.js";

export interface PrefixCrumb {
  label: string;
  /** The `path_prefix` to list; "/" is the store's root (listed with no prefix at all). */
  prefix: string;
}

/** The trail from the root to `prefix` (`/notes/2026/` → `/`, `notes/`, `2026/`). */
export function prefixCrumbs(prefix: string): PrefixCrumb[] {
  const crumbs: PrefixCrumb[] = [{ label: "/", prefix: "/" }];
  let at = "/";
  for (const segment of prefix.split("/").filter((part) => part !== "")) {
    at = `${at}${segment}/`;
    crumbs.push({ label: `${segment}/`, prefix: at });
  }
  return crumbs;
}

/** An item's name below the prefix being listed: what the tree shows (the full path is its title). */
export function nameBelow(prefix: string, path: string): string {
  return path.startsWith(prefix) && path.length > prefix.length ? path.slice(prefix.length) : path;
}

/** The prefix that lists `path`'s siblings (`/notes/todo.md` → `/notes/`). */
export function parentPrefix(path: string): string {
  const cut = path.lastIndexOf("/", path.endsWith("/") ? path.length - 2 : path.length - 1);
  return cut <= 0 ? "/" : path.slice(0, cut + 1);
}

/** Who made a change, as the version recorded it (an id, never a secret). */
export function actorLabel(actor: Actor | null | undefined): string {
  if (!actor) return "not recorded";
  switch (actor.type) {
    case "api_actor":
      return `API key ${actor.api_key_id}`;
    case "session_actor":
      return `session ${actor.session_id}`;
    case "user_actor":
      return `user ${actor.user_id}`;
    case "service_account_actor":
      return `service account ${actor.service_account_id}`;
  }
}
