//! Event data the bundled catalog accepts, for tests that publish the real
//! event types rather than made-up ones.

use serde_json::{Value, json};

/// The data of a `usage.finalized` event of customer `cus_204` in USD:
/// `final_cost`, `usage_id`, and the tokens `(in, out)`.
pub fn usage_finalized(final_cost: &str, usage_id: &str, tokens: (u64, u64)) -> Value {
    json!({"customer_id": "cus_204", "currency": "USD", "final_cost": final_cost,
        "usage_id": usage_id, "model": "gpt-4o-mini", "input_tokens": tokens.0, "output_tokens": tokens.1})
}
