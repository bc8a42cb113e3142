//! `hookd check-receiver`: the conformance suite against a URL, as the
//! API's check sends it, with a secret given on the command line.

use actix::Actor as _;
use clap::Args;

use super::{dev, exit::Exit};
use crate::{
    config::Config,
    conformance::{send, suite},
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

pub async fn run(config: &Config, dev_mode: bool, c: CheckReceiver) -> anyhow::Result<()> {
    let mut egress = config.egress.clone();
    if dev_mode {
        dev::allow_local(&mut egress);
    }
    let secret = crate::secret::Secret::parse(&c.secret)
        .map(crate::signing::SigningKey::Hmac)
        .map_err(|e| Exit::Usage(format!("--secret: {e}")))?;
    let rules = EgressRules::from_config(&egress);
    let resolver = ResolverActor::new(&egress, rules.policy.clone())?.start();
    let url = check_registration(&c.url, &rules, &resolver)
        .await
        .map_err(|e| {
            let remedy = crate::egress::remedy::for_registration(&egress, &c.url, &e)
                .map(|r| format!("; {r}"))
                .unwrap_or_default();
            Exit::Usage(format!("--url: {e}{remedy}.\n{EGRESS_NOTE}"))
        })?;
    let tls = tls_config(egress.extra_ca_file.as_deref())
        .map_err(|e| Exit::Usage(format!("egress.extra_ca_file: {e:#}")))?;
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
    let limits = Limits::from_config(&config.delivery);
    let card = send::run(
        &script,
        &url,
        &send::Wire::new(&resolver, tls, &limits, Route::from_config(&egress), &clock),
    )
    .await;
    if c.json {
        println!("{}", serde_json::to_string(&card)?);
    } else {
        println!("check of {}\n{}", url.url, card.table());
    }
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
