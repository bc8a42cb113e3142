//! The egress boundary: which destinations our network may contact on a
//! partner's behalf (DESIGN §6). Pure policy here; the resolver actor and the
//! delivery client enforce it at connection time.

pub mod host;
pub mod policy;
pub mod resolver;
pub mod url_check;
