import type { ResourceDeps } from "../services.js";

export class SkillService {
  constructor(protected readonly deps: ResourceDeps) {}
}
