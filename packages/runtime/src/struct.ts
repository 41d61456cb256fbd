import { fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { StructSchema, type Struct } from "@bufbuild/protobuf/wkt";

/** Free-form JSON objects (payload, data, overrides) travel as google.protobuf.Struct. */
export function structFromJson(value: JsonObject): Struct {
  return fromJson(StructSchema, value);
}

export function structToJson(value: Struct): JsonObject {
  return toJson(StructSchema, value) as JsonObject;
}
