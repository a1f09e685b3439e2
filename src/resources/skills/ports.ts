/** The Skill family's store port (its SQL implementation lives in stores/sql). */
export interface SkillStore {
  readonly family: "skills";
}
