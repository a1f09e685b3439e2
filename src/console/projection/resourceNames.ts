/** Named things the Console can resolve an id to: agents, environments, and API keys by label. */
export interface NamedThing {
  id: string;
  name: string | null;
}

export type NameBook = ReadonlyMap<string, string>;

/** A book of names from lists the Console has read; an unnamed thing is left out (its id is shown). */
export function nameBook(...lists: ReadonlyArray<readonly NamedThing[] | undefined>): NameBook {
  const book = new Map<string, string>();
  for (const list of lists) for (const thing of list ?? []) if (thing.name) book.set(thing.id, thing.name);
  return book;
}

/** An audit entry's actor as a person reads it: a key's label, or the actor as recorded. */
export function actorName(actor: string, book: NameBook): string {
  return book.get(actor) ?? actor;
}

/** The resource types the admin audit records (the server's list, for the filter). */
export const AUDIT_RESOURCE_TYPES = [
  "agent",
  "environment",
  "environment_key",
  "vault",
  "credential",
  "api_key",
  "workspace",
  "data_subject",
  "tunnel",
  "tunnel_certificate",
  "user_profile",
  "webhook_endpoint",
] as const;
