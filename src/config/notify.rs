//! The `[smtp]` and `[notify]` sections: how endpoint notices are mailed,
//! and the operator's own channels, which receive every partner's notices.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, duration, invalid};
use crate::secret::Secret;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSmtp {
    url: String,
    from: String,
    timeout: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNotify {
    operator_url: String,
    operator_secret: String,
    operator_email: String,
}

/// The mail server notices go through; absent: nothing is mailed.
#[derive(Debug, Clone)]
pub struct SmtpConfig {
    /// `smtps://` (TLS from the start), `smtp://…?tls=required` (STARTTLS
    /// or nothing), plain `smtp://` (unencrypted), with optional `user:password@`.
    pub url: String,
    pub from: lettre::message::Mailbox,
    pub timeout: Duration,
}

#[derive(Debug, Clone, Default)]
pub struct NotifyConfig {
    /// The operator's notification URL and the secret it is signed with.
    pub operator_url: Option<(String, Secret)>,
    pub operator_email: Option<lettre::Address>,
}

impl RawSmtp {
    pub(super) fn validate(self) -> Result<Option<SmtpConfig>, ConfigError> {
        if self.url.is_empty() {
            return Ok(None);
        }
        let parsed = url::Url::parse(&self.url)
            .map_err(|e| invalid("smtp.url", format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "smtp" | "smtps") {
            return Err(invalid(
                "smtp.url",
                "must start with smtps:// (TLS) or smtp:// (add ?tls=required for STARTTLS)",
            ));
        }
        lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::from_url(&self.url)
            .map_err(|e| invalid("smtp.url", e.to_string()))?;
        let from = self.from.parse().map_err(|e| {
            invalid(
                "smtp.from",
                format!("not a mailbox like `hookd <hookd@example.com>`: {e}"),
            )
        })?;
        Ok(Some(SmtpConfig {
            url: self.url,
            from,
            timeout: duration("smtp.timeout", &self.timeout)?,
        }))
    }
}

impl RawNotify {
    pub(super) fn validate(self, smtp: bool) -> Result<NotifyConfig, ConfigError> {
        let operator_url = match (
            self.operator_url.is_empty(),
            self.operator_secret.is_empty(),
        ) {
            (true, true) => None,
            (true, false) => {
                return Err(invalid(
                    "notify.operator_secret",
                    "is set but notify.operator_url is not",
                ));
            }
            (false, true) => {
                return Err(invalid(
                    "notify.operator_secret",
                    "is required with notify.operator_url: a whsec_… secret the operator's receiver verifies with",
                ));
            }
            (false, false) => {
                let secret = Secret::parse(&self.operator_secret).map_err(|e| {
                    invalid(
                        "notify.operator_secret",
                        format!("not a whsec_ secret: {e}"),
                    )
                })?;
                Some((self.operator_url, secret))
            }
        };
        let operator_email = if self.operator_email.is_empty() {
            None
        } else if !smtp {
            return Err(invalid(
                "notify.operator_email",
                "needs smtp.url: there is no mail server to send through",
            ));
        } else {
            Some(self.operator_email.parse().map_err(|e| {
                invalid(
                    "notify.operator_email",
                    format!("not an email address: {e}"),
                )
            })?)
        };
        Ok(NotifyConfig {
            operator_url,
            operator_email,
        })
    }
}
