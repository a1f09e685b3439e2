import type { Clock } from "../kernel/clock.js";
import type { Outbound } from "../kernel/outboundConnector.js";
import { FileService } from "./files/fileService.js";
import type { FileStore } from "./files/ports.js";
import { MemoryService } from "./memory/memoryService.js";
import type { MemoryStore } from "./memory/ports.js";
import type { BlobStore, TokenSealer } from "./ports.js";
import type { SessionResourceStore } from "./sessionResources/ports.js";
import { SessionResourceService } from "./sessionResources/sessionResourceService.js";
import type { SkillStore } from "./skills/ports.js";
import { SkillService } from "./skills/skillService.js";

/** Each family's store: role-narrowed, never the database handle. */
export interface ResourceStores {
  files: FileStore;
  skills: SkillStore;
  memory: MemoryStore;
  sessionResources: SessionResourceStore;
}

/** What the Resources context is composed from; each family takes what it needs. */
export interface ResourceDeps {
  stores: ResourceStores;
  blobs: BlobStore;
  clock: Clock;
  /** The process environment: each family reads its own limits from it (documented per family). */
  env: Readonly<Record<string, string | undefined>>;
  /** Seals a repository's token at rest, like vault credentials; absent (a split Coordinator) tokens are refused. */
  sealer?: TokenSealer;
  /** The address policy every connection made for a user obeys (repository URLs). */
  outbound: Outbound;
}

/** The Resources context's application services, as the edges call them. */
export interface ResourceServices {
  files: FileService;
  skills: SkillService;
  memory: MemoryService;
  sessionResources: SessionResourceService;
}

export function composeResources(deps: ResourceDeps): ResourceServices {
  return {
    files: new FileService(deps),
    skills: new SkillService(deps),
    memory: new MemoryService(deps),
    sessionResources: new SessionResourceService(deps),
  };
}
