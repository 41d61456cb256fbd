// `pnpm bench`: runs every bench/*.mjs (or the ones named: pnpm bench messages). Each module's
// default export is `async ({ report }) => void`; it measures its own floors in the same run, since
// absolute numbers move a lot between runs on shared machines, and reports ratios.
import { readdir } from "node:fs/promises";

const dir = new URL("../bench/", import.meta.url);
const wanted = process.argv.slice(2);
const modules = (await readdir(dir)).filter((file) => file.endsWith(".mjs") && (wanted.length === 0 || wanted.includes(file.replace(/\.mjs$/, ""))));

const rows = [];
/** One line per figure: what, our value, the floor it is compared with, the ratio and the target. */
const report = ({ name, value, unit, floor, target }) => {
  const ratio = floor ? value / floor : undefined;
  rows.push({ name, value, unit, floor, ratio, target });
  const parts = [`${name}: ${value.toFixed(2)} ${unit}`];
  if (floor !== undefined) parts.push(`floor ${floor.toFixed(2)} ${unit}`, `ratio ${ratio.toFixed(2)}`);
  if (target) parts.push(`target ${target}`);
  console.log(parts.join(" | "));
};

for (const file of modules.sort()) {
  console.log(`\n## ${file}`);
  const { default: run } = await import(new URL(file, dir).href);
  await run({ report });
}
console.log(`\n${rows.length} figures`);
