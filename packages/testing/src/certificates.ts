import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SelfSigned {
  /** The certificate, PEM. */
  certificate: string;
  /** Its private key, PEM. */
  key: string;
}

/**
 * A self-signed certificate for `commonName`, valid a day, made by openssl: `keyType` is an
 * openssl -newkey argument ("rsa:2048"), `options` more arguments of `openssl req` (-addext …).
 */
export function selfSignedCertificate(commonName: string, keyType = "rsa:2048", options: readonly string[] = []): SelfSigned {
  const directory = mkdtempSync(join(tmpdir(), "notify-certificate-"));
  try {
    const [keyPath, certificatePath] = [join(directory, "key.pem"), join(directory, "cert.pem")];
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", keyType, ...options, "-nodes", "-days", "1", "-subj", `/CN=${commonName}`, "-keyout", keyPath, "-out", certificatePath],
      { stdio: "ignore" },
    );
    return { certificate: readFileSync(certificatePath, "utf8"), key: readFileSync(keyPath, "utf8") };
  } finally {
    rmSync(directory, { recursive: true });
  }
}
