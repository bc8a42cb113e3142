/** `verify` on the Standard Webhooks test vector, and on what it must refuse. */

import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http";
import { test } from "node:test";

import { Rejected, Secret, verify } from "./verify.js";

// The example in the Standard Webhooks specification.
const secret = Secret.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const timestamp = 1614265330;
const body = Buffer.from('{"test": 2432232314}');
const signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

function headers(sig: string, ts = timestamp): IncomingHttpHeaders {
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sig };
}

function refused(run: () => unknown, status = 401): void {
  assert.throws(run, (e: unknown) => e instanceof Rejected && e.status === status);
}

test("the specification's example verifies and returns its id", () => {
  assert.equal(verify([secret], body, headers(signature), timestamp), id);
});

test("any v1 entry and any secret may match", () => {
  const other = Secret.parse("whsec_" + Buffer.alloc(24, 7).toString("base64"));
  const sig = `v1a,x v2,${signature.slice(3)} v1,bm90IGl0 ${signature}`;
  assert.equal(verify([other, secret], body, headers(sig), timestamp), id);
});

test("a changed body, another secret or only another scheme is refused", () => {
  refused(() => verify([secret], Buffer.from('{"test": 2432232315}'), headers(signature), timestamp));
  const other = Secret.parse("whsec_" + Buffer.alloc(24, 7).toString("base64"));
  refused(() => verify([other], body, headers(signature), timestamp));
  refused(() => verify([secret], body, headers(signature.replace("v1,", "v2,")), timestamp));
  refused(() => verify([secret], body, { "webhook-id": id, "webhook-timestamp": String(timestamp) }, timestamp));
});

test("a timestamp more than 5 minutes off either way is refused", () => {
  assert.equal(verify([secret], body, headers(signature), timestamp + 300), id);
  refused(() => verify([secret], body, headers(signature), timestamp + 301));
  refused(() => verify([secret], body, headers(signature), timestamp - 301));
  refused(() => verify([secret], body, headers(signature, Number.NaN), timestamp));
});

test("a secret that is not whsec_ and base64 is a configuration error", () => {
  assert.throws(() => Secret.parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
  assert.throws(() => Secret.parse("whsec_not*base64"));
});
