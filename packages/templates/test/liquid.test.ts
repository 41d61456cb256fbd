import { workflowsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { renderBudget, renderer } from "../src/render.js";

const render = (template: string, payload: Record<string, unknown> = {}, steps?: Record<string, unknown>) =>
  renderer(workflowsV1.TemplateEngine.LIQUID, { payload, subscriber: { firstName: "ada", email: "ada@example.com" }, ...(steps ? { steps } : {}) })(template);

describe("liquid templates", () => {
  it("reads payload, subscriber and steps, with Liquid's filters and tags", () => {
    expect(
      render(
        "{{ subscriber.firstName | capitalize }} ordered {{ payload.items | size }}: {% for item in payload.items %}{{ item.name | upcase }};{% endfor %}",
        {
          items: [{ name: "tea" }, { name: "cake" }],
        },
      ),
    ).toBe("Ada ordered 2: TEA;CAKE;");
    expect(render("{% if payload.total > 100 %}big{% else %}small{% endif %} {{ payload.missing | default: 'none' }}", { total: 120 })).toBe("big none");
    expect(render("{{ steps.digest-step.eventCount }} events", {}, { "digest-step": { eventCount: 3, events: [] } })).toBe("3 events");
  });

  it("prints values as they are, objects and arrays as single-quoted JSON, and nothing for what is missing", () => {
    expect(
      render("{{ payload.html }}|{{ payload.list }}|{{ payload.object | json }}|{{ payload.nothing }}{{ name }}", {
        html: "<b>it's</b>",
        list: ["a", 1],
        object: { a: "b" },
        name: "payload keys are not top-level variables",
      }),
    ).toBe("<b>it's</b>|['a',1]|{'a':'b'}|");
  });

  it("has Novu's digest filter", () => {
    const names = (count: number) => ["John", "Josh", "Sarah", "Mike", "Emma"].slice(0, count);
    expect(render("[{{ payload.none | digest }}]", { none: [] })).toBe("[]");
    expect(render("{{ payload.names | digest }}", { names: names(1) })).toBe("John");
    expect(render("{{ payload.names | digest }}", { names: names(2) })).toBe("John and Josh");
    expect(render("{{ payload.names | digest: 1 }}", { names: names(2) })).toBe("John and Josh");
    expect(render("{{ payload.names | digest: 3 }}", { names: names(3) })).toBe("John, Josh and Sarah");
    expect(render("{{ payload.names | digest }}", { names: names(4) })).toBe("John, Josh and 2 others");
    expect(render("{{ payload.names | digest: 2 }}", { names: names(3) })).toBe("John, Josh and 1 other");
    expect(render("{{ payload.names | digest: 10, '', ' • ' }}", { names: names(4) })).toBe("John • Josh • Sarah and Mike");
    expect(render("{{ payload.users | digest: 1, 'profile.name' }}", { users: [{ profile: { name: "Ann" } }, { profile: {} }, 7] })).toBe("Ann and 2 others");
  });

  it("has Novu's toSentence filter", () => {
    const names = ["John", "Josh", "Sarah", "Alex", "Emma"];
    expect(render("{{ payload.names | toSentence }}", { names: names.slice(0, 2) })).toBe("John and Josh");
    expect(render("{{ payload.names | toSentence: '', 3 }}", { names: names.slice(0, 3) })).toBe("John, Josh, and Sarah");
    expect(render("{{ payload.names | toSentence }}", { names })).toBe("John, Josh, and 3 others");
    expect(render("{{ payload.names | toSentence: '', 1 }}", { names })).toBe("John and 4 others");
    expect(render("{{ payload.names | toSentence: '', 2, 'person' }}", { names: names.slice(0, 3) })).toBe("John, Josh, and 1 person");
    expect(render("{{ payload.names | toSentence: '', 2, 'person' }}", { names })).toBe("John, Josh, and 3 people");
    expect(render("{{ payload.users | toSentence: 'name', 3 }}", { users: [{ name: "John" }, { name: null }, { noName: "Sarah" }] })).toBe("John, , and ");
    expect(render("[{{ payload.text | toSentence }}]", { text: "not a list" })).toBe("[]");
  });

  it("has Novu's pluralize filter", () => {
    expect(render("{{ payload.items | pluralize: 'item' }}", { items: ["a", "b"] })).toBe("2 items");
    expect(render("{{ payload.count | pluralize: 'child' }} / {{ payload.one | pluralize: 'berry' }}", { count: "3", one: 1 })).toBe("3 children / 1 berry");
    expect(render("{{ payload.count | pluralize: 'person', 'folks' }}", { count: 2 })).toBe("2 folks");
    expect(render("{{ payload.keys | pluralize: 'property' }}", { keys: { a: 1 } })).toBe("1 property");
    expect(render("[{{ payload.none | pluralize: 'item' }}]")).toBe("[]");
  });

  it("prints nothing for pluralize over no items, a negative count or a count that is not a number, as Novu's filter does", () => {
    expect(render("[{{ payload.count | pluralize: 'person', 'folks' }}]", { count: 0 })).toBe("[]");
    expect(
      render("[{{ payload.items | pluralize: 'item' }}|{{ payload.debt | pluralize: 'item' }}|{{ payload.word | pluralize: 'item' }}]", {
        items: [],
        debt: -2,
        word: "asdf",
      }),
    ).toBe("[||]");
  });

  it("prints the word alone when pluralize's fourth argument is anything but the text 'true'", () => {
    expect(render("{{ payload.items | pluralize: 'item', '', 'false' }}", { items: [1, 2] })).toBe("items");
    expect(render("{{ payload.one | pluralize: 'person', 'people', false }}", { one: 1 })).toBe("person");
    expect(render("{{ payload.items | pluralize: 'item', '', true }}", { items: [1, 2] })).toBe("items");
    expect(render("{{ payload.items | pluralize: 'item', '', 'true' }}", { items: [1, 2] })).toBe("2 items");
  });

  it("does not reach prototypes", () => {
    expect(render("{{ payload.constructor }}{{ payload.__proto__ }}{{ subscriber.toString }}")).toBe("");
  });

  it("reads no file: include, render and layout find no partial, named in the template or by the payload", () => {
    // package.json is in the working directory of this test, as it is in a service's.
    for (const tag of ["include", "render", "layout"]) {
      expect(() => render(`{% ${tag} "package.json" %}`), tag).toThrow(/Failed to lookup/);
      expect(() => render(`{% ${tag} payload.file %}`, { file: "package.json" }), tag).toThrow(/Failed to lookup/);
    }
    expect(() => render('{% include "../../package.json" %}')).toThrow(/Failed to lookup/);
  });

  it("throws on a template that does not parse, and ends a render that runs too long or grows too large", () => {
    expect(() => render("{% if %}")).toThrow(/invalid value expression/);
    expect(() => render("{{ payload.name")).toThrow(/not closed/);
    expect(() => render("{% for i in (1..100000000) %}x{% endfor %}")).toThrow(/limit exceeded/);
    expect(() => render("{% for i in (1..5000) %}{% for j in (1..5000) %}{{ i }}{% endfor %}{% endfor %}")).toThrow(/limit exceeded/);
    const big = "x".repeat(1_000_000);
    expect(() => render("{{ payload.big }}".repeat(3), { big })).toThrow(/produces more than 2000000 characters/);
  });

  it("shares one rendering budget among a job's runs: once a template that loops without bound spent it, the job's renders fail at once", () => {
    const budget = renderBudget();
    const looping = "{% for i in (1..5000) %}{% for j in (1..5000) %}{{ i }}{% endfor %}{% endfor %}";
    const failures: string[] = [];
    for (let run = 0; run < 12; run += 1) {
      const render = renderer(workflowsV1.TemplateEngine.LIQUID, { payload: {}, subscriber: {} }, budget);
      try {
        render(looping);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    expect(failures).toHaveLength(12);
    expect(failures[0]).toMatch(/render limit exceeded/);
    expect(failures.at(-1)).toMatch(/took too long for this job/);
    // Many quick templates in a run buy a slow one no time: the budget grows by run, not by template.
    const padded = renderBudget();
    const paddedFailures: string[] = [];
    for (let run = 0; run < 12; run += 1) {
      const render = renderer(workflowsV1.TemplateEngine.LIQUID, { payload: {}, subscriber: {} }, padded);
      try {
        for (let quick = 0; quick < 500; quick += 1) render("{{ payload.x }}");
        render(looping);
      } catch (error) {
        paddedFailures.push((error as Error).message);
      }
    }
    expect(paddedFailures.at(-1)).toMatch(/took too long for this job/);
    // Every template of the job now fails, in either language; another job's budget is its own.
    expect(() => renderer(workflowsV1.TemplateEngine.HANDLEBARS, { payload: {}, subscriber: {} }, budget)("Hi")).toThrow(/took too long/);
    expect(renderer(workflowsV1.TemplateEngine.LIQUID, { payload: {}, subscriber: {} }, renderBudget())("Hi {{ payload.x | default: 'there' }}")).toBe(
      "Hi there",
    );
  });
});
