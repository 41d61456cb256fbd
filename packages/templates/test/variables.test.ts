import { describe, expect, it } from "vitest";
import { templateVariables } from "../src/variables.js";

describe("templateVariables", () => {
  it("finds plain, nested, helper-argument and block-condition variables in order", () => {
    expect(templateVariables("Hi {{firstName}}, {{order.id}} {{uppercase city}} {{dateFormat (lowercase when) 'x'}} {{{html}}}")).toEqual([
      "firstName",
      "order.id",
      "city",
      "when",
      "html",
    ]);
    expect(templateVariables("{{#if paid}}{{amount}}{{else}}{{reason}}{{/if}}")).toEqual(["paid", "amount", "reason"]);
  });

  it("leaves out what each/with bodies read (the items), data variables and this", () => {
    expect(templateVariables("{{#each items}}{{name}} {{@index}}{{/each}} {{#with user}}{{email}}{{/with}} {{this}}")).toEqual(["items", "user"]);
    expect(templateVariables("{{#sections}}{{title}}{{/sections}}")).toEqual(["sections"]);
  });

  it("throws on a template that does not parse", () => {
    expect(() => templateVariables("{{#if open}}never closed")).toThrow(/Parse error/);
  });
});
