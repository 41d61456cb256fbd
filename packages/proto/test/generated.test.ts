import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const checkedIn = join(packageDir, "src/gen");
const fresh = mkdtempSync(join(tmpdir(), "notify-proto-"));
afterAll(() => rmSync(fresh, { recursive: true, force: true }));

function files(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

it("checked-in generated code matches what buf generates from proto/", () => {
  const template = JSON.stringify({
    version: "v2",
    inputs: [{ directory: "../../proto" }],
    plugins: [{ local: "protoc-gen-es", out: fresh, opt: ["target=ts", "import_extension=js"] }],
  });
  execFileSync("pnpm", ["exec", "buf", "generate", "--template", template], { cwd: packageDir, stdio: "pipe" });
  expect(files(checkedIn)).toEqual(files(fresh));
  for (const file of files(fresh)) {
    expect(readFileSync(join(checkedIn, file), "utf8"), `${file} is stale: run pnpm generate`).toBe(readFileSync(join(fresh, file), "utf8"));
  }
});

// `pnpm test` regenerates before it builds, so the files on disk are always fresh here: what
// must also hold is that git has them, i.e. that a clean clone builds the same code.
it("generated code on disk is what git holds", () => {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: packageDir, encoding: "utf8" });
  try {
    git("rev-parse", "--is-inside-work-tree");
  } catch {
    return; // not a checkout (e.g. an unpacked release): nothing to compare with
  }
  const unstaged = git("diff", "--name-only", "--", "src/gen") + git("ls-files", "--others", "--exclude-standard", "--", "src/gen");
  expect(unstaged.trim(), "add the regenerated code to git").toBe("");
});
