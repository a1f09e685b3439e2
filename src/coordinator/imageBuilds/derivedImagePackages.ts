import { AwakenError } from "../../kernel/errors.js";
import { IMAGE_CARRIED_MANAGERS } from "../../kernel/imageBuild.js";
import { type EnvironmentConfig, PACKAGE_MANAGERS } from "../environmentConfig.js";
import { derivedImageBase } from "./imageBuildService.js";

/**
 * Refuses (400) a revision that derives its container image and also lists packages of a manager
 * the image build does not install (apt, cargo, gem, go). Such packages could only be prepared on
 * the worker's host and bound over the image's packages directory, hiding the packages built into
 * it; the server installs none of them anyway, so the revision is refused where it is written
 * rather than failing every session later. `where` names the stored revision refused, if any.
 */
export function admitDerivedImagePackages(config: EnvironmentConfig, where?: string): void {
  if (config.type !== "cloud" || derivedImageBase(config) === null) return;
  const carried: readonly string[] = IMAGE_CARRIED_MANAGERS;
  const others = PACKAGE_MANAGERS.filter((m) => !carried.includes(m) && config.packages[m].length > 0);
  if (others.length === 0) return;
  const fields = others.map((m) => `config.packages.${m}`).join(", ");
  const prefix = where === undefined ? "" : `${where}: `;
  throw new AwakenError(
    "invalid_request",
    `${prefix}${fields}: a container-tier environment whose image is built from config.sandbox.image ` +
      `and its npm/pip packages carries only ${IMAGE_CARRIED_MANAGERS.join(" and ")} packages; ` +
      `${others.join(", ")} packages are not supported there: install them in the base image and ` +
      `remove them from ${fields}`,
  );
}
