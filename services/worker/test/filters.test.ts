import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateFilter, evaluatePart, stepPasses, type FieldFilterPart, type FilterOperator } from "../src/filters.js";

const context = {
  subscriber: { firstName: "Ada", age: 36, tags: ["vip", "beta"], address: { city: "London" }, active: true },
  payload: { amount: 150, plan: "pro", when: "2026-01-15T00:00:00Z", items: ["a", "b", "c"], note: "Order shipped today" },
};

const part = (operator: FilterOperator, field: string, value: string, on: "subscriber" | "payload" = "payload"): FieldFilterPart => ({
  operator,
  field,
  value,
  on,
});

describe("filter operators", () => {
  it.each([
    ["EQUAL", "plan", "pro", true],
    ["EQUAL", "amount", "150", true],
    ["EQUAL", "plan", "free", false],
    ["NOT_EQUAL", "plan", "free", true],
    ["LARGER", "amount", "100", true],
    ["LARGER", "amount", "150", false],
    ["LARGER_EQUAL", "amount", "150", true],
    ["SMALLER", "amount", "200", true],
    ["SMALLER_EQUAL", "amount", "149", false],
    ["LARGER", "when", "2026-01-01", true],
    ["BETWEEN", "amount", "100,200", true],
    ["BETWEEN", "amount", "151,200", false],
    ["NOT_BETWEEN", "amount", "151,200", true],
    ["NOT_BETWEEN", "missing", "1,2", false],
    ["IN", "items", "b", true],
    ["IN", "note", "shipped", true],
    ["IN", "items", "z", false],
    ["NOT_IN", "items", "z", true],
    ["NOT_IN", "missing", "z", true],
    ["ANY_IN", "items", "x,c", true],
    ["ANY_IN", "items", '["x","y"]', false],
    ["ANY_IN", "plan", "free,pro", true],
    ["ALL_IN", "items", "a,c", true],
    ["ALL_IN", "items", "a,z", false],
    ["LIKE", "note", "%shipped%", true],
    ["LIKE", "note", "order%", true],
    ["LIKE", "note", "SHIPPED", true],
    ["LIKE", "note", "Order_shipped%", true],
    ["LIKE", "note", "%cancelled%", false],
    ["NOT_LIKE", "note", "%cancelled%", true],
  ] as const)("%s on payload.%s with %s → %s", (operator, field, value, expected) => {
    expect(evaluatePart(part(operator, field, value), context)).toBe(expected);
  });

  it("reads nested subscriber fields and coerces booleans", () => {
    expect(evaluatePart(part("EQUAL", "address.city", "London", "subscriber"), context)).toBe(true);
    expect(evaluatePart(part("EQUAL", "active", "true", "subscriber"), context)).toBe(true);
    expect(evaluatePart(part("ANY_IN", "tags", "vip", "subscriber"), context)).toBe(true);
  });

  it("never reads through prototypes", () => {
    expect(evaluatePart(part("EQUAL", "constructor.name", "Object"), context)).toBe(false);
    expect(evaluatePart(part("NOT_EQUAL", "__proto__", "x"), context)).toBe(true);
  });
});

describe("filters and steps", () => {
  const yes = part("EQUAL", "plan", "pro");
  const no = part("EQUAL", "plan", "free");

  it("combines children with AND / OR and honours isNegated", () => {
    expect(evaluateFilter({ isNegated: false, type: "GROUP", value: "AND", children: [yes, no] }, context)).toBe(false);
    expect(evaluateFilter({ isNegated: false, type: "GROUP", value: "OR", children: [yes, no] }, context)).toBe(true);
    expect(evaluateFilter({ isNegated: true, type: "GROUP", value: "OR", children: [yes, no] }, context)).toBe(false);
    expect(evaluateFilter({ isNegated: false, type: "GROUP", value: "AND", children: [] }, context)).toBe(true);
  });

  it("runs a step with no filters, or when any filter passes", () => {
    expect(stepPasses(undefined, context)).toBe(true);
    expect(stepPasses([], context)).toBe(true);
    const failing = { isNegated: false, type: "GROUP", value: "AND" as const, children: [no] };
    const passing = { isNegated: false, type: "GROUP", value: "AND" as const, children: [yes] };
    expect(stepPasses([failing], context)).toBe(false);
    expect(stepPasses([failing, passing], context)).toBe(true);
  });

  it("NOT_X is always the negation of X for defined values (property)", () => {
    const pairs: [FilterOperator, FilterOperator][] = [
      ["EQUAL", "NOT_EQUAL"],
      ["IN", "NOT_IN"],
      ["LIKE", "NOT_LIKE"],
    ];
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer(), fc.array(fc.string())), fc.string(), (actual, value) => {
        for (const [positive, negative] of pairs) {
          const ctx = { subscriber: {}, payload: { x: actual } };
          expect(evaluatePart(part(negative, "x", value), ctx)).toBe(!evaluatePart(part(positive, "x", value), ctx));
        }
      }),
    );
  });
});
