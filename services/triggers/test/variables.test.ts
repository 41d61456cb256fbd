import { create } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { idFromSlug, slugify, workflowSlug } from "../src/workflows/slug.js";
import { extractVariables } from "../src/workflows/variables.js";

const { HANDLEBARS, LIQUID } = workflowsV1.TemplateEngine;

const step = (init: Parameters<typeof create<typeof workflowsV1.StepSchema>>[1]) => create(workflowsV1.StepSchema, init);

describe("extractVariables", () => {
  it("collects every template field, payload filter fields, the delay path and the digest key, without system variables", () => {
    const steps = [
      step({
        template: {
          type: StepType.EMAIL,
          subject: "{{subject}} for {{subscriber.firstName}}",
          content: { case: "blocks", value: { blocks: [{ type: "button", content: "{{label}}", url: "{{link}}" }] } },
          preheader: "{{teaser}}",
        },
        filters: [
          {
            type: "STATEMENT",
            value: "AND",
            children: [
              { field: "plan", value: "pro", operator: "EQUAL", on: "payload" },
              { field: "email", value: "x", operator: "EQUAL", on: "subscriber" },
            ],
          },
        ],
      }),
      step({ template: { type: StepType.DELAY }, metadata: { type: "scheduled", delayPath: "sendAt" } }),
      step({ template: { type: StepType.DIGEST }, metadata: { type: "regular", digestKey: "postId" } }),
      step({
        template: {
          type: StepType.IN_APP,
          content: { case: "text", value: "{{actor.firstName}} {{step.total_count}} {{tenant.name}} {{count}}" },
          cta: { data: { url: "/posts/{{postId}}" }, action: { buttons: [{ type: "primary", content: "{{accept}}" }] } },
        },
        variants: [step({ template: { type: StepType.IN_APP, content: { case: "text", value: "{{variantOnly}}" } } })],
      }),
      step({ template: { type: StepType.SMS, content: { case: "text", value: "{{code}}" } } }),
    ];
    const extracted = extractVariables(steps, HANDLEBARS);
    expect(extracted.errors).toEqual({});
    expect(extracted.variables).toEqual(["subject", "label", "link", "teaser", "plan", "sendAt", "postId", "count", "accept", "variantOnly", "code"]);
    expect(extracted.subscriberVariables).toEqual(["phone", "email"]);
  });

  it("reports each template that does not parse at its field path", () => {
    const extracted = extractVariables(
      [
        step({ template: { type: StepType.SMS, content: { case: "text", value: "fine {{a}}" } } }),
        step({ template: { type: StepType.PUSH, content: { case: "text", value: "ok" }, title: "{{#if x}}" } }),
      ],
      HANDLEBARS,
    );
    expect(Object.keys(extracted.errors)).toEqual(["steps[1].template.title"]);
    expect(extracted.errors["steps[1].template.title"]).toMatchObject({ value: "{{#if x}}" });
    expect(extracted.errors["steps[1].template.title"]!.messages[0]).toMatch(/^title is not a valid template: Parse error/);
  });

  it("reports a filter value that does not parse at its path, and lists nothing a filter value reads", () => {
    const filter = (value: string) => ({ type: "STATEMENT", value: "AND", children: [{ field: "plan", value, operator: "EQUAL", on: "payload" }] });
    const extracted = extractVariables(
      [
        step({ template: { type: StepType.SMS, content: { case: "text", value: "{{code}}" } }, filters: [filter("{{minimum}}")] }),
        step({
          template: { type: StepType.IN_APP, content: { case: "text", value: "hi" } },
          filters: [filter("pro"), filter("{{#if x}}")],
        }),
      ],
      HANDLEBARS,
    );
    expect(extracted.variables).toEqual(["code", "plan"]);
    expect(Object.keys(extracted.errors)).toEqual(["steps[1].filters[1].children[0].value"]);
    expect(extracted.errors["steps[1].filters[1].children[0].value"]).toMatchObject({ value: "{{#if x}}" });
    expect(extracted.errors["steps[1].filters[1].children[0].value"]!.messages[0]).toMatch(/^value is not a valid template: Parse error/);
  });

  it("reads liquid templates as liquid and v2 conditions' variables: filters are not variables, steps.* is the engine's own", () => {
    const extracted = extractVariables(
      [
        step({ template: { type: StepType.DIGEST }, stepId: "digest-step", metadata: { type: "regular", digestKey: "postId" } }),
        step({
          template: {
            type: StepType.EMAIL,
            subject: "{{ payload.title | upcase }} for {{ subscriber.firstName }}",
            content: {
              case: "text",
              value: "{{ steps.digest-step.eventCount }} {% for event in steps.digest-step.events %}{{ event.payload.name }}{% endfor %}",
            },
          },
          conditions: { and: [{ "==": [{ var: "payload.plan" }, "pro"] }, { ">": [{ var: ["steps.digest-step.eventCount", 0] }, 1] }] },
        }),
        step({ template: { type: StepType.SMS, content: { case: "text", value: "{{ payload.code | json }} {% if payload.x %}" } } }),
      ],
      LIQUID,
    );
    expect(extracted.variables).toEqual(["postId", "payload.title", "payload.plan"]);
    expect(Object.keys(extracted.errors)).toEqual(["steps[2].template.content"]);
    expect(extracted.errors["steps[2].template.content"]!.messages[0]).toMatch(/^content is not a valid template: tag {% if payload.x %} not closed/);
  });
});

describe("environment variables", () => {
  it("are read by liquid templates and conditions as env.KEY, apart from the payload's variables", () => {
    const extracted = extractVariables(
      [
        step({
          template: { type: StepType.IN_APP, content: { case: "text", value: "{{ env.BASE_URL }}/orders/{{ payload.id }} {{ env.BASE_URL | upcase }}" } },
          conditions: { "==": [{ var: "env.REGION" }, "eu"] },
        }),
        step({ template: { type: StepType.SMS, content: { case: "text", value: "{{ env }}{{ env.TOKEN.part }}" } } }),
      ],
      LIQUID,
    );
    expect(extracted.variables).toEqual(["payload.id"]);
    expect(extracted.environmentVariables).toEqual(["BASE_URL", "REGION", "TOKEN"]);
  });

  it("are not read by handlebars templates, where env is a payload field", () => {
    const extracted = extractVariables([step({ template: { type: StepType.SMS, content: { case: "text", value: "{{env.BASE_URL}}" } } })], HANDLEBARS);
    expect([extracted.variables, extracted.environmentVariables]).toEqual([["env.BASE_URL"], []]);
  });
});

describe("slugs", () => {
  it("slugifies names as trigger identifiers", () => {
    expect(slugify("Welcome Email & Onboarding")).toBe("welcome-email-and-onboarding");
    expect(slugify("fooBar APIs Déjà vu!")).toBe("foo-bar-apis-deja-vu");
    expect(slugify("!!!")).toBe("workflow");
    // Transliterated, and contractions joined, as Novu's slugs are.
    expect(["User's Welcome Email", "Straße", "Ørsted news", "Привет мир", "Welcome 🦄"].map(slugify)).toEqual([
      "users-welcome-email",
      "strasse",
      "orsted-news",
      "privet-mir",
      "welcome-unicorn",
    ]);
  });

  it("round-trips the id through the slug and rejects what is not one", () => {
    const id = "65a1b2c3d4e5f60718293a4b";
    const slug = workflowSlug("Welcome Email", id);
    expect(slug).toMatch(/^welcome-email_wf_[0-9A-Za-z]+$/);
    expect(idFromSlug(slug)).toBe(id);
    expect(idFromSlug(workflowSlug("x", "000000000000000000000001"))).toBe("000000000000000000000001");
    expect(idFromSlug("plain-identifier")).toBeUndefined();
    expect(idFromSlug("x_wf_")).toBeUndefined();
    expect(idFromSlug("x_wf_not-base62")).toBeUndefined();
    expect(idFromSlug(`x_wf_${"z".repeat(20)}`)).toBeUndefined();
  });
});
