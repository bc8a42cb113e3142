//! `hookd partner create|list|get|update|portal-link`: the operator API's
//! partner routes on the command line, with its checks and its answers' shapes.

use clap::{Args, Subcommand};
use serde_json::json;

use super::{
    ctx::Ctx,
    exit::{self, from_problem},
    out::{self, emit},
    page::PageArgs,
};
use crate::{
    domain::partner::{self, PartnerFieldError},
    http::{
        admin::PartnerOut, page::Page, partner::settings::PartnerSettings, partner::time,
        problem::Problem,
    },
    store::{
        self,
        audit::Action,
        partner_settings::{self, Channel, UrlChange},
        partners::Partner,
    },
};

#[derive(Debug, Subcommand)]
pub enum PartnerCommand {
    /// Create a partner.
    Create {
        /// The partner's name: 1 to 200 characters.
        #[arg(long)]
        name: String,
        /// An id of your choosing: letters, digits, `_` and `-` (default: a new `ptn_` id).
        #[arg(long)]
        id: Option<String>,
        /// Print the partner as JSON (`id`, `name`, `status`, `created_at`).
        #[arg(long)]
        json: bool,
    },
    /// List partners, oldest first.
    List {
        #[command(flatten)]
        page: PageArgs,
        /// Print the page as JSON, as GET /v1/admin/partners answers.
        #[arg(long)]
        json: bool,
    },
    /// Show a partner and where its endpoint notices go.
    Get {
        /// The partner's id.
        id: String,
        /// Print it as JSON, as GET /v1/admin/partners/{id} answers.
        #[arg(long)]
        json: bool,
    },
    /// Change where a partner's endpoint notices go, as
    /// PATCH /v1/admin/partners/{id} does; written to the audit log.
    Update(PartnerUpdate),
    /// Mint a one-time sign-in link into a partner's portal (10 minutes). Audited.
    PortalLink {
        /// The partner's id.
        id: String,
        /// The origin the partner reaches hookd at (default: http.public_url,
        /// else the http.listen address).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Print it as JSON, as POST /v1/admin/partners/{id}/portal-links answers.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct PartnerUpdate {
    /// The partner's id.
    id: String,
    /// Mail the partner's endpoint notices here (needs smtp.url).
    #[arg(long, value_name = "EMAIL", conflicts_with = "no_notification_email")]
    notification_email: Option<String>,
    /// Stop mailing the partner's notices.
    #[arg(long)]
    no_notification_email: bool,
    /// Send the partner's endpoint notices to this URL as signed webhooks; a
    /// new URL's secret is printed this once.
    #[arg(long, value_name = "URL", conflicts_with = "no_notification_url")]
    notification_url: Option<String>,
    /// Stop sending the partner's notices as webhooks (removes that endpoint).
    #[arg(long)]
    no_notification_url: bool,
    /// Print the partner as JSON, as PATCH /v1/admin/partners/{id} answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, command: PartnerCommand) -> anyhow::Result<()> {
    match command {
        PartnerCommand::Create { name, id, json } => create(ctx, &name, id, json).await,
        PartnerCommand::List { page, json } => list(ctx, &page, json).await,
        PartnerCommand::Get { id, json } => {
            let (p, c) = partner_settings::channel(&ctx.db, &id)
                .await?
                .ok_or_else(|| exit::not_found(format!("partner {id}")))?;
            let shown = settings(p, c, None);
            emit(json, &shown, || settings_text(&shown))
        }
        PartnerCommand::Update(u) => update(ctx, u).await,
        PartnerCommand::PortalLink { id, base_url, json } => {
            super::portal_link::create(ctx, &id, base_url.as_deref(), json).await
        }
    }
}

async fn create(ctx: &Ctx, name: &str, id: Option<String>, json: bool) -> anyhow::Result<()> {
    let name = partner::name(name).map_err(|e| match e {
        PartnerFieldError::NameLength => from_problem(Problem::out_of_range("name", e.to_string())),
        _ => from_problem(Problem::invalid("name", e.to_string())),
    })?;
    if let Some(id) = &id {
        partner::id(id).map_err(|e| from_problem(Problem::invalid("id", e.to_string())))?;
        anyhow::ensure!(
            store::partners::find(&ctx.db, id).await?.is_none(),
            "partner {id} already exists"
        );
    }
    let p = store::partners::create(&ctx.db, id, name, ctx.now()).await?;
    let shown = PartnerOut::from(p);
    emit(json, &shown, || {
        format!("created partner {} ({})", shown.id, shown.name)
    })
}

async fn list(ctx: &Ctx, page: &PageArgs, json: bool) -> anyhow::Result<()> {
    let (limit, after) = page.resolve(&ctx.config.api)?;
    let rows = store::partners::list(&ctx.db, after.as_ref(), limit).await?;
    let shown = Page::of(
        rows,
        limit,
        |p| (p.created_at, p.id.as_str()),
        PartnerOut::from,
    );
    emit(json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|p| {
                vec![
                    p.id.clone(),
                    p.status.clone(),
                    p.created_at.clone(),
                    p.name.clone(),
                ]
            })
            .collect();
        out::table(&["ID", "STATUS", "CREATED", "NAME"], &rows)
            + &out::more(shown.next_cursor.as_deref())
    })
}

/// The API's answer for a partner and its channel.
fn settings(p: Partner, c: Channel, secret: Option<String>) -> PartnerSettings {
    let (endpoint_id, url) = c.notification_url.unzip();
    PartnerSettings {
        id: p.id,
        name: p.name,
        status: p.status,
        created_at: time(p.created_at),
        notification_email: c.notification_email,
        notification_url: url,
        notification_endpoint_id: endpoint_id,
        notification_secret: secret,
    }
}

fn settings_text(s: &PartnerSettings) -> String {
    let mut text = out::fields(&[
        ("id", Some(s.id.clone())),
        ("name", Some(s.name.clone())),
        ("status", Some(s.status.clone())),
        ("created", Some(s.created_at.clone())),
        (
            "notification email",
            Some(out::cell(s.notification_email.clone())),
        ),
        (
            "notification url",
            Some(out::cell(s.notification_url.clone())),
        ),
        ("notification endpoint", s.notification_endpoint_id.clone()),
        (
            "notification secret",
            s.notification_secret
                .clone()
                .map(|x| format!("{x}  (shown this once)")),
        ),
    ]);
    text.push_str(&format!(
        "\nendpoints: hookd endpoint list --partner {}",
        s.id
    ));
    text
}

async fn update(ctx: &Ctx, u: PartnerUpdate) -> anyhow::Result<()> {
    let email = match (u.notification_email, u.no_notification_email) {
        (Some(e), _) => Some(Some(checked_email(&e)?)),
        (None, true) => Some(None),
        (None, false) => None,
    };
    let url = match (u.notification_url, u.no_notification_url) {
        (Some(url), _) => UrlChange::Set(ctx.checked_url("--notification-url", &url).await?),
        (None, true) => UrlChange::Remove,
        (None, false) => UrlChange::Keep,
    };
    if email.is_none() && url == UrlChange::Keep {
        return Err(exit::usage(
            "nothing to change: give --notification-email, --notification-url or their --no- forms",
        ));
    }
    let before = partner_settings::channel(&ctx.db, &u.id)
        .await?
        .ok_or_else(|| exit::not_found(format!("partner {}", u.id)))?;
    let changed_url = url != UrlChange::Keep;
    let (p, c, secret) = partner_settings::update(
        &ctx.db,
        &ctx.secrets()?,
        &u.id,
        email,
        url,
        ctx.config.delivery.default_concurrency,
        ctx.now(),
    )
    .await?
    .ok_or_else(|| exit::not_found(format!("partner {}", u.id)))?;
    if changed_url {
        let ids = before
            .1
            .notification_url
            .into_iter()
            .chain(c.notification_url.clone());
        for (id, _) in ids {
            ctx.announce(&id).await;
        }
    }
    let shown = settings(p, c, secret.map(|s| s.expose()));
    let detail = json!({
        "notification_email": shown.notification_email,
        "notification_url": shown.notification_url,
    });
    ctx.audit(Action::PartnerUpdate, &u.id, Some(&u.id), detail)
        .await?;
    emit(u.json, &shown, || {
        format!("updated partner {}\n{}", shown.id, settings_text(&shown))
    })
}

/// An email address as the API takes one (`PATCH /v1/admin/partners/{id}`).
fn checked_email(text: &str) -> anyhow::Result<String> {
    crate::domain::partner::notification_email(text)
        .map_err(|e| exit::usage(format!("--notification-email: {e}")))
}
