/** Characters one render may produce: a real message is far below it, a loop over a loop far above. */
export const MAX_RENDER_OUTPUT = 10_000_000;

/**
 * A render's output, refused when longer than MAX_RENDER_OUTPUT. Printing a large payload value
 * many times needs no loop; the output's length is known before its parts are joined into one text.
 */
export function boundedOutput(output: string): string {
  if (output.length > MAX_RENDER_OUTPUT) throw new Error(`the template produces more than ${MAX_RENDER_OUTPUT} characters`);
  return output;
}
