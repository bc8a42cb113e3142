//! What one `hookd serve` runs: everything (the default), only the API and
//! the dashboard, or only fanout and delivery. Split roles let delivery run
//! in a network segment that reaches receivers but not the control plane,
//! and the API in one that reaches no receiver. Pure.

use std::{fmt, str::FromStr};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// The API, the dashboard, the portal, fanout and delivery.
    #[default]
    All,
    /// The API, the dashboard, the portal and the docs; events are
    /// committed and their deliveries written, but this instance takes no
    /// endpoint lease, so it sends nothing to a receiver.
    Api,
    /// Fanout and delivery; the listeners answer `/healthz`, `/readyz` and
    /// `/metrics` only.
    Delivery,
}

impl Role {
    pub const NAMES: [&'static str; 3] = ["all", "api", "delivery"];

    /// Whether its listeners serve the API, the dashboard and the portal.
    pub fn serves_api(self) -> bool {
        self != Role::Delivery
    }

    /// Whether it takes endpoint leases, and so sends deliveries and mail.
    pub fn delivers(self) -> bool {
        self != Role::Api
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::All => "all",
            Role::Api => "api",
            Role::Delivery => "delivery",
        }
    }

    /// Whether the role can run on this database: a split role needs other
    /// processes on the same database, which an SQLite file does not take
    /// (one hookd holds it), so there it is refused with the reason.
    pub fn fits(self, sqlite: bool) -> Result<(), String> {
        if self == Role::All || !sqlite {
            return Ok(());
        }
        let missing = match self {
            Role::Api => "no other process could deliver its events",
            _ => "no other process could serve the API",
        };
        Err(format!(
            "role `{}` needs PostgreSQL: one hookd holds an SQLite database, so {missing}; \
             use role `all` on SQLite",
            self.name()
        ))
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Role, String> {
        match s {
            "all" => Ok(Role::All),
            "api" => Ok(Role::Api),
            "delivery" => Ok(Role::Delivery),
            other => Err(format!(
                "`{other}` is not a role; expected one of {}",
                Role::NAMES.join(", ")
            )),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_role() {
        for name in Role::NAMES {
            assert_eq!(name.parse::<Role>().unwrap().name(), name);
        }
    }

    #[test]
    fn an_unknown_role_is_refused_with_the_choices() {
        let err = "worker".parse::<Role>().unwrap_err();
        assert!(
            err.contains("`worker`") && err.contains("all, api, delivery"),
            "{err}"
        );
    }

    #[test]
    fn the_api_role_serves_but_does_not_deliver_and_the_delivery_role_the_reverse() {
        assert!(Role::Api.serves_api() && !Role::Api.delivers());
        assert!(!Role::Delivery.serves_api() && Role::Delivery.delivers());
        assert!(Role::All.serves_api() && Role::All.delivers());
    }

    #[test]
    fn a_split_role_on_sqlite_is_refused_and_on_postgres_it_fits() {
        assert!(Role::All.fits(true).is_ok());
        for role in [Role::Api, Role::Delivery] {
            assert!(role.fits(false).is_ok());
            let err = role.fits(true).unwrap_err();
            assert!(err.contains("needs PostgreSQL"), "{err}");
        }
    }
}
