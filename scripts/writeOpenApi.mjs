// Writes docs/openapi.json from the built server (`npm run openapi` builds first); a test checks
// that the committed file is what the routes' schemas give.
import { writeFileSync } from "node:fs";
import { openApiDocument } from "../dist/edge/openapi/openApiDocument.js";

const target = new URL("../docs/openapi.json", import.meta.url);
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
