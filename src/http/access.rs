//! How long this process answers "is this key valid, does this partner
//! exist" from memory (`known_keys`, `known_partners`), and how many it
//! holds. Changes other instances announce arrive sooner (`access_listener`).

use std::time::Duration;

/// How long an answer found in the database is trusted without asking
/// again. It bounds how late a change nobody announced is honoured: a key
/// revoked by plain SQL, by `hookd key revoke` beside a SQLite instance, or
/// while an instance's notification connection was down; a partner removed.
/// Short enough that an operator revoking a leaked key is not kept waiting;
/// long enough that a producer's steady stream asks the database once per
/// key and partner every few seconds instead of once per request.
pub const HELD_FOR: Duration = Duration::from_secs(5);

/// At most this many keys (and, apart, partners) are held. A miss past it
/// is answered by the database and not held; memory stays small (a few MB).
pub const HELD_AT_MOST: usize = 10_000;
