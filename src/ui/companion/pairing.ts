import { companionAddress, type Pairing } from "./client.ts";

/** Where the page keeps its pairing (this browser only; the token never leaves it but to the companion). */
export const PAIRING_KEY = "evalrx:companion";

/**
 * The pairing this browser stored, or undefined when there is none or the
 * entry is not one (a hand-edited or older entry unpairs, never breaks the app).
 *
 * @example readPairing('{"url":"http://127.0.0.1:7878","token":"abcdefghijklmnop"}') // { url: "http://127.0.0.1:7878", token: "abcdefghijklmnop" }
 */
export function readPairing(raw: string | null): Pairing | undefined {
  if (raw === null) return undefined;
  try {
    const value = JSON.parse(raw) as { url?: unknown; token?: unknown };
    if (typeof value?.url !== "string" || typeof value.token !== "string") return undefined;
    const url = companionAddress(value.url);
    if (typeof url !== "string" || !/^[A-Za-z0-9_-]{16,256}$/.test(value.token)) return undefined;
    return { url, token: value.token };
  } catch {
    return undefined;
  }
}
