// The package's main entry (`import { openAwaken } from "awaken-agents"`): the embedded runtime.
export type { SessionEventStream } from "../edge/managed-agents/inProcess/eventStream.js";
export type {
  InProcessBeta,
  InProcessRequestOptions,
} from "../edge/managed-agents/inProcess/inProcessBeta.js";
export type { ListPage, ListPagePromise } from "../edge/managed-agents/inProcess/pages.js";
export { type Awaken, type OpenAwakenOptions, openAwaken } from "./openAwaken.js";
