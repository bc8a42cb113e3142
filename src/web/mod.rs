//! What the browser-facing pages share (the operator dashboard and the
//! partner portal): headers that forbid script and framing, signed session
//! cookies, the cross-site check and CSRF tokens for form posts.

pub mod chrome;
pub mod csrf;
pub mod docs;
pub mod home;
pub mod origin;
pub mod session;
