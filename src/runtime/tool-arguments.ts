/**
 * The argument names a tool accepts, read off its schema, so the validator can flag an input
 * the tool would reject or silently drop. `undefined` means "accepts any argument" (a
 * passthrough zod object, a schema we cannot read).
 */
interface SchemaLike {
  _zod?: { def?: { type?: string; shape?: object; catchall?: { _zod?: { def?: { type?: string } } } } };
  _def?: { typeName?: string; unknownKeys?: string; shape?: () => object; catchall?: { _def?: { typeName?: string } } };
  type?: unknown;
  properties?: object;
  additionalProperties?: unknown;
}

export function acceptedArguments(schema: unknown): readonly string[] | undefined {
  if (schema === null || typeof schema !== "object") return undefined;
  const s = schema as SchemaLike;
  const v4 = s._zod?.def;
  if (v4?.type === "object") {
    // A catchall other than `never` (`.passthrough()`, `.catchall(…)`) accepts extra keys.
    if (v4.catchall && v4.catchall._zod?.def?.type !== "never") return undefined;
    return Object.keys(v4.shape ?? {});
  }
  if (s._def?.typeName === "ZodObject") {
    const catchall = s._def.catchall?._def?.typeName;
    if (s._def.unknownKeys === "passthrough" || (catchall && catchall !== "ZodNever")) return undefined;
    return Object.keys(s._def.shape?.() ?? {});
  }
  if (s.type === "object" && s.properties && s.additionalProperties === false) return Object.keys(s.properties);
  return undefined;
}
