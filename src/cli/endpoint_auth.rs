//! `hookd endpoint auth …`: what an endpoint presents to its receiver
//! (static headers, OAuth2 client credentials, a client certificate) and
//! the `v1a` public keys it signs with; shown redacted, set and removed
//! through the Partner API's checks (`auth_ops`), audited `endpoint.auth`.
//! Secrets are read from files or stdin, never from the command line
//! (which `ps` shows), except header values given with `--header`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::{
    ctx::Ctx,
    endpoint_change::managed_here,
    endpoint_view::find,
    exit::{self, from_problem},
    input::read_file_or_stdin,
    out::{self, emit},
};
use crate::{
    http::partner::{
        auth_ops,
        auth_shapes::{AuthPart, ReceiverAuthOut, SetOAuth2},
    },
    store::{
        self,
        audit::Action,
        receiver_auth::{Change, Shown},
        scoped::for_partner,
    },
};

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Show what the endpoint sends its receiver (every secret redacted)
    /// and its v1a public keys.
    Show {
        /// The endpoint's id.
        id: String,
        /// Print it as JSON, as GET /v1/endpoints/{id}/auth answers.
        #[arg(long)]
        json: bool,
    },
    /// Set the static headers sent with every delivery (replacing the
    /// current ones), or remove them.
    Headers(HeadersArgs),
    /// Set OAuth2 client credentials (deliveries carry a bearer token
    /// fetched from the token URL), or remove them.
    Oauth2(OAuth2Args),
    /// Set the client certificate presented to a receiver that requires
    /// mutual TLS, or remove it.
    ClientCertificate(CertificateArgs),
}

#[derive(Debug, Args)]
pub struct HeadersArgs {
    /// The endpoint's id.
    id: String,
    /// A header as `Name: value` (repeatable). The command line is visible
    /// to other users of the machine: put secret values in --header-file.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A file of `Name: value` lines (`-`: stdin), read with any --header.
    #[arg(long, value_name = "PATH")]
    header_file: Option<PathBuf>,
    /// Remove the headers instead.
    #[arg(long, conflicts_with_all = ["headers", "header_file"])]
    remove: bool,
    /// Print the credentials as JSON, as the Partner API answers.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct OAuth2Args {
    /// The endpoint's id.
    id: String,
    /// Where tokens come from; held to the rules of a callback URL.
    #[arg(long, value_name = "URL", required_unless_present = "remove")]
    token_url: Option<String>,
    /// The client id.
    #[arg(long, value_name = "ID", required_unless_present = "remove")]
    client_id: Option<String>,
    /// A file holding the client secret (`-` or absent: read from stdin);
    /// one trailing newline is dropped.
    #[arg(long, value_name = "PATH")]
    client_secret_file: Option<PathBuf>,
    /// The scope asked for.
    #[arg(long)]
    scope: Option<String>,
    /// The audience asked for.
    #[arg(long)]
    audience: Option<String>,
    /// Remove the OAuth2 client credentials instead.
    #[arg(long, conflicts_with_all = ["token_url", "client_id", "client_secret_file", "scope", "audience"])]
    remove: bool,
    /// Print the credentials as JSON, as the Partner API answers.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct CertificateArgs {
    /// The endpoint's id.
    id: String,
    /// A PEM file: the endpoint's certificate first, then any intermediates.
    #[arg(long, value_name = "PEMFILE", required_unless_present = "remove")]
    certificate: Option<PathBuf>,
    /// A PEM file with its private key (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PEMFILE", required_unless_present = "remove")]
    private_key: Option<PathBuf>,
    /// Remove the client certificate instead.
    #[arg(long, conflicts_with_all = ["certificate", "private_key"])]
    remove: bool,
    /// Print the credentials as JSON, as the Partner API answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, command: AuthCommand) -> anyhow::Result<()> {
    match command {
        AuthCommand::Show { id, json } => {
            let e = find(ctx, &id).await?;
            let shown = store::receiver_auth::shown(&ctx.db, &e.id).await?;
            let out = answer(ctx, &e.id, shown).await?;
            emit(json, &out, || text(&out))
        }
        AuthCommand::Headers(h) => headers(ctx, h).await,
        AuthCommand::Oauth2(o) => oauth2(ctx, o).await,
        AuthCommand::ClientCertificate(c) => certificate(ctx, c).await,
    }
}

async fn headers(ctx: &Ctx, h: HeadersArgs) -> anyhow::Result<()> {
    if h.remove {
        return change(ctx, &h.id, auth_ops::removal(AuthPart::Headers), h.json).await;
    }
    let mut lines = h.headers;
    if let Some(path) = &h.header_file {
        lines.extend(read_file_or_stdin(Some(path))?.lines().map(str::to_string));
    }
    // A malformed line is named by its place, never by what it holds.
    let given = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            l.split_once(':')
                .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| exit::usage(format!("header {}: not `Name: value`", i + 1)))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if given.is_empty() {
        return Err(exit::usage(
            "nothing to set: give --header 'Name: value' or --header-file, or --remove",
        ));
    }
    let checked = auth_ops::checked_headers(&given).map_err(from_problem)?;
    change(ctx, &h.id, Change::Headers(Some(&checked)), h.json).await
}

async fn oauth2(ctx: &Ctx, o: OAuth2Args) -> anyhow::Result<()> {
    let (Some(token_url), Some(client_id)) = (o.token_url, o.client_id) else {
        return change(ctx, &o.id, auth_ops::removal(AuthPart::Oauth2), o.json).await;
    };
    find(ctx, &o.id).await?;
    let checked_url = ctx.checked_url("--token-url", &token_url).await?;
    let input = SetOAuth2 {
        token_url,
        client_id,
        client_secret: one_line(read_file_or_stdin(o.client_secret_file.as_deref())?),
        scope: o.scope,
        audience: o.audience,
    };
    let client = auth_ops::oauth2_client(checked_url, input).map_err(from_problem)?;
    change(ctx, &o.id, Change::OAuth2(Some(&client)), o.json).await
}

async fn certificate(ctx: &Ctx, c: CertificateArgs) -> anyhow::Result<()> {
    let (Some(cert_path), Some(key_path)) = (c.certificate, c.private_key) else {
        return change(
            ctx,
            &c.id,
            auth_ops::removal(AuthPart::ClientCertificate),
            c.json,
        )
        .await;
    };
    let certificate = read_file_or_stdin(Some(&cert_path))?;
    let private_key = read_file_or_stdin(Some(&key_path))?;
    let trust = crate::delivery::client::trust(ctx.config.egress.extra_ca_file.as_deref())
        .map_err(exit::Exit::startup)?;
    let cert = auth_ops::checked_certificate(&trust, certificate, private_key, ctx.now())
        .map_err(from_problem)?;
    change(ctx, &c.id, cert.change(), c.json).await
}

/// A secret read from a file, without its trailing newline.
fn one_line(text: String) -> String {
    let trimmed = text.strip_suffix('\n').unwrap_or(&text);
    trimmed.strip_suffix('\r').unwrap_or(trimmed).to_string()
}

/// What the audit entry says of a change: the part, and what may be shown.
fn detail(change: &Change<'_>) -> Value {
    match change {
        Change::Headers(h) => json!({"part": "headers", "removed": h.is_none(),
            "names": h.map(|h| h.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>())}),
        Change::OAuth2(o) => json!({"part": "oauth2", "removed": o.is_none(),
            "token_url": o.map(|o| &o.token_url), "client_id": o.map(|o| &o.client_id)}),
        Change::ClientCert(c) => {
            json!({"part": "client-certificate", "removed": c.is_none(), "subject": c.map(|c| c.2)})
        }
    }
}

/// Applies `change` to endpoint `id` as its partner would, tells running
/// instances, audits it, and prints what is now set.
async fn change(ctx: &Ctx, id: &str, change: Change<'_>, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    managed_here(&e)?;
    let audited = detail(&change);
    let shown = for_partner(&ctx.db, &e.partner_id)
        .change_receiver_auth(&ctx.secrets()?, id, change, ctx.now())
        .await?
        .ok_or_else(|| exit::not_found(format!("endpoint {id}")))?;
    ctx.announce(id).await;
    ctx.audit(Action::EndpointAuth, id, Some(&e.partner_id), audited)
        .await?;
    let out = answer(ctx, id, shown).await?;
    emit(json, &out, || {
        format!("changed endpoint {id}\n{}", text(&out))
    })
}

async fn answer(ctx: &Ctx, id: &str, shown: Shown) -> anyhow::Result<ReceiverAuthOut> {
    let keys = store::endpoints::public_keys(&ctx.db, id, ctx.now()).await?;
    Ok(ReceiverAuthOut::new(shown, keys))
}

/// The credentials for a person.
fn text(a: &ReceiverAuthOut) -> String {
    let headers = (!a.headers.is_empty()).then(|| {
        a.headers
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let oauth2 = a.oauth2.as_ref().map(|o| {
        let mut s = format!(
            "{} (client {}, secret {})",
            o.token_url, o.client_id, o.client_secret
        );
        if let Some(scope) = &o.scope {
            s.push_str(&format!(", scope {scope}"));
        }
        if let Some(audience) = &o.audience {
            s.push_str(&format!(", audience {audience}"));
        }
        s
    });
    let cert = a
        .client_certificate
        .as_ref()
        .map(|c| format!("{} (expires {})", c.subject, c.expires_at));
    let keys = (!a.public_keys.is_empty()).then(|| {
        a.public_keys
            .iter()
            .map(|k| match &k.expires_at {
                Some(until) => format!("{} (signs until {until})", k.public_key),
                None => k.public_key.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    });
    let none = || Some("none".to_string());
    out::fields(&[
        ("headers", headers.or_else(none)),
        ("oauth2", oauth2.or_else(none)),
        ("client certificate", cert.or_else(none)),
        ("v1a public keys", keys.or_else(none)),
    ])
}
