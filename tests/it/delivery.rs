//! Delivery.
