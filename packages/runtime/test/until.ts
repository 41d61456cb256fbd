/** Polls `condition` every 20 ms until it holds; fails after `ms`. (@notify/testing builds on this package, so its helpers are out of reach here.) */
export async function until(condition: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
