//! The endpoint page's credentials: what the endpoint presents to its
//! receiver (header names, the OAuth2 client, the client certificate's
//! subject and expiry) and the `v1a` public keys it signs with, never a
//! secret; and the forms that set and remove each. A value typed into a
//! form is never put back into a page: a refused form comes back empty,
//! with why above it.

use maud::{Markup, html};

use super::form::{Draft, token_field};
use crate::http::partner::auth_shapes::ReceiverAuthOut;

/// The credential forms, by id.
const FORMS: [&str; 3] = ["headers-form", "oauth2-form", "certificate-form"];

/// How many header rows the headers form offers.
pub const HEADER_ROWS: usize = 5;

/// The form field of header row `i`'s name and value.
pub fn header_fields(i: usize) -> (String, String) {
    (format!("header_name_{i}"), format!("header_value_{i}"))
}

/// The choice of signature scheme, for the create and rotate forms.
pub fn scheme_select(id: &str) -> Markup {
    html! {
        label for=(id) { "Signature scheme" }
        select id=(id) name="signature_scheme" {
            option value="v1" selected { "v1: HMAC with a shared secret" }
            option value="v1a" { "v1a: Ed25519, receivers verify with a public key" }
        }
    }
}

/// The credentials as set, every secret redacted.
fn shown(a: &ReceiverAuthOut) -> Markup {
    html! {
        table.facts #credentials {
            tr { th { "Static headers" } td #auth-headers {
                @if a.headers.is_empty() { "none" }
                @for (name, value) in &a.headers { code { (name) ": " (value) } " " }
            } }
            tr { th { "OAuth2 client" } td #auth-oauth2 {
                @match &a.oauth2 {
                    Some(o) => {
                        "token URL " code { (o.token_url) } ", client id " code { (o.client_id) }
                        ", client secret " code { (o.client_secret) }
                        @if let Some(s) = &o.scope { ", scope " code { (s) } }
                        @if let Some(au) = &o.audience { ", audience " code { (au) } }
                    }
                    None => { "none" }
                }
            } }
            tr { th { "Client certificate" } td #auth-certificate {
                @match &a.client_certificate {
                    Some(c) => { (c.subject) ", expires " (c.expires_at) }
                    None => { "none" }
                }
            } }
            tr { th { "v1a public keys" } td #public-keys {
                @if a.public_keys.is_empty() { "none (signed with v1 only)" }
                @for k in &a.public_keys {
                    div { code.public-key { (k.public_key) }
                        @if let Some(until) = &k.expires_at { " (signs until " (until) ")" } }
                }
            } }
        }
    }
}

/// The set form's button, and the form that removes the credential.
fn buttons(base: &str, part: &str, form: &str, [set, remove]: [&str; 2], token: &str) -> Markup {
    html! {
        div.actions {
            button type="submit" form=(form) { (set) }
            form method="post" action={ (base) "/auth/" (part) "/remove" } {
                (token_field(token)) button.danger type="submit" { (remove) }
            }
        }
    }
}

/// A labelled input of the OAuth2 form.
fn input(name: &str, label: &str, kind: &str, required: bool) -> Markup {
    html! {
        div.field {
            label for=(name) { (label) }
            input id=(name) name=(name) type=(kind) required[required] autocomplete="off";
        }
    }
}

/// The section of the endpoint page at `base`: the credentials, and (for
/// an endpoint the partner manages here) the forms, with why one of them
/// was refused (`draft`).
pub fn section(
    base: &str,
    a: &ReceiverAuthOut,
    changeable: bool,
    token: &str,
    draft: &Draft,
) -> Markup {
    html! {
        section #receiver-auth {
            h3 { "Credentials sent to the receiver" }
            div.scroll { (shown(a)) }
            @if changeable {
                // Closed until wanted, or until one of its forms was refused.
                details #credential-forms open[draft.refused_in(&FORMS)] {
                summary { "Set or remove credentials" }
                h4 { "Static headers (replace the current ones)" }
                (draft.form_error("headers-form", &[]))
                form #headers-form method="post" action={ (base) "/auth/headers" } {
                    (token_field(token))
                    @for i in 0..HEADER_ROWS {
                        @let (name, value) = header_fields(i);
                        div.pair {
                            input id=(name) name=(name) placeholder="Authorization" autocomplete="off" aria-label="Header name";
                            input id=(value) name=(value) type="password" placeholder="value" autocomplete="off" aria-label="Header value";
                        }
                    }
                }
                (buttons(base, "headers", "headers-form", ["Set the headers", "Remove the headers"], token))
                h4 { "OAuth2 client credentials" }
                (draft.form_error("oauth2-form", &[]))
                form #oauth2-form method="post" action={ (base) "/auth/oauth2" } {
                    (token_field(token))
                    (input("token_url", "Token URL", "url", true))
                    (input("client_id", "Client id", "text", true))
                    (input("client_secret", "Client secret", "password", true))
                    (input("scope", "Scope (optional)", "text", false))
                    (input("audience", "Audience (optional)", "text", false))
                }
                (buttons(base, "oauth2", "oauth2-form", ["Set OAuth2", "Remove OAuth2"], token))
                h4 { "Client certificate (mutual TLS)" }
                (draft.form_error("certificate-form", &[]))
                form #certificate-form method="post" action={ (base) "/auth/client-certificate" } {
                    (token_field(token))
                    div.field {
                        label for="certificate" { "Certificate (PEM, the endpoint's first)" }
                        textarea #certificate name="certificate" rows="6" required {}
                    }
                    div.field {
                        label for="private_key" { "Private key (PEM)" }
                        textarea #private_key name="private_key" rows="6" required autocomplete="off" {}
                    }
                }
                (buttons(base, "client-certificate", "certificate-form", ["Set the certificate", "Remove the certificate"], token))
                }
            }
        }
    }
}
