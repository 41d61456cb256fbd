/**
 * Characters one render may produce. A real message is far below it (mail clients clip HTML
 * past about a hundred kilobytes), a loop over a loop far above; and each subscriber's message
 * is stored, so what one render may make, a fan-out writes once per subscriber.
 */
export const MAX_RENDER_OUTPUT = 2_000_000;

/**
 * A render's output, refused when longer than MAX_RENDER_OUTPUT. Printing a large payload value
 * many times needs no loop; the output's length is known before its parts are joined into one text.
 */
export function boundedOutput(output: string): string {
  if (output.length > MAX_RENDER_OUTPUT) throw new Error(`the template produces more than ${MAX_RENDER_OUTPUT} characters`);
  return output;
}
