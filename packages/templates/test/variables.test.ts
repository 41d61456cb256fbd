import { workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { templateVariables } from "../src/variables.js";

const { HANDLEBARS, LIQUID } = workflowsV1.TemplateEngine;

describe("templateVariables", () => {
  it("finds plain, nested, helper-argument and block-condition variables in order", () => {
    expect(templateVariables("Hi {{firstName}}, {{order.id}} {{uppercase city}} {{dateFormat (lowercase when) 'x'}} {{{html}}}", HANDLEBARS)).toEqual([
      "firstName",
      "order.id",
      "city",
      "when",
      "html",
    ]);
    expect(templateVariables("{{#if paid}}{{amount}}{{else}}{{reason}}{{/if}}", HANDLEBARS)).toEqual(["paid", "amount", "reason"]);
  });

  it("leaves out what each/with bodies read (the items), data variables and this", () => {
    expect(templateVariables("{{#each items}}{{name}} {{@index}}{{/each}} {{#with user}}{{email}}{{/with}} {{this}}", HANDLEBARS)).toEqual(["items", "user"]);
    expect(templateVariables("{{#sections}}{{title}}{{/sections}}", HANDLEBARS)).toEqual(["sections"]);
  });

  it("throws on a template that does not parse", () => {
    expect(() => templateVariables("{{#if open}}never closed", HANDLEBARS)).toThrow(/Parse error/);
  });

  it("reads liquid templates' variables as dotted paths, leaving out what they assign or loop over", () => {
    const template =
      "{{ payload.name | upcase }} {% assign first = payload.items | first %}{{ first.label }}{% for item in payload.items %}{{ item.id }}{% endfor %}{{ steps.digest-step.eventCount }}";
    expect(templateVariables(template, LIQUID)).toEqual(["payload.name", "payload.items", "steps.digest-step.eventCount"]);
    expect(() => templateVariables("{% if %}", LIQUID)).toThrow(/invalid value expression/);
  });

  it("reads a block-editor body's variables from its nodes", () => {
    const body = {
      type: "doc",
      content: [
        {
          type: "paragraph",
          content: [
            { type: "variable", attrs: { id: "payload.name" } },
            { type: "text", text: "{{ subscriber.email }}" },
          ],
        },
        { type: "button", attrs: { text: "Open", url: "payload.link", isUrlVariable: true, showIfKey: "payload.show" } },
      ],
    };
    expect(templateVariables(JSON.stringify(body), LIQUID)).toEqual(["payload.name", "subscriber.email", "payload.link", "payload.show"]);
  });
});
