//! The endpoint actor's places in the outbound connection budget (see
//! `delivery::budget`): one per socket its client may open. It asks in line
//! for its first, takes more while nobody waits, and gives them all back, with
//! its client and the client's kept-alive connections, when it has nothing in
//! flight and it sleeps, idles, or others are waiting for their turn.

use actix::prelude::*;

use super::EndpointActor;

impl EndpointActor {
    /// Places held: how many requests may be on the wire at once.
    pub(super) fn places(&self) -> usize {
        self.places.len()
    }

    /// Takes free places, up to what the queue and the cap can use, when
    /// nobody is waiting in line for one.
    pub(super) fn grow_places(&mut self, cap: usize) {
        let useful = cap.min(self.in_flight + self.queue.len());
        while self.places.len() < useful {
            match self.shared.budget.try_take() {
                Some(place) => self.places.push(place),
                None => break,
            }
        }
    }

    /// Takes a first place if one is free and nobody is in line; otherwise
    /// joins the line and pumps again once it has one. True if it has one now.
    pub(super) fn first_place(&mut self, ctx: &mut Context<Self>) -> bool {
        if !self.places.is_empty() {
            return true;
        }
        if let Some(place) = self.shared.budget.try_take() {
            self.places.push(place);
            self.turn_used = false;
            return true;
        }
        self.ask_for_place(ctx);
        false
    }

    fn ask_for_place(&mut self, ctx: &mut Context<Self>) {
        if self.asking {
            return;
        }
        self.asking = true;
        let place = self.shared.budget.take();
        ctx.spawn(place.into_actor(self).map(|place, act, ctx| {
            act.asking = false;
            if let Some(place) = place {
                act.places.push(place);
                act.turn_used = false;
            }
            act.pump(ctx);
        }));
    }

    /// Others wait for a place and this actor has had its turn: it sends what
    /// it holds, claims no more, and gives its places back when done.
    pub(super) fn should_yield(&self) -> bool {
        self.turn_used && !self.places.is_empty() && self.shared.budget.contended()
    }

    /// Drops the client (closing its kept-alive connections) and gives the
    /// places back. Only with nothing on the wire: a socket in use keeps its
    /// place until its request ends.
    pub(super) fn give_back_places(&mut self) {
        if self.in_flight > 0 || self.places.is_empty() {
            return;
        }
        self.client.drop_client();
        self.places.clear();
        self.places.shrink_to_fit();
        if self.queue.is_empty() {
            self.queue.shrink_to_fit();
        }
    }
}
