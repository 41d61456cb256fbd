import { describe, expect, it } from "vitest";
import { normalizeOrigin, originAllowed } from "../src/cors.js";

describe("Inbox origins", () => {
  it("normalizes origins as browsers send them", () => {
    expect(normalizeOrigin("https://App.Example.com")).toBe("https://app.example.com");
    expect(normalizeOrigin("https://app.example.com:443/")).toBe("https://app.example.com");
    expect(normalizeOrigin("http://localhost:5173")).toBe("http://localhost:5173");
    expect(normalizeOrigin("null")).toBe("null");
    expect(normalizeOrigin("app.example.com")).toBeUndefined();
    expect(normalizeOrigin("")).toBeUndefined();
  });

  it("allows any origin when none is configured, else only the configured ones", () => {
    expect(originAllowed({ inboxOrigins: null }, "https://anything.example")).toBe(true);
    const configured = { inboxOrigins: ["https://app.example.com", "http://localhost:5173"] };
    expect(originAllowed(configured, "https://app.example.com")).toBe(true);
    expect(originAllowed(configured, "https://APP.example.com")).toBe(true);
    expect(originAllowed(configured, "http://localhost:5173")).toBe(true);
    expect(originAllowed(configured, "http://app.example.com")).toBe(false);
    expect(originAllowed(configured, "https://app.example.com.evil.example")).toBe(false);
    expect(originAllowed(configured, "null")).toBe(false);
    expect(originAllowed({ inboxOrigins: [] }, "https://app.example.com")).toBe(false);
  });
});
