import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import { type NameBook, nameBook } from "../projection/resourceNames.js";

/**
 * Names for the ids an admin page shows: agents, environments, vaults and API keys (by label). The
 * first page of each list is enough for a workspace's catalogue; an id not found is shown as is.
 */
export function useNameBook(): NameBook {
  const { client } = useApi();
  const names = useQuery({
    queryKey: ["name-book"],
    queryFn: async ({ signal }) => {
      const [agents, environments, vaults, keys] = await Promise.all([
        client.beta.agents.list({ limit: 100 }, { signal }),
        client.beta.environments.list({ limit: 100 }, { signal }),
        client.beta.vaults.list({ limit: 100 }, { signal }),
        // Only admins list keys: any other key still gets the other names.
        awaken.apiKeys(client, undefined, signal).catch(() => ({ data: [] })),
      ]);
      return nameBook(
        agents.data,
        environments.data,
        vaults.data.map((v) => ({ id: v.id, name: v.display_name })),
        keys.data.map((k) => ({ id: k.id, name: k.label })),
      );
    },
  });
  return names.data ?? new Map();
}
