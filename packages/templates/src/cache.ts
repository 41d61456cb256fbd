/** How many parsed templates each engine keeps: the templates in use, not every one ever seen. */
const MAX_CACHED = 1_000;

/** `parse` memoised per template text, forgetting the oldest entry once full. */
export function cachedParser<Parsed>(parse: (template: string) => Parsed): (template: string) => Parsed {
  const parsed = new Map<string, Parsed>();
  return (template) => {
    const cached = parsed.get(template);
    if (cached !== undefined) return cached;
    const fresh = parse(template);
    if (parsed.size >= MAX_CACHED) parsed.delete(parsed.keys().next().value as string);
    parsed.set(template, fresh);
    return fresh;
  };
}
