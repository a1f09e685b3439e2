import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";

/**
 * What an operator sends into a session: the same events every other client of the Managed wire
 * sends (a tool confirmation, a message, an interrupt), and the archive call.
 */
export function useSessionActions(sessionId: string) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const settle = () => {
    void queryClient.invalidateQueries({ queryKey: ["approvals"] });
    void queryClient.invalidateQueries({ queryKey: ["session", sessionId] });
    void queryClient.invalidateQueries({ queryKey: ["sessions"] });
  };
  const confirm = useMutation({
    mutationFn: (decision: { toolUseId: string; allow: boolean; denyMessage?: string }) =>
      client.beta.sessions.events.send(sessionId, {
        events: [
          decision.allow
            ? { type: "user.tool_confirmation", tool_use_id: decision.toolUseId, result: "allow" }
            : {
                type: "user.tool_confirmation",
                tool_use_id: decision.toolUseId,
                result: "deny",
                ...(decision.denyMessage ? { deny_message: decision.denyMessage } : {}),
              },
        ],
      }),
    onSettled: settle,
  });
  const sendMessage = useMutation({
    mutationFn: (text: string) =>
      client.beta.sessions.events.send(sessionId, {
        events: [{ type: "user.message", content: [{ type: "text", text }] }],
      }),
    onSettled: settle,
  });
  const interrupt = useMutation({
    mutationFn: () => client.beta.sessions.events.send(sessionId, { events: [{ type: "user.interrupt" }] }),
    onSettled: settle,
  });
  const archive = useMutation({
    mutationFn: () => client.beta.sessions.archive(sessionId),
    onSettled: settle,
  });
  return { confirm, sendMessage, interrupt, archive };
}
