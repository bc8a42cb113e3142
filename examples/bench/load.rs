//! The producer: awc on a thread and System of its own, publishing a `Load`
//! through `POST /v1/events` and noting when each event was sent.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;

/// Where and as whom events are published; event `i` belongs to
/// `partners[i % partners.len()]`.
#[derive(Clone)]
pub struct Producer {
    pub url: String,
    pub key: String,
    pub partners: Vec<String>,
}

pub struct Ingested {
    /// Each event id, and the instant just before the POST that carried it was sent.
    pub sent: HashMap<String, Instant>,
    /// The same, split by the event's partner (its index in `Producer::partners`).
    pub by_partner: Vec<HashMap<String, Instant>>,
    pub first_send: Instant,
    /// From the first send to the last POST's answer.
    pub elapsed: Duration,
}

/// What to publish: `events` events, `batch` per POST, at most `in_flight`
/// POSTs at once, the i-th POST no earlier than `pace` × i after the first.
#[derive(Clone, Copy)]
pub struct Load {
    /// Event `i` is about subject `cus_{i % subjects}` (0: no subject).
    pub subjects: usize,
    /// The endpoints order their deliveries per subject.
    pub ordered: bool,
    pub events: usize,
    pub batch: usize,
    pub in_flight: usize,
    pub pace: Duration,
}

impl Producer {
    /// Publishing into the hookd whose API is at `base` (`http://host:port`)
    /// with the rows `populate` made.
    pub fn at(base: &str, made: crate::setup::Populated) -> Producer {
        Producer {
            url: format!("{base}/v1/events"),
            key: made.key,
            partners: made.partners,
        }
    }
}

impl Load {
    /// `events` one-event POSTs, `in_flight` at once, as fast as they go.
    pub fn one_per_post(events: usize, in_flight: usize) -> Load {
        Load {
            subjects: 0,
            ordered: false,
            events,
            batch: 1,
            in_flight,
            pace: Duration::ZERO,
        }
    }
}

impl Ingested {
    pub fn ended(&self) -> Instant {
        self.first_send + self.elapsed
    }
}

impl Producer {
    /// Publishes the load from a new thread with its own actix System.
    pub async fn run(self, load: Load) -> anyhow::Result<Ingested> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let run = move || drop(tx.send(actix_rt::System::new().block_on(self.publish(load))));
        std::thread::Builder::new()
            .name("bench-producer".into())
            .spawn(run)?;
        rx.await
            .map_err(|_| anyhow::anyhow!("the producer thread died"))?
    }

    async fn publish(self, load: Load) -> anyhow::Result<Ingested> {
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(120))
            .finish();
        let (step, n) = (load.batch.max(1), load.events);
        let bodies: Vec<_> = (0..n)
            .step_by(step)
            .map(|i| self.events(i, step.min(n - i), load.subjects))
            .collect();
        let first_send = Instant::now();
        let paced = futures_util::stream::iter(bodies.into_iter().zip(0u32..)).then(
            |(body, i)| async move {
                actix_rt::time::sleep_until((first_send + load.pace * i).into()).await;
                body
            },
        );
        let posts = paced
            .map(|body| self.post(&client, body))
            .buffer_unordered(load.in_flight);
        let done: Vec<_> = posts.collect().await;
        let elapsed = first_send.elapsed();
        let mut sent = HashMap::new();
        let mut by_partner = vec![HashMap::new(); self.partners.len()];
        for post in done {
            let (ids, at) = post?;
            for (id, partner) in ids {
                by_partner[partner].insert(id.clone(), at);
                sent.insert(id, at);
            }
        }
        Ok(Ingested {
            sent,
            by_partner,
            first_send,
            elapsed,
        })
    }

    /// `n` events with producer-chosen ids: a JSON array, or an object for one.
    /// Each id comes with its partner's index.
    fn events(&self, first: usize, n: usize, subjects: usize) -> (Vec<(String, usize)>, String) {
        let (ids, events): (Vec<_>, Vec<serde_json::Value>) = (first..first + n)
            .map(|seq| {
                let id = format!("evt_{}", ulid::Ulid::new());
                let index = seq % self.partners.len();
                let partner = &self.partners[index];
                let data = serde_json::json!({"customer_id": "cus_204", "final_cost": "1.20", "currency": "USD", "usage_id": format!("usage_{seq}")});
                let mut event = serde_json::json!({"event_id": id, "type": "usage.finalized",
                    "schema_version": 1, "partner_id": partner, "data": data});
                if subjects > 0 {
                    event["subject"] = serde_json::json!({"type": "customer", "id": format!("cus_{}", seq % subjects)});
                }
                ((id, index), event)
            })
            .unzip();
        let body = match <[_; 1]>::try_from(events) {
            Ok([one]) => one.to_string(),
            Err(many) => serde_json::Value::Array(many).to_string(),
        };
        (ids, body)
    }

    /// POSTs the body; returns its event ids with the instant the POST started.
    async fn post(
        &self,
        client: &awc::Client,
        (ids, body): (Vec<(String, usize)>, String),
    ) -> anyhow::Result<(Vec<(String, usize)>, Instant)> {
        let at = Instant::now();
        let mut res = client
            .post(&self.url)
            .insert_header(("authorization", format!("Bearer {}", self.key)))
            .insert_header(("content-type", "application/json"))
            .send_body(body)
            .await
            .map_err(|e| anyhow::anyhow!("POST /v1/events: {e}"))?;
        if res.status() != 201 {
            let body = res.body().await.unwrap_or_default();
            anyhow::bail!(
                "POST /v1/events: {} {}",
                res.status(),
                String::from_utf8_lossy(&body)
            );
        }
        Ok((ids, at))
    }
}
