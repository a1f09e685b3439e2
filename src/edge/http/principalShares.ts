/**
 * The part of a per-workspace cap one principal (`principalKey`: an API key, an access token, an
 * environment key) may hold on a replica: a quarter, so one credential — a short-lived token handed
 * to a browser, say — cannot take every slot and lock the workspace's other clients out.
 */
export const PRINCIPAL_SHARE = 0.25;

export function principalShareOf(workspaceCap: number): number {
  return Math.max(1, Math.floor(workspaceCap * PRINCIPAL_SHARE));
}

export type SlotRefusal = "workspace_full" | "principal_full";

/**
 * Counted slots (open streams, say) per workspace and per principal within it. `take` answers a
 * release function, called once when the slot's holder ends, or why no slot was given.
 */
export class PrincipalSlots {
  private readonly byWorkspace = new Map<string, number>();
  private readonly byPrincipal = new Map<string, number>();
  readonly perPrincipal: number;

  constructor(readonly perWorkspace: number) {
    this.perPrincipal = principalShareOf(perWorkspace);
  }

  take(workspaceId: string, owner: string): (() => void) | SlotRefusal {
    const principal = `${workspaceId}\u0000${owner}`;
    const ofWorkspace = this.byWorkspace.get(workspaceId) ?? 0;
    const ofPrincipal = this.byPrincipal.get(principal) ?? 0;
    if (ofPrincipal >= this.perPrincipal) return "principal_full";
    if (ofWorkspace >= this.perWorkspace) return "workspace_full";
    this.byWorkspace.set(workspaceId, ofWorkspace + 1);
    this.byPrincipal.set(principal, ofPrincipal + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.byWorkspace, workspaceId);
      decrement(this.byPrincipal, principal);
    };
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
