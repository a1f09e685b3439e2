import type { ResourceDeps } from "../services.js";

export class FileService {
  constructor(protected readonly deps: ResourceDeps) {}
}
