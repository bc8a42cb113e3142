/**
 * Validating `data` against the published schema of its type and version.
 *
 * The schemas are hookd's catalog: `GET /v1/event-types` serves them, and
 * `config/catalog/<type>.json` in hookd's source holds the same files. This
 * reads such a directory (`CATALOG_DIR`) and checks the JSON Schema keywords
 * the catalog uses (type, required, properties, additionalProperties, enum,
 * pattern, minLength, maxLength, minimum, items). In your own receiver prefer
 * a complete validator: `new Ajv2020().compile(schema)` from `ajv`.
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

type Schema = { [keyword: string]: unknown };

const TYPES: Record<string, (v: unknown) => boolean> = {
  object: (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  string: (v) => typeof v === "string",
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === "number",
  boolean: (v) => typeof v === "boolean",
  null: (v) => v === null,
};

export class Schemas {
  private constructor(private readonly byType: Map<string, Map<number, Schema>>) {}

  /** Every schema of the catalog files in `dir`. */
  static load(dir: string): Schemas {
    const byType = new Map<string, Map<number, Schema>>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
      const definition = JSON.parse(readFileSync(join(dir, file), "utf-8")) as {
        type: string;
        versions: { version: number; schema: Schema }[];
      };
      byType.set(definition.type, new Map(definition.versions.map((v) => [v.version, v.schema])));
    }
    if (byType.size === 0) throw new Error(`no catalog files (*.json) in ${dir}`);
    return new Schemas(byType);
  }

  /**
   * Why `data` does not match the schema of `type` at `version`; empty when
   * it does. A type without a schema passes: it is stored and `ignored`.
   */
  check(type: string, version: unknown, data: unknown): string[] {
    const versions = this.byType.get(type);
    if (versions === undefined) return [];
    const schema = typeof version === "number" ? versions.get(version) : undefined;
    if (schema === undefined) return [`${type} v${String(version)} is not a version this receiver knows; pin the endpoint`];
    return errors(schema, data, "");
  }
}

function errors(schema: Schema, value: unknown, at: string): string[] {
  const where = at === "" ? "/" : at;
  if (schema.type !== undefined) {
    const names = (Array.isArray(schema.type) ? schema.type : [schema.type]) as string[];
    if (!names.some((t) => TYPES[t]?.(value))) return [`${where}: is not of type ${names.join(" or ")}`];
  }
  const found: string[] = [];
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    found.push(`${where}: is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) found.push(`${where}: is shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === "number" && length > schema.maxLength) found.push(`${where}: is longer than ${schema.maxLength}`);
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
      found.push(`${where}: does not match ${schema.pattern}`);
    }
  }
  if (typeof value === "number" && typeof schema.minimum === "number" && value < schema.minimum) {
    found.push(`${where}: is less than ${schema.minimum}`);
  }
  if (TYPES.object?.(value)) {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const name of (schema.required ?? []) as string[]) {
      if (!(name in object)) found.push(`${where}: \`${name}\` is required`);
    }
    for (const [name, item] of Object.entries(object)) {
      const pointer = `${at}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      const sub = Object.hasOwn(properties, name) ? properties[name] : undefined;
      if (sub !== undefined) found.push(...errors(sub, item, pointer));
      else if (schema.additionalProperties === false) found.push(`${pointer}: is not a field of this schema`);
    }
  }
  if (Array.isArray(value) && typeof schema.items === "object" && schema.items !== null) {
    value.forEach((item, i) => found.push(...errors(schema.items as Schema, item, `${at}/${i}`)));
  }
  return found;
}
