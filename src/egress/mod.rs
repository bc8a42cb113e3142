//! The egress boundary: which destinations our network may contact on a
//! partner's behalf (DESIGN §6). Pure policy here; the resolver actor and the
//! delivery client enforce it at connection time. A refusal tells the partner
//! what is wrong with the URL; `remedy` tells the operator which settings
//! would allow it.
//!
//! Attacks tested on the real delivery path (`tests/it/egress.rs`,
//! `tests/it/delivery.rs`), each on SQLite and PostgreSQL:
//! - DNS rebinding: a name answered first with an allowed address, then a
//!   forbidden one (TTL 0): the forbidden address is never connected to, and
//!   when the name moves to another allowed address the kept-alive connection
//!   to the old one is not reused.
//! - A name resolving to one allowed and one forbidden address is refused at
//!   registration and blocked at delivery, with neither address contacted.
//! - Loopback in every spelling (`127.1`, `2130706433`, `0x7f000001`,
//!   `017700000001`, `0177.0.0.1`, `[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`,
//!   `%31%32%37.0.0.1`, `127.0.0.1.`, `[::1]`, `[::127.0.0.1]`,
//!   `[64:ff9b::7f00:1]`): refused at registration, and never contacted from
//!   an endpoint row written straight into the database.
//! - Private, CGNAT, link-local, metadata (including `168.63.129.16` and
//!   `fd00:ec2::254`), multicast and benchmarking addresses refused at
//!   registration; user-info refused.
//! - A 302 to an internal address: the redirect is recorded, never followed.
//! - HTTPS to a pinned address: SNI and certificate checks use the URL's
//!   hostname; a certificate for another name fails as `tls`.
//! - Stalled headers, a stalled body and dropped connections are cut off by
//!   the request deadline and retried.
//! - An unknown name fails as `dns` and is retried; nothing falls back to the
//!   system resolver.
//! - Through the egress proxy (`tests/it/egress/proxy.rs`, a real
//!   tinyproxy): the proxy is asked to CONNECT only to checked addresses,
//!   never a name; a rebound name never reaches it; a redirect is not
//!   followed through it; its own address is exempt only as the proxy.

pub mod host;
pub mod policy;
pub mod remedy;
pub mod resolver;
pub mod url_check;
