//! The mailer: sends queued notice mails (`store::mail`) through
//! `smtp.url`. Any instance may send a mail; a claim's lease keeps two from
//! sending the same one, and a mail whose sender died is taken over when
//! the lease ends. A refused mail, or one out of tries, is dead and logged.

use std::{sync::Arc, time::Duration};

use actix::prelude::*;
use lettre::{
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor, message::header::ContentType,
};

use super::Shared;
use crate::{
    config::SmtpConfig,
    store::mail::{self, Sent},
};

/// Mails claimed per round.
const BATCH: i64 = 20;
/// How often the queue is looked at.
const POLL: Duration = Duration::from_secs(1);

pub struct Mailer {
    shared: Arc<Shared>,
    transport: AsyncSmtpTransport<Tokio1Executor>,
    smtp: SmtpConfig,
    busy: bool,
}

impl Mailer {
    pub fn new(
        shared: Arc<Shared>,
        smtp: SmtpConfig,
    ) -> Result<Mailer, lettre::transport::smtp::Error> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&smtp.url)?
            .timeout(Some(smtp.timeout))
            .build();
        Ok(Mailer {
            shared,
            transport,
            smtp,
            busy: false,
        })
    }

    fn round(&mut self, ctx: &mut Context<Self>) {
        if self.busy || self.shared.is_draining() {
            return;
        }
        self.busy = true;
        let shared = self.shared.clone();
        let transport = self.transport.clone();
        let smtp = self.smtp.clone();
        let work = async move {
            let now = shared.clock.now_ms();
            let lease = i64::try_from(smtp.timeout.as_millis()).unwrap_or(i64::MAX);
            let due = mail::claim_due(
                &shared.db,
                now,
                now.saturating_add(2 * lease + 5_000),
                BATCH,
            )
            .await?;
            for m in due {
                let sent = send(&transport, &smtp, &m).await;
                match &sent {
                    Sent::Yes => tracing::debug!(mail = %m.id, "notice mailed"),
                    Sent::RetryAt(_, e) => {
                        tracing::info!(mail = %m.id, attempts = m.attempts, error = %e, "notice mail failed; it is retried")
                    }
                    Sent::Dead(e) => {
                        tracing::warn!(mail = %m.id, attempts = m.attempts, error = %e, "notice mail given up")
                    }
                }
                let at = match sent {
                    Sent::RetryAt(delay, e) => Sent::RetryAt(shared.clock.now_ms() + delay, e),
                    other => other,
                };
                mail::record(&shared.db, &m.id, at, shared.clock.now_ms()).await?;
            }
            Ok::<_, crate::store::StoreError>(())
        };
        ctx.spawn(work.into_actor(self).map(|res, act, _| {
            act.busy = false;
            if let Err(e) = res {
                tracing::warn!(error = %e, "the mail queue could not be read");
            }
        }));
    }
}

/// Sends one mail; a failure's `RetryAt` carries the delay, not the time.
async fn send(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    smtp: &SmtpConfig,
    m: &mail::Mail,
) -> Sent {
    let to = match m.recipient.parse() {
        Ok(to) => to,
        Err(e) => {
            return Sent::Dead(format!(
                "the recipient {:?} is not an address: {e}",
                m.recipient
            ));
        }
    };
    let message = Message::builder()
        .from(smtp.from.clone())
        .to(to)
        .subject(m.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(m.body.clone());
    let message = match message {
        Ok(message) => message,
        Err(e) => return Sent::Dead(format!("the mail could not be built: {e}")),
    };
    match transport.send(message).await {
        Ok(_) => Sent::Yes,
        Err(e) if e.is_permanent() => Sent::Dead(format!("the mail server refused it: {e}")),
        Err(e) => match crate::notify::mail::retry_delay_ms(m.attempts) {
            Some(delay) => Sent::RetryAt(delay, e.to_string()),
            None => Sent::Dead(format!("out of tries: {e}")),
        },
    }
}

impl Actor for Mailer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(POLL, |act, ctx| act.round(ctx));
    }
}
