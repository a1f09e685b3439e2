import type { ResourceDeps } from "../services.js";

export class MemoryService {
  constructor(protected readonly deps: ResourceDeps) {}
}
