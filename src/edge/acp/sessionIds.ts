import { RequestError } from "@agentclientprotocol/sdk";

/** An Awaken session id: the prefix and 26 characters of Crockford base32 (time, sequence, random). */
const SESSION_ID = /^sesn_[0-9a-hjkmnp-tv-z]{26}$/;

/** A client's session id, refused unless it has a session id's form (it goes into a URL path). */
export function checkSessionId(value: string): string {
  if (!SESSION_ID.test(value)) {
    throw RequestError.invalidParams(
      { sessionId: value.slice(0, 80) },
      "sessionId is not an Awaken session id",
    );
  }
  return value;
}
