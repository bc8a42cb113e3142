//! What the browser-facing pages share (the operator dashboard and the
//! partner portal): headers that forbid script and framing, signed session
//! cookies and CSRF tokens for form posts (the cross-site check is
//! `http::origin`).

pub mod chrome;
pub mod csrf;
pub mod docs;
pub mod home;
pub mod seal;
pub mod session;
pub mod when;
