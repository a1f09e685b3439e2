import type { ResourceDeps } from "../services.js";

export class SessionResourceService {
  constructor(protected readonly deps: ResourceDeps) {}
}
