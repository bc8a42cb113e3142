//! Handing an endpoint over between two live instances without a stall.
//! The instance giving it up hands its lease back as soon as nothing of the
//! endpoint is in flight (the database checks; its actor has stopped
//! claiming), trying every `POLL`; the instance preferred for it, which
//! awaits it since its heartbeat saw who holds it, takes it the moment it is
//! free, trying as often. Neither waits for its next heartbeat, so the
//! endpoint is delivering on its new owner well within a second of the
//! decision, unless a request of the old owner is still running.

use std::time::Duration;

use actix::prelude::*;

use super::{actor::ClusterActor, messages::LeasesChanged};
use crate::store;

/// How often a handover in progress is tried again.
pub const POLL: Duration = Duration::from_millis(200);

impl ClusterActor {
    /// One step of every handover in progress: hands back what is leaving
    /// here, takes what is awaited here, and comes back in `POLL` while
    /// either is left. Does nothing while a step runs or waits.
    pub(super) fn handover(&mut self, ctx: &mut Context<Self>) {
        if self.handing_over
            || self.stopping
            || (self.leaving.is_empty() && self.awaited.is_empty())
        {
            return;
        }
        self.handing_over = true;
        let leaving: Vec<String> = self.leaving.iter().cloned().collect();
        let awaited = self.awaited.clone();
        let node = self.node.clone();
        let me = self.instance.id.clone();
        let ttl_ms = self.ttl_ms();
        let step = async move {
            let handed = if leaving.is_empty() {
                Vec::new()
            } else {
                let now = node.clock.now_ms();
                store::cluster::hand_back(&node.control_db, &me, &leaving, now).await?
            };
            let taken = if awaited.is_empty() {
                Vec::new()
            } else {
                store::cluster::take(&node.control_db, &me, &awaited, ttl_ms).await?
            };
            Ok::<_, store::StoreError>((handed, taken))
        };
        ctx.spawn(step.into_actor(self).map(|res, act, ctx| {
            match res {
                Ok((handed, taken)) => {
                    if !handed.is_empty() || !taken.is_empty() {
                        tracing::info!(
                            handed_back = handed.len(),
                            taken = taken.len(),
                            owned = act.node.leases.owned_count() + taken.len(),
                            "endpoint leases handed over"
                        );
                    }
                    act.node.leases.forget(&handed);
                    act.node.leases.add(&taken);
                    for e in &handed {
                        act.leaving.remove(e);
                    }
                    act.awaited.retain(|e| !taken.iter().any(|(t, _)| t == e));
                    if !taken.is_empty() {
                        act.fanout.do_send(LeasesChanged {
                            look: true,
                            ..LeasesChanged::default()
                        });
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "handing endpoint leases over failed; trying again");
                }
            }
            // The flag stays up while the next step waits, so one chain of
            // steps runs at a time, whoever asks meanwhile.
            ctx.run_later(POLL, |act, ctx| {
                act.handing_over = false;
                act.handover(ctx);
            });
        }));
    }
}
