/**
 * Standard Webhooks verification with `node:crypto`: the signature over the
 * raw body bytes, any `v1,` entry, any configured secret, compared in
 * constant time; the timestamp at most 5 minutes off.
 */

import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** How far `webhook-timestamp` may be from this machine's clock. */
const TOLERANCE_S = 5 * 60;

/** The request is not an event from hookd: answered 4xx, nothing stored. */
export class Rejected extends Error {
  constructor(
    readonly status: number,
    reason: string,
  ) {
    super(reason);
    this.name = "Rejected";
  }
}

/** An endpoint secret, `whsec_` and the base64 of its key. */
export class Secret {
  private constructor(readonly key: Buffer) {}

  static parse(text: string): Secret {
    const base64 = text.startsWith("whsec_") ? text.slice("whsec_".length) : null;
    // Buffer.from(…, "base64") skips characters it does not know, so a typo
    // would quietly make another key: check the alphabet first.
    if (base64 === null || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
      throw new Error("each secret is whsec_ followed by base64, as hookd shows it");
    }
    return new Secret(Buffer.from(base64, "base64"));
  }
}

/** The one value of a header, if it was sent. */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Checks the signature and the timestamp of a request; returns its
 * `webhook-id`, or throws `Rejected`.
 *
 * Call it with the body exactly as it arrived: parsing and re-serialising
 * the JSON changes the bytes that were signed.
 */
export function verify(
  secrets: readonly Secret[],
  body: Buffer,
  headers: IncomingHttpHeaders,
  nowS: number = Math.floor(Date.now() / 1000),
): string {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new Rejected(401, "missing webhook-id, webhook-timestamp or webhook-signature");
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new Rejected(401, "webhook-timestamp is not Unix seconds");
  }
  // A captured request replayed later is refused here (and one signed far in
  // the future, which would otherwise stay replayable for as long).
  if (Math.abs(nowS - Number(timestamp)) > TOLERANCE_S) {
    throw new Rejected(401, "webhook-timestamp is more than 5 minutes off");
  }

  // The sender may list several entries (`v1,… v1,…`): during a rotation
  // hookd signs with the old and the new secret. One match is enough.
  const offered = signatures
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice("v1,".length)));
  for (const secret of secrets) {
    const expected = Buffer.from(
      createHmac("sha256", secret.key).update(`${id}.${timestamp}.`).update(body).digest("base64"),
    );
    // timingSafeEqual wants equal lengths; the length of a valid signature
    // is public (44 characters), so checking it first leaks nothing.
    if (offered.some((given) => given.length === expected.length && timingSafeEqual(given, expected))) {
      return id;
    }
  }
  throw new Rejected(401, "no v1 signature matched");
}
