//! `hookd key create|list|revoke`: API keys. A key is printed once, when it
//! is made; a list shows ids and prefixes, never a key; a revoked key is
//! refused by the API from its next request.

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use serde_json::json;

use super::{
    ctx::Ctx,
    exit,
    out::{self, emit},
    page::PageArgs,
};
use crate::{
    http::{page::Page, partner::time},
    store::{
        self,
        audit::Action,
        keys::{KeyFilter, KeyInfo, Role},
    },
};

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create an API key; it is printed this once (only a hash is stored).
    Create(KeyCreate),
    /// List keys, oldest first: id, role, partner and the key's first
    /// characters, never the key itself.
    List(KeyList),
    /// Revoke a key: running instances refuse it at once on PostgreSQL
    /// (within 5 s on SQLite), and dashboard sessions signed in with it end.
    /// Written to the audit log.
    Revoke {
        /// The key's id (`key_…`, from `hookd key list`).
        id: String,
        /// Print the revoked key as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false, id = "role")]
pub struct KeyRole {
    /// A partner key, scoped to this partner (the Partner API).
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// A service key, for producing events (POST /v1/events).
    #[arg(long)]
    service: bool,
    /// An operator key (the operator API, the dashboard, /metrics).
    #[arg(long)]
    operator: bool,
}

#[derive(Debug, Args)]
pub struct KeyCreate {
    #[command(flatten)]
    role: KeyRole,
    /// Print the key as JSON (`id`, `key`, `role`, `partner_id`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RoleArg {
    Service,
    Partner,
    Operator,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::Service => Role::Service,
            RoleArg::Partner => Role::Partner,
            RoleArg::Operator => Role::Operator,
        }
    }
}

#[derive(Debug, Args)]
pub struct KeyList {
    /// Only this partner's keys.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// Only keys of this role.
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    /// Revoked keys too.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    page: PageArgs,
    /// Print the page as JSON (`data`, `next_cursor`).
    #[arg(long)]
    json: bool,
}

/// A key as listed: never the key, nor its hash.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct KeyOut {
    pub id: String,
    pub role: String,
    pub partner_id: Option<String>,
    /// The key's first characters, to tell which key one holds.
    pub prefix: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

impl From<KeyInfo> for KeyOut {
    fn from(k: KeyInfo) -> Self {
        KeyOut {
            id: k.id,
            role: k.role.as_str().to_string(),
            partner_id: k.partner_id,
            prefix: k.prefix,
            created_at: time(k.created_at),
            revoked_at: k.revoked_at.map(time),
        }
    }
}

pub async fn run(ctx: &Ctx, command: KeyCommand) -> anyhow::Result<()> {
    match command {
        KeyCommand::Create(k) => create(ctx, k).await,
        KeyCommand::List(l) => list(ctx, l).await,
        KeyCommand::Revoke { id, json } => revoke(ctx, &id, json).await,
    }
}

async fn create(ctx: &Ctx, k: KeyCreate) -> anyhow::Result<()> {
    let (role, partner) = match (k.role.partner, k.role.service) {
        (Some(p), _) => (Role::Partner, Some(p)),
        (None, true) => (Role::Service, None),
        _ => (Role::Operator, None),
    };
    if let Some(p) = &partner
        && store::partners::find(&ctx.db, p).await?.is_none()
    {
        return Err(exit::not_found(format!("partner {p}")));
    }
    let key = store::keys::create(&ctx.db, role, partner.as_deref(), ctx.now()).await?;
    let shown = json!({"id": key.id, "key": key.key, "role": role.as_str(), "partner_id": partner});
    emit(k.json, &shown, || {
        format!(
            "created {} key {}: {}\n(shown this once; only a hash is stored)",
            role.as_str(),
            key.id,
            key.key
        )
    })
}

async fn list(ctx: &Ctx, l: KeyList) -> anyhow::Result<()> {
    let (limit, after) = l.page.resolve(&ctx.config.api)?;
    let filter = KeyFilter {
        partner_id: l.partner,
        role: l.role.map(Role::from),
        revoked: l.all,
    };
    let rows = store::keys::list(&ctx.db, &filter, after.as_ref(), limit).await?;
    let shown = Page::of(rows, limit, |k| (k.created_at, k.id.as_str()), KeyOut::from);
    emit(l.json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|k| {
                vec![
                    k.id.clone(),
                    k.role.clone(),
                    out::cell(k.partner_id.clone()),
                    format!("{}…", k.prefix),
                    k.created_at.clone(),
                    k.revoked_at
                        .clone()
                        .map_or("-".into(), |r| format!("revoked {r}")),
                ]
            })
            .collect();
        out::table(
            &["ID", "ROLE", "PARTNER", "PREFIX", "CREATED", "REVOKED"],
            &rows,
        ) + &out::more(shown.next_cursor.as_deref())
    })
}

async fn revoke(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let now = ctx.now();
    if !store::keys::revoke(&ctx.db, id, now).await? {
        return Err(match store::keys::find(&ctx.db, id).await? {
            Some(KeyInfo {
                revoked_at: Some(at),
                ..
            }) => {
                exit::Exit::NotFound(format!("key {id} was already revoked at {}", time(at))).into()
            }
            _ => exit::not_found(format!("key {id}")),
        });
    }
    let key = store::keys::find(&ctx.db, id)
        .await?
        .ok_or_else(|| exit::not_found(format!("key {id}")))?;
    let detail = json!({"role": key.role.as_str(), "prefix": key.prefix});
    ctx.audit(Action::KeyRevoke, id, key.partner_id.as_deref(), detail)
        .await?;
    let shown = KeyOut::from(key);
    emit(json, &shown, || {
        format!(
            "revoked {} key {} ({}…)",
            shown.role, shown.id, shown.prefix
        )
    })
}
