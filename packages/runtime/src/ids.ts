import { randomBytes } from "node:crypto";

const processRandom = randomBytes(5);
let counter = randomBytes(3).readUIntBE(0, 3);

/**
 * A 24-hex id in MongoDB ObjectId layout (4-byte seconds, 5 random bytes, 3-byte counter), so
 * clients can tell our `_id`s from caller-chosen identifiers as they can with Novu's.
 */
export function objectId(now: number = Date.now()): string {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  processRandom.copy(bytes, 4);
  counter = (counter + 1) % 0x1000000;
  bytes.writeUIntBE(counter, 9, 3);
  return bytes.toString("hex");
}

export const OBJECT_ID = /^[0-9a-f]{24}$/;

export function isObjectId(value: string): boolean {
  return OBJECT_ID.test(value);
}
