//! The budget of outbound connections, shared by every endpoint actor of this
//! process. An actor holds one permit per socket its client may have open; it
//! waits for its first in a fair queue (first come, first served, so endpoints
//! take turns), takes more only when nobody waits, and gives them all back when
//! it drops its client. Our own limit therefore never fails an attempt: it
//! makes the attempt wait its turn.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One socket's place in the budget.
pub type Permit = OwnedSemaphorePermit;

#[derive(Debug)]
pub struct Budget {
    places: Arc<Semaphore>,
    total: usize,
    waiting: Arc<AtomicUsize>,
}

/// Counts a waiter for as long as it waits, even if its wait is dropped.
struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Budget {
    pub fn new(total: usize) -> Budget {
        let total = total.max(1);
        Budget {
            places: Arc::new(Semaphore::new(total)),
            total,
            waiting: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }

    /// Places held now.
    pub fn in_use(&self) -> usize {
        self.total - self.places.available_permits()
    }

    /// Actors waiting for their first place.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Someone is waiting: an actor with spare places should give them back.
    pub fn contended(&self) -> bool {
        self.waiting() > 0
    }

    /// A place now, if one is free and nobody is queued for it.
    pub fn try_take(&self) -> Option<Permit> {
        if self.contended() {
            return None;
        }
        self.places.clone().try_acquire_owned().ok()
    }

    /// Waits in line for a place. The semaphore is never closed, so the wait
    /// ends only with a place (`None` would mean it was closed).
    pub fn take(&self) -> impl Future<Output = Option<Permit>> + 'static {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let waiting = Waiting(self.waiting.clone());
        let places = self.places.clone();
        async move {
            let permit = places.acquire_owned().await.ok();
            drop(waiting);
            permit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn places_are_handed_out_in_the_order_they_were_asked_for() {
        let budget = Budget::new(1);
        let first = budget.try_take().expect("a free place");
        let second = budget.take();
        let third = budget.take();
        assert_eq!(budget.waiting(), 2);
        assert!(budget.try_take().is_none(), "nobody jumps the queue");
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (o2, o3) = (order.clone(), order.clone());
        let b = tokio::spawn(async move {
            let p = second.await;
            o2.lock().unwrap().push(2);
            drop(p);
        });
        tokio::task::yield_now().await;
        let a = tokio::spawn(async move {
            let p = third.await;
            o3.lock().unwrap().push(3);
            p
        });
        tokio::task::yield_now().await;
        drop(first);
        b.await.unwrap();
        drop(a.await.unwrap());
        assert_eq!(*order.lock().unwrap(), vec![2, 3]);
        assert_eq!(budget.in_use(), 0);
        assert!(!budget.contended());
    }

    #[tokio::test]
    async fn a_wait_given_up_stops_counting_as_waiting() {
        let budget = Budget::new(1);
        let _held = budget.try_take().expect("a free place");
        let wait = budget.take();
        assert!(budget.contended());
        drop(wait);
        assert!(!budget.contended());
    }
}
