/**
 * Does a JSON value have the type the SDK declares? Walks the declared type with the TypeScript
 * checker: every required property present, every present property of its declared type, string
 * literals and unions exact, arrays and records item by item. Properties the type does not name are
 * allowed (Awaken's extension fields), as a client reading the declared fields never sees them.
 */
import ts from "typescript";

const MAX_DEPTH = 40;

/** The mismatches, each as `path: what`; empty when the value conforms. */
export function conformance(checker: ts.TypeChecker, value: unknown, type: ts.Type, path = "$"): string[] {
  const errors: string[] = [];
  check(checker, value, type, path, errors, 0);
  return errors;
}

function check(
  checker: ts.TypeChecker,
  value: unknown,
  type: ts.Type,
  path: string,
  errors: string[],
  depth: number,
) {
  if (depth > MAX_DEPTH) return;
  const f = type.flags;
  if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  if (type.isUnion()) return checkUnion(checker, value, type, path, errors, depth);
  if (f & ts.TypeFlags.Null) return expect(value === null, path, "null", value, errors);
  if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void))
    return expect(value === undefined, path, "absent", value, errors);
  if (type.isStringLiteral())
    return expect(value === type.value, path, JSON.stringify(type.value), value, errors);
  if (type.isNumberLiteral()) return expect(value === type.value, path, String(type.value), value, errors);
  if (f & ts.TypeFlags.BooleanLiteral) {
    const literal = (type as ts.Type & { intrinsicName?: string }).intrinsicName === "true";
    return expect(value === literal, path, String(literal), value, errors);
  }
  if (f & ts.TypeFlags.String) return expect(typeof value === "string", path, "a string", value, errors);
  if (f & ts.TypeFlags.Number) return expect(typeof value === "number", path, "a number", value, errors);
  if (f & ts.TypeFlags.Boolean) return expect(typeof value === "boolean", path, "a boolean", value, errors);
  if (checker.isArrayType(type) || checker.isTupleType(type)) {
    if (!Array.isArray(value)) return expect(false, path, "an array", value, errors);
    const items = checker.getTypeArguments(type as ts.TypeReference);
    value.forEach((item, i) => {
      const itemType = checker.isTupleType(type) ? items[i] : items[0];
      if (itemType) check(checker, item, itemType, `${path}[${i}]`, errors, depth + 1);
    });
    return;
  }
  if (f & (ts.TypeFlags.Object | ts.TypeFlags.Intersection))
    return checkObject(checker, value, type, path, errors, depth);
  // A type this walker does not model (a template literal, an enum): say so rather than pass it silently.
  errors.push(`${path}: cannot check the declared type ${checker.typeToString(type)}`);
}

function checkObject(
  checker: ts.TypeChecker,
  value: unknown,
  type: ts.Type,
  path: string,
  errors: string[],
  depth: number,
) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return expect(false, path, `an object (${checker.typeToString(type)})`, value, errors);
  }
  const record = value as Record<string, unknown>;
  const named = new Set<string>();
  for (const property of checker.getPropertiesOfType(type)) {
    named.add(property.name);
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    if (!(property.name in record)) {
      if (!optional)
        errors.push(`${path}.${property.name}: missing (declared ${declared(checker, property)})`);
      continue;
    }
    check(
      checker,
      record[property.name],
      checker.getTypeOfSymbol(property),
      `${path}.${property.name}`,
      errors,
      depth + 1,
    );
  }
  const index = checker.getIndexInfosOfType(type).find((info) => info.keyType.flags & ts.TypeFlags.String);
  if (index) {
    for (const [key, item] of Object.entries(record)) {
      if (!named.has(key))
        check(checker, item, index.type, `${path}[${JSON.stringify(key)}]`, errors, depth + 1);
    }
  }
}

/** A union conforms when one member does; the errors reported are the closest member's. */
function checkUnion(
  checker: ts.TypeChecker,
  value: unknown,
  type: ts.UnionType,
  path: string,
  errors: string[],
  depth: number,
) {
  let closest: string[] | null = null;
  for (const member of type.types) {
    const memberErrors: string[] = [];
    check(checker, value, member, path, memberErrors, depth);
    if (memberErrors.length === 0) return;
    // A member whose `type` discriminant matches the value's, or the one array member for an array,
    // is the one the value meant to be.
    if (
      discriminantMatches(checker, value, member) ||
      (Array.isArray(value) && checker.isArrayType(member))
    ) {
      errors.push(...memberErrors);
      return;
    }
    if (closest === null || memberErrors.length < closest.length) closest = memberErrors;
  }
  if (isPrimitiveValue(value) || closest === null) {
    errors.push(`${path}: ${show(value)} is none of ${checker.typeToString(type).slice(0, 160)}`);
  } else {
    errors.push(...closest);
  }
}

function discriminantMatches(checker: ts.TypeChecker, value: unknown, member: ts.Type): boolean {
  if (typeof value !== "object" || value === null) return false;
  const discriminant = member.getProperty("type");
  if (!discriminant) return false;
  const declaredType = checker.getTypeOfSymbol(discriminant);
  return declaredType.isStringLiteral() && (value as { type?: unknown }).type === declaredType.value;
}

const isPrimitiveValue = (value: unknown) => value === null || typeof value !== "object";

function declared(checker: ts.TypeChecker, property: ts.Symbol): string {
  return checker.typeToString(checker.getTypeOfSymbol(property)).slice(0, 120);
}

function expect(ok: boolean, path: string, wanted: string, value: unknown, errors: string[]) {
  if (!ok) errors.push(`${path}: expected ${wanted}, got ${show(value)}`);
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
