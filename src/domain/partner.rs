//! A partner's name and chosen id, as they may be stored: one rule for the
//! API and the CLI alike.

/// What is wrong with a partner's name or id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartnerFieldError {
    #[error("name must be 1 to 200 characters")]
    NameLength,
    #[error("name must not contain control characters")]
    NameControl,
    #[error("id must be 1 to 128 letters, digits, '_' or '-'")]
    Id,
    #[error("an email address has at most 254 characters")]
    EmailLength,
    #[error("not an email address like ops@example.com: {0}")]
    Email(String),
}

/// The name, trimmed: 1 to 200 characters, none of them control characters
/// (a NUL or a terminal escape would reach logs, pages and terminals).
pub fn name(text: &str) -> Result<&str, PartnerFieldError> {
    let name = text.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(PartnerFieldError::NameLength);
    }
    if name.chars().any(char::is_control) {
        return Err(PartnerFieldError::NameControl);
    }
    Ok(name)
}

/// A partner id chosen by the operator: 1 to 128 of `[A-Za-z0-9_-]`.
pub fn id(text: &str) -> Result<&str, PartnerFieldError> {
    let valid = !text.is_empty()
        && text.len() <= 128
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    valid.then_some(text).ok_or(PartnerFieldError::Id)
}

/// A notification email address, as it is stored: at most 254 characters,
/// parsed as SMTP would take it.
pub fn notification_email(text: &str) -> Result<String, PartnerFieldError> {
    if text.len() > 254 {
        return Err(PartnerFieldError::EmailLength);
    }
    let address: lettre::Address = text
        .parse()
        .map_err(|e: lettre::address::AddressError| PartnerFieldError::Email(e.to_string()))?;
    Ok(address.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_trimmed_and_kept_to_printable_text() {
        assert_eq!(name("  Acme GmbH – Zürich "), Ok("Acme GmbH – Zürich"));
        assert_eq!(name("Acme\u{1b}[31m"), Err(PartnerFieldError::NameControl));
        assert_eq!(name("Ac\0me"), Err(PartnerFieldError::NameControl));
        assert_eq!(name("   "), Err(PartnerFieldError::NameLength));
        assert_eq!(name(&"x".repeat(201)), Err(PartnerFieldError::NameLength));
    }

    #[test]
    fn an_id_is_letters_digits_underscore_and_dash() {
        assert_eq!(id("ptn_acme-1"), Ok("ptn_acme-1"));
        assert_eq!(id(""), Err(PartnerFieldError::Id));
        assert_eq!(id("a b"), Err(PartnerFieldError::Id));
        assert_eq!(id(&"a".repeat(129)), Err(PartnerFieldError::Id));
    }

    #[test]
    fn a_notification_email_is_an_address_smtp_would_take() {
        assert_eq!(
            notification_email("ops@partner.example"),
            Ok("ops@partner.example".into())
        );
        assert!(matches!(
            notification_email("ops"),
            Err(PartnerFieldError::Email(_))
        ));
        let long = format!("{}@example.com", "x".repeat(250));
        assert_eq!(
            notification_email(&long),
            Err(PartnerFieldError::EmailLength)
        );
    }
}
