// pg exports lib/utils but types only its root: the conversion of a value to the text pg sends.
declare module "pg/lib/utils.js" {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
