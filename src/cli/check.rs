//! `hookd check-receiver`: the conformance suite against a URL, as the
//! API's check sends it, with a secret given on the command line; and the
//! way out every check takes (`endpoint check` too).

use std::sync::Arc;

use actix::{Actor as _, Addr};
use clap::Args;

use super::{dev, exit::Exit};
use crate::{
    config::{Config, EgressConfig},
    conformance::{Scorecard, send, suite},
    delivery::{
        client::{Limits, tls_config},
        proxy::Route,
    },
    domain::{
        clock::SystemClock,
        ids::{EventId, new_id},
    },
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, check_registration},
    },
};

#[derive(Debug, Args)]
pub struct CheckReceiver {
    /// The receiver's URL, judged by the egress settings deliveries use (for
    /// a receiver on this machine: --dev).
    #[arg(long)]
    url: String,
    /// The signing secret the receiver verifies with, `whsec_` and base64.
    #[arg(long, value_name = "whsec_…")]
    secret: String,
    /// Print the scorecard as one JSON object (`passed`, `cases`,
    /// `checked_at`) instead of a table.
    #[arg(long)]
    json: bool,
}

/// What a refused `--url` adds: the rules are those of deliveries.
const EGRESS_NOTE: &str = "check-receiver sends under the egress settings deliveries use, from the \
     configuration `serve` loads: for a receiver on this machine add --dev; for one on your \
     network set egress.allow_cidrs (e.g. [\"10.20.0.0/16\"]), egress.allow_http for http:// and \
     egress.allowed_ports for its port (or HOOKD_EGRESS__* variables)";

/// How a check reaches a receiver: the egress settings deliveries use
/// (widened by --dev), their rules, a resolver and the TLS trust.
pub struct Outbound {
    pub egress: EgressConfig,
    pub rules: EgressRules,
    pub resolver: Addr<ResolverActor>,
    pub tls: Arc<rustls::ClientConfig>,
}

impl Outbound {
    pub fn of(config: &Config, dev_mode: bool) -> anyhow::Result<Outbound> {
        let mut egress = config.egress.clone();
        if dev_mode {
            dev::allow_local(&mut egress);
        }
        let rules = EgressRules::from_config(&egress);
        let resolver = ResolverActor::new(&egress, rules.policy.clone())?.start();
        let tls = tls_config(egress.extra_ca_file.as_deref())
            .map_err(|e| Exit::Usage(format!("egress.extra_ca_file: {e:#}")))?;
        Ok(Outbound {
            egress,
            rules,
            resolver,
            tls,
        })
    }

    /// The wire the suite goes out on, as deliveries would.
    pub fn wire<'a>(&'a self, config: &Config, clock: &'a SystemClock) -> send::Wire<'a> {
        send::Wire::new(
            &self.resolver,
            self.tls.clone(),
            &Limits::from_config(&config.delivery),
            Route::from_config(&self.egress),
            clock,
        )
    }
}

/// Exit 1 when some case of `card` failed (the scorecard says which).
pub fn verdict(card: &Scorecard) -> anyhow::Result<()> {
    let failed = card.cases.iter().filter(|c| !c.passed).count();
    if failed > 0 {
        return Err(Exit::Failed {
            failed,
            total: card.cases.len(),
        }
        .into());
    }
    Ok(())
}

pub async fn run(config: &Config, dev_mode: bool, c: CheckReceiver) -> anyhow::Result<()> {
    let secret = crate::secret::Secret::parse(&c.secret)
        .map(crate::signing::SigningKey::Hmac)
        .map_err(|e| Exit::Usage(format!("--secret: {e}")))?;
    let out = Outbound::of(config, dev_mode)?;
    let url = check_registration(&c.url, &out.rules, &out.resolver)
        .await
        .map_err(|e| {
            let remedy = crate::egress::remedy::for_registration(&out.egress, &c.url, &e)
                .map(|r| format!("; {r}"))
                .unwrap_or_default();
            Exit::Usage(format!("--url: {e}{remedy}.\n{EGRESS_NOTE}"))
        })?;
    let script = suite::Script::new(
        suite::Target {
            check_id: new_id("chk"),
            partner_id: "local".into(),
            endpoint_id: None,
        },
        secret,
        EventId::generate,
    );
    let clock = SystemClock;
    let card = send::run(&script, &url, &out.wire(config, &clock)).await;
    if c.json {
        println!("{}", serde_json::to_string(&card)?);
    } else {
        println!("check of {}\n{}", url.url, card.table());
    }
    verdict(&card)
}
