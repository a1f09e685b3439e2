import { type ContentBlock, RequestError } from "@agentclientprotocol/sdk";

/** The image types a user message takes (the Managed wire's base64 image sources). */
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/**
 * An editor's prompt as the content of one `user.message`. The agent runs on the server and cannot
 * open the editor's files: a resource link is passed on as its name and URI, an embedded text
 * resource as its URI and text. What has no place in a user message (audio, binary resources,
 * an image of another type) is refused before anything is sent.
 */
export function messageContent(prompt: readonly ContentBlock[]): Array<Record<string, unknown>> {
  const content = prompt.map((block): Record<string, unknown> => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text };
      case "resource_link":
        return { type: "text", text: `[${block.name}](${block.uri})` };
      case "resource": {
        const { resource } = block;
        if (!("text" in resource)) throw refused("a binary resource cannot be sent to the agent");
        return { type: "text", text: `${resource.uri}\n\`\`\`\n${resource.text}\n\`\`\`` };
      }
      case "image":
        if (!IMAGE_TYPES.has(block.mimeType)) throw refused(`image type ${JSON.stringify(block.mimeType)}`);
        return { type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } };
      default:
        throw refused(`${block.type} content`);
    }
  });
  if (content.length === 0) throw refused("an empty prompt");
  return content;
}

function refused(what: string): RequestError {
  return RequestError.invalidParams(undefined, `${what} is not supported`);
}
