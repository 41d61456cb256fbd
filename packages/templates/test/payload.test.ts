import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { commonV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { missingRequiredVariables, missingVariablesMessage, valueAtPath, variableDefaults, withDefaults } from "../src/payload.js";

const variable = (name: string, type: string, extra: { required?: boolean; defaultValue?: JsonValue } = {}) =>
  create(commonV1.TemplateVariableSchema, {
    name,
    type,
    required: extra.required ?? false,
    ...(extra.defaultValue !== undefined ? { defaultValue: fromJson(ValueSchema, extra.defaultValue) } : {}),
  });

describe("required template variables", () => {
  const missing = (variables: commonV1.TemplateVariable[], payload: Record<string, unknown>) =>
    missingRequiredVariables(variables, (path) => valueAtPath(payload, path));

  it("asks each type for its kind of value, as Novu's check does", () => {
    const variables = [
      variable("order.id", "String", { required: true }),
      variable("items", "Array", { required: true }),
      variable("gift", "Boolean", { required: true }),
      variable("note", "String"),
    ];
    expect(missing(variables, {})).toEqual(["order.id (Value)", "items (Array)", "gift (Boolean)"]);
    // A String takes a number too; false is a Boolean's value, not a missing one.
    expect(missing(variables, { order: { id: 7 }, items: [], gift: false })).toEqual([]);
    expect(missing(variables, { order: { id: {} }, items: "a", gift: "yes" })).toEqual(["order.id (Value)", "items (Array)", "gift (Boolean)"]);
    expect(missing(variables, { order: "A-1", items: [1], gift: true })).toEqual(["order.id (Value)"]);
  });

  it("never asks the payload for what the engine gives a template, and a default does not stand in for a required value", () => {
    expect(missing([variable("subscriber.firstName", "String", { required: true }), variable("step.events", "Array", { required: true })], {})).toEqual([]);
    expect(missing([variable("plan", "String", { required: true, defaultValue: "free" })], {})).toEqual(["plan (Value)"]);
  });

  it("is refused in Novu's words", () => {
    expect(missingVariablesMessage(["a (Value)", "b (Array)"])).toBe("payload is missing required key(s) and type(s): a (Value), b (Array)");
  });
});

describe("template variable defaults", () => {
  it("nest by their dotted names; an empty text is no default and a later one wins", () => {
    const defaults = variableDefaults([
      variable("order.currency", "String", { defaultValue: "EUR" }),
      variable("order.gift", "Boolean", { defaultValue: false }),
      variable("note", "String", { defaultValue: "" }),
      variable("plan", "String", { defaultValue: "free" }),
      variable("plan", "String", { defaultValue: "pro" }),
      variable("subscriber.firstName", "String", { defaultValue: "friend" }),
    ]);
    expect(defaults).toEqual({ order: { currency: "EUR", gift: false }, plan: "pro" });
  });

  it("fill in only what the payload lacks, objects merged key by key", () => {
    const defaults = { order: { currency: "EUR", gift: false }, plan: "free", tags: ["a"] };
    expect(withDefaults(defaults, { order: { id: "A-1", gift: true }, tags: [], extra: 1 })).toEqual({
      order: { currency: "EUR", gift: true, id: "A-1" },
      plan: "free",
      tags: [],
      extra: 1,
    });
    // A value that is no object replaces the default's object whole.
    expect(withDefaults(defaults, { order: "A-1" })).toEqual({ order: "A-1", plan: "free", tags: ["a"] });
  });

  it("keep a key named __proto__ as a key, never as the object's prototype", () => {
    const defaults = variableDefaults([variable("__proto__.polluted", "String", { defaultValue: "yes" })]);
    expect(Object.getPrototypeOf(defaults)).toBe(Object.prototype);
    expect(Object.hasOwn(defaults, "__proto__")).toBe(true);
    const merged = withDefaults(defaults, JSON.parse('{"__proto__": {"other": 1}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(merged, "__proto__")?.value).toEqual({ polluted: "yes", other: 1 });
  });
});
