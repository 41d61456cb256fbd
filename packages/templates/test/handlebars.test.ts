import { describe, expect, it } from "vitest";
import { handlebarsData as templateData, renderHandlebars } from "../src/handlebars.js";

const render = (template: string, data: Record<string, unknown>) => renderHandlebars(template, data, 1_000);

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
    expect(render("{{subscriber.firstName}} {{subscriber.lastName}} by {{actor.firstName}} ({{step.total_count}})", data)).toBe("Ada Lovelace by Grace (3)");
  });

  it("does not reach prototypes", () => {
    expect(render("{{subscriber.constructor}}{{payload.__proto__}}", data)).toBe("");
  });

  it("keeps apostrophes readable and escapes HTML", () => {
    expect(render("{{x}}", { x: "it's <b>" })).toBe("it's &lt;b&gt;");
    expect(render("it&#x27;s plain", {})).toBe("it's plain");
  });

  it("throws on a template that does not compile", () => {
    expect(() => render("{{#if}}", data)).toThrow();
  });
});

/** Novu's own compile-template cases, and the edges around them. */
describe("Novu's helpers", () => {
  const people = [
    { name: "a75", id: 1, updated_at: "2023-01-01T06:25:24Z" },
    { name: "z32", id: 3, updated_at: "2023-01-09T11:25:13Z" },
    { name: "e77", id: 2, updated_at: "2023-01-05T04:13:24Z" },
  ];

  it("json stringifies, escaped unless triple-stashed", () => {
    expect(render("{{json x}}|{{{json x}}}|{{json missing}}", { x: { a: 1, b: [true] } })).toBe('{&quot;a&quot;:1,&quot;b&quot;:[true]}|{"a":1,"b":[true]}|');
  });

  it("equals is a loose-equality block in the caller's context, and nothing else", () => {
    const template = "{{#equals kind 5}}five {{name}}{{else}}not {{name}}{{/equals}}";
    expect(render(template, { kind: "5", name: "Ada" })).toBe("five Ada");
    expect(render(template, { kind: 6, name: "Ada" })).toBe("not Ada");
    expect(render("{{#equals a b}}same{{/equals}}", {})).toBe("same");
    expect(() => render("{{equals 1 1}}", {})).toThrow(/block helper/);
    expect(() => render("{{#if (equals 1 1)}}x{{/if}}", {})).toThrow(/block helper/);
  });

  it("changes case as Novu does", () => {
    expect(
      render("<div>{{titlecase message}} and {{lowercase messageTwo}} and {{uppercase message}}</div>", { message: "hello world", messageTwo: "hEllo world" }),
    ).toBe("<div>Hello World and hello world and HELLO WORLD</div>");
    expect(render("{{titlecase 'mIxed  cASE\twords'}}", {})).toBe("Mixed  Case\twords");
    expect(render("[{{titlecase missing}}{{uppercase missing}}{{lowercase nothing}}]", { nothing: null })).toBe("[]");
    expect(render("{{uppercase n}} {{titlecase flag}} {{lowercase}}", { n: 42, flag: true })).toBe("42 True ");
  });

  it("pluralize gives the word alone, singular only for the number 1", () => {
    expect(
      render(
        '<div>{{dog_count}} {{pluralize dog_count "dog" "dogs"}} and {{sausage_count}} {{pluralize sausage_count "sausage" "sausages"}} for {{pluralize dog_count "him" "them"}}</div>',
        {
          dog_count: 1,
          sausage_count: 2,
        },
      ),
    ).toBe("<div>1 dog and 2 sausages for him</div>");
    expect(
      render("{{pluralize n 'item' 'items'}}|{{pluralize s 'item' 'items'}}|{{pluralize missing 'item' 'items'}}|{{pluralize 0 'item' 'items'}}", {
        n: 1,
        s: "1",
      }),
    ).toBe("item|items|items|items");
    expect(render("[{{pluralize 2 'item'}}]", {})).toBe("[]");
  });

  it("dateFormat takes date-fns patterns and renders in UTC", () => {
    expect(render("<div>{{dateFormat date 'EEEE, MMMM Do yyyy'}}</div>", { date: "2020-01-01" })).toBe("<div>Wednesday, January 1st 2020</div>");
    expect(render("{{dateFormat '2026-03-04T23:06:07-02:00' 'yyyy-MM-dd HH:mm:ss xxx'}}", {})).toBe("2026-03-05 01:06:07 +00:00");
    expect(render("{{dateFormat '2026-03-04T05:06:07Z' \"h:mm a, do 'of' LLLL\"}}", {})).toBe("5:06 AM, 4th of March");
  });

  it("dateFormat renders what it cannot read as given", () => {
    expect(render("<div>{{dateFormat date 'EEEE, MMMM Do yyyy'}}</div>", { date: "ABCD" })).toBe("<div>ABCD</div>");
    expect(
      render("[{{dateFormat missing 'yyyy'}}|{{dateFormat d}}|{{dateFormat ms 'yyyy'}}|{{dateFormat flag 'yyyy'}}]", {
        d: "2020-01-01",
        ms: 1_700_000_000_000,
        flag: true,
      }),
    ).toBe("[|2020-01-01|1700000000000|true]");
  });

  it("dateFormat fails the render on a pattern date-fns refuses, as Novu does", () => {
    expect(() => render("{{dateFormat '2020-01-01' 'yyyy-MM-dd Q q E e i'}}", {})).not.toThrow();
    expect(() => render("{{dateFormat '2020-01-01' 'yyyy-MM-dd hello'}}", {})).toThrow(RangeError);
  });

  it("groupBy groups by a property's value", () => {
    const names = [
      { name: "Name 1", age: "30" },
      { name: "Name 2", age: "31" },
      { name: "Name 1", age: "32" },
    ];
    expect(render("{{#each (groupBy names 'name')}}<h1>{{key}}</h1>{{#each items}}{{age}}-{{/each}}{{/each}}", { names })).toBe(
      "<h1>Name 1</h1>30-32-<h1>Name 2</h1>31-",
    );
  });

  it("groupBy orders keys as an object does, skips missing values, and takes anything", () => {
    const rows = [{ n: 10 }, { n: "b" }, { n: 2 }, { n: 0 }, { other: 1 }, null, "text", { n: 10 }, { n: "constructor" }];
    expect(render("{{#each (groupBy rows 'n')}}{{key}}:{{items.length}} {{/each}}", { rows })).toBe("2:1 10:2 b:1 constructor:1 ");
    expect(render("[{{#each (groupBy missing 'n')}}x{{/each}}{{#each (groupBy rows)}}x{{/each}}]", { rows })).toBe("[]");
  });

  it("unique lists a property's distinct values", () => {
    const names = [{ name: "dog" }, { name: "cat" }, { name: "dog" }];
    expect(render("<div>{{#each (unique names 'name')}}{{this}}-{{/each}}</div>", { names })).toBe("<div>dog-cat-</div>");
    const mixed = [{ name: "dog" }, { name: "" }, null, { other: 1 }, { name: "cat" }];
    expect(render("{{#each (unique mixed 'name')}}[{{this}}]{{/each}}", { mixed })).toBe("[dog][][cat]");
    expect(render("[{{unique missing 'name'}}]", {})).toBe("[]");
  });

  it("sortBy sorts by a property, leaving the payload's array as it was", () => {
    expect(render("{{#each (sortBy people 'updated_at')}}{{name}} - {{id}}{{/each}}", { people })).toBe("a75 - 1e77 - 2z32 - 3");
    expect(render("{{#each (sortBy people 'id')}}{{id}}{{/each}}|{{#each people}}{{id}}{{/each}}", { people })).toBe("123|132");
    expect(people.map((person) => person.id)).toEqual([1, 3, 2]);
  });

  it("sortBy without a property sorts as JavaScript does, and takes anything", () => {
    expect(render("{{#each (sortBy list)}}{{this}},{{/each}}", { list: [10, 9, "b", "a"] })).toBe("10,9,a,b,");
    // Items without the property compare equal to every other, as in Novu (which throws on a null one).
    expect(render("{{#each (sortBy list 'k')}}.{{/each}}", { list: [{ k: 2 }, null, { k: 1 }, {}] })).toBe("....");
    expect(render("[{{sortBy missing 'k'}}]", {})).toBe("[]");
  });

  it("numberFormat formats as Novu's", () => {
    expect(render('<div>{{numberFormat number decimalSep="," decimalLength="2" thousandsSep="|"}}</div>', { number: 1_000_000_000 })).toBe(
      "<div>1|000|000|000,00</div>",
    );
    expect(
      render(
        "{{numberFormat n}}|{{numberFormat s}}|{{numberFormat n decimalLength='0'}}|{{numberFormat n decimalLength=0}}|{{numberFormat neg decimalLength=3}}",
        { n: 1234567.891, s: "42.5", neg: -9876.54321 },
      ),
    ).toBe("1,234,567.89|42.50|1,234,568|1,234,567.89|-9,876.543");
  });

  it("numberFormat renders what is not a number as given", () => {
    expect(render('<div>{{numberFormat number decimalSep="," decimalLength="2" thousandsSep="|"}}</div>', { number: "Not a number" })).toBe(
      "<div>Not a number</div>",
    );
    expect(
      render("[{{numberFormat missing}}|{{numberFormat nothing}}|{{numberFormat empty}}|{{numberFormat flag}}|{{numberFormat partly}}]", {
        nothing: null,
        empty: "",
        flag: true,
        partly: "12abc",
      }),
    ).toBe("[|||true|12abc]");
  });

  const comparisons: [string, unknown, boolean][] = [
    ["gt", 6, true],
    ["gt", 5, false],
    ["gte", 5, true],
    ["gte", 4, false],
    ["lt", 4, true],
    ["lt", 5, false],
    ["lte", 5, true],
    ["lte", 6, false],
    ["eq", 5, true],
    ["eq", "5", false],
    ["eq", 6, false],
    ["ne", 6, true],
    ["ne", "5", true],
    ["ne", 5, false],
  ];

  it.each(comparisons)("{{#%s steps 5}} with steps %j renders its %s branch", (name, steps, holds) => {
    const template = `{{#${name} steps 5 }}<span>${name} block</span>{{else}}<span>else block</span>{{/${name}}}`;
    expect(render(template, { steps })).toBe(holds ? `<span>${name} block</span>` : "<span>else block</span>");
    expect(render(`{{${name} steps 5}}`, { steps })).toBe(String(holds));
    expect(render(`{{#if (${name} steps 5)}}yes{{else}}no{{/if}}`, { steps })).toBe(holds ? "yes" : "no");
  });

  it("renders comparison blocks in the caller's context", () => {
    expect(render("{{#gt n 3}}{{n}} new for {{subscriber.firstName}}{{else}}few{{/gt}}", { n: 4, subscriber: { firstName: "Ada" } })).toBe("4 new for Ada");
    expect(
      render("{{#each items}}{{#lte qty 1}}{{name}} (last){{else}}{{name}} x{{qty}}{{/lte}};{{/each}}", {
        items: [
          { name: "a", qty: 1 },
          { name: "b", qty: 3 },
        ],
      }),
    ).toBe("a (last);b x3;");
    expect(render("{{#gt n 3}}more{{/gt}}", { n: 1 })).toBe("");
  });

  it("compares as JavaScript does: strings by code units, anything else as numbers", () => {
    expect(render("{{gt '10' '9'}} {{gt n '9'}} {{lt missing 1}} {{gte missing 0}} {{gt missing -1}} {{gte nothing 0}}", { n: 10, nothing: null })).toBe(
      "false true false false false true",
    );
  });

  it("has no i18n helper, as Novu without translations", () => {
    expect(() => render("{{i18n 'greeting'}}", {})).toThrow(/Missing helper/);
  });
});

describe("limits", () => {
  const list = Array.from({ length: 2_000 }, (_, index) => index);
  const big = "x".repeat(1_000_000);

  it("ends loops over loops at the render's time limit, written as each or as sections, and renders again afterwards", () => {
    const started = performance.now();
    expect(() => renderHandlebars("{{#each list}}{{#each ../list}}{{#each ../../list}}.{{/each}}{{/each}}{{/each}}", { list }, 50)).toThrow(
      /took longer than a render may take/,
    );
    expect(() => renderHandlebars("{{#list}}{{#../list}}{{#../../list}}.{{/../../list}}{{/../list}}{{/list}}", { list }, 50)).toThrow(
      /took longer than a render may take/,
    );
    // Not the 8 billion iterations the loops hold; the bound is loose, for a busy machine.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(renderHandlebars("{{#each list}}{{#if @first}}{{this}}{{/if}}{{/each}}", { list }, 50)).toBe("0");
  });

  it("refuses a render that produces more than two million characters, with or without a loop", () => {
    expect(() => renderHandlebars("{{#each list}}{{../big}}{{/each}}", { list, big }, 1_000)).toThrow(/loops produce more than 2000000 characters/);
    expect(() => renderHandlebars("{{big}}".repeat(3), { big }, 1_000)).toThrow(/produces more than 2000000 characters/);
    expect(renderHandlebars("{{big}}".repeat(2), { big }, 1_000)).toHaveLength(2_000_000);
  });
});
