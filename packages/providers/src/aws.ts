import aws4 from "aws4";

/**
 * The headers of a POST to `url` signed with Signature Version 4, `headers` among them. Host and
 * the length are left to the connection, which sends the same values that were signed.
 */
export function sigV4Headers(
  url: URL,
  request: { service: string; region: string; body: string; headers: Record<string, string> },
  credentials: { accessKeyId: string; secretAccessKey: string },
): Record<string, string> {
  const signed = aws4.sign({ host: url.host, path: `${url.pathname}${url.search}`, method: "POST", ...request }, credentials);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) {
    if (value !== undefined && !/^(host|content-length)$/i.test(name)) headers[name.toLowerCase()] = String(value);
  }
  return headers;
}
