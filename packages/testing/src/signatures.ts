import { createHash, createHmac } from "node:crypto";
import type { Received } from "./receivers.js";

export interface SigV4 {
  accessKeyId: string;
  region: string;
  service: string;
  signedHeaders: string[];
}

/**
 * Checks a request's AWS Signature Version 4 Authorization header as AWS would, independently of
 * the signer the sender used (requests without a query string, as notify's AWS providers send).
 * Throws when the header is not SigV4 or the signature is not the one the secret key makes.
 */
export function verifySigV4(request: Received, secretKey: string): SigV4 {
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
    String(request.headers.authorization),
  );
  if (!match) throw new Error(`not a SigV4 Authorization: ${request.headers.authorization}`);
  const [, accessKeyId = "", date = "", region = "", service = "", signedHeaders = "", signature = ""] = match;
  const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
  const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();
  const canonicalHeaders = signedHeaders
    .split(";")
    .map((name) => `${name}:${String(request.headers[name]).trim()}\n`)
    .join("");
  // The query as SigV4 signs it: each name and value percent-encoded as RFC 3986 says, in order.
  const [path = "", query = ""] = request.url.split("?");
  const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonicalQuery = [...new URLSearchParams(query)]
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .sort()
    .join("&");
  const canonicalRequest = [request.method, path, canonicalQuery, canonicalHeaders, signedHeaders, sha256(request.raw)].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", String(request.headers["x-amz-date"]), `${date}/${region}/${service}/aws4_request`, sha256(canonicalRequest)].join(
    "\n",
  );
  const key = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, date), region), service), "aws4_request");
  const expected = createHmac("sha256", key).update(stringToSign).digest("hex");
  if (expected !== signature) throw new Error(`SigV4 signature mismatch: got ${signature}, the secret key makes ${expected}`);
  return { accessKeyId, region, service, signedHeaders: signedHeaders.split(";") };
}
