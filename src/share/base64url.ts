import { ShareError } from "./errors.ts";

/**
 * What are these bytes as URL-safe text? Base64 with `-` and `_` for `+` and
 * `/` and no `=` padding (RFC 4648 §5), so the text travels in a URL
 * fragment untouched.
 *
 * @example toBase64Url(new Uint8Array([251, 255])) // "-_8"
 */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, Math.min(i + 0x8000, bytes.length)));
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const ALPHABET = /[^A-Za-z0-9_-]/;

/**
 * The bytes of base64url text (the inverse of `toBase64Url`); throws a
 * `ShareError` naming the first character that is not base64url, or a length
 * no encoding produces.
 *
 * @example fromBase64Url("-_8") // Uint8Array [251, 255]
 */
export function fromBase64Url(text: string): Uint8Array {
  const bad = ALPHABET.exec(text);
  if (bad)
    throw new ShareError(
      "not-base64",
      `the link's data has ${JSON.stringify(bad[0])} at character ${bad.index + 1}, which base64url does not use (A–Z, a–z, 0–9, - and _): the link was cut or changed on the way`,
    );
  if (text.length % 4 === 1)
    throw new ShareError(
      "not-base64",
      `the link's data is ${text.length} characters long, a length base64url never has: the link was cut on the way`,
    );
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
