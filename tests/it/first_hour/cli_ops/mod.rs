//! The operator's command line beside a running `hookd serve` (the real
//! binary): what the CLI changes, the API and the engine see at once, and
//! it is audited `via: cli` (`endpoints`, `keys`, `partners`,
//! `deliveries`, `credentials`); keys are listed without secrets and a revoked one is
//! refused by the API's next request; not found exits 3, bad input 2, and
//! neither changes anything (`refusals`); a fresh database says nothing of
//! its migrations (`quiet`); every leaf command runs as its row of a table
//! says, and none is missing from it (`parity`, `parity_table`); an
//! endpoint's last error and circuit are shown as the API shows them
//! (`standing`); `event export` writes what the API's export streams
//! (`export`).

mod bed;
mod credentials;
mod deliveries;
mod endpoints;
mod export;
mod keys;
mod parity;
mod parity_table;
mod parity_world;
mod partners;
mod quiet;
mod refusals;
mod standing;
