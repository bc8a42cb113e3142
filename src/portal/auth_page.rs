//! The endpoint page's credentials: what the endpoint presents to its
//! receiver (header names, the OAuth2 client, the client certificate's
//! subject and expiry) and the `v1a` public keys it signs with, never a
//! secret; and the forms that set and remove each. A value typed into a
//! form is never put back into a page.

use maud::{Markup, html};

use super::form::token_field;
use crate::http::partner::auth_shapes::ReceiverAuthOut;

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
        table #credentials {
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

fn remove_form(base: &str, part: &str, label: &str, token: &str) -> Markup {
    html! {
        form.inline method="post" action={ (base) "/auth/" (part) "/remove" } {
            (token_field(token)) button type="submit" { (label) }
        }
    }
}

/// The section of the endpoint page at `base`: the credentials, and (for
/// an endpoint the partner manages here) the forms.
pub fn section(base: &str, a: &ReceiverAuthOut, changeable: bool, token: &str) -> Markup {
    html! {
        section #receiver-auth {
            h3 { "Credentials sent to the receiver" }
            (shown(a))
            @if changeable {
                h4 { "Static headers (replace the current ones)" }
                form #headers-form method="post" action={ (base) "/auth/headers" } {
                    (token_field(token))
                    @for i in 0..HEADER_ROWS {
                        @let (name, value) = header_fields(i);
                        p {
                            input id=(name) name=(name) size="24" placeholder="Authorization" autocomplete="off";
                            " "
                            input id=(value) name=(value) type="password" size="50" placeholder="value" autocomplete="off";
                        }
                    }
                    p { button type="submit" { "Set the headers" } }
                }
                (remove_form(base, "headers", "Remove the headers", token))
                h4 { "OAuth2 client credentials" }
                form #oauth2-form method="post" action={ (base) "/auth/oauth2" } {
                    (token_field(token))
                    p { label for="token_url" { "Token URL" } input #token_url name="token_url" type="url" size="60" required; }
                    p { label for="client_id" { "Client id" } input #client_id name="client_id" size="40" required autocomplete="off"; }
                    p { label for="client_secret" { "Client secret" } input #client_secret name="client_secret" type="password" size="40" required autocomplete="off"; }
                    p { label for="scope" { "Scope (optional)" } input #scope name="scope" size="40"; }
                    p { label for="audience" { "Audience (optional)" } input #audience name="audience" size="40"; }
                    p { button type="submit" { "Set OAuth2" } }
                }
                (remove_form(base, "oauth2", "Remove OAuth2", token))
                h4 { "Client certificate (mutual TLS)" }
                form #certificate-form method="post" action={ (base) "/auth/client-certificate" } {
                    (token_field(token))
                    p { label for="certificate" { "Certificate (PEM, the endpoint's first)" } }
                    p { textarea #certificate name="certificate" rows="6" cols="70" required {} }
                    p { label for="private_key" { "Private key (PEM)" } }
                    p { textarea #private_key name="private_key" rows="6" cols="70" required autocomplete="off" {} }
                    p { button type="submit" { "Set the certificate" } }
                }
                (remove_form(base, "client-certificate", "Remove the certificate", token))
            }
        }
    }
}
