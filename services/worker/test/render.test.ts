import { describe, expect, it } from "vitest";
import { render, templateData } from "../src/render.js";

const data = templateData({
  payload: { firstName: "Payload Ada", orderId: 42, items: [{ name: "b" }, { name: "a" }], subscriber: "shadowed" },
  subscriber: { firstName: "Ada", lastName: "Lovelace" },
  actor: { firstName: "Grace" },
  step: { total_count: 3 },
});

describe("render", () => {
  it("exposes payload keys at the top level and under payload", () => {
    expect(render("Hi {{firstName}} / {{payload.firstName}}, order {{orderId}}", data)).toBe("Hi Payload Ada / Payload Ada, order 42");
  });

  it("lets subscriber, actor and step win over payload keys of the same name", () => {
    expect(render("{{subscriber.firstName}} {{subscriber.lastName}} by {{actor.firstName}} ({{step.total_count}})", data)).toBe(
      "Ada Lovelace by Grace (3)",
    );
  });

  it("offers Novu's helpers", () => {
    expect(render("{{uppercase subscriber.firstName}} {{titlecase 'hello world'}} {{pluralize step.total_count 'item' 'items'}}", data)).toBe(
      "ADA Hello World 3 items",
    );
    expect(render("{{#each (sortBy payload.items 'name')}}{{name}}{{/each}}", data)).toBe("ab");
    expect(render("{{#if (gt step.total_count 2)}}many{{/if}}", data)).toBe("many");
    expect(render("{{dateFormat '2026-03-04T05:06:07Z' 'yyyy-MM-dd HH:mm'}}", data)).toBe("2026-03-04 05:06");
  });

  it("does not reach prototypes", () => {
    expect(render("{{subscriber.constructor}}{{payload.__proto__}}", data)).toBe("");
  });

  it("keeps apostrophes readable and escapes HTML", () => {
    expect(render("{{x}}", { x: "it's <b>" })).toBe("it's &lt;b&gt;");
  });

  it("throws on a template that does not compile", () => {
    expect(() => render("{{#if}}", data)).toThrow();
  });
});
