//! The routing flags of `hookd endpoint create` and `update`: ordering per
//! subject and what a dead head does.

use clap::ValueEnum;

use crate::domain::ordering::{OnDead, Ordering};

/// `--ordering`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OrderingArg {
    None,
    Subject,
}

impl From<OrderingArg> for Ordering {
    fn from(o: OrderingArg) -> Ordering {
        match o {
            OrderingArg::None => Ordering::None,
            OrderingArg::Subject => Ordering::Subject,
        }
    }
}

/// `--on-dead`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnDeadArg {
    Skip,
    Hold,
}

impl From<OnDeadArg> for OnDead {
    fn from(o: OnDeadArg) -> OnDead {
        match o {
            OnDeadArg::Skip => OnDead::Skip,
            OnDeadArg::Hold => OnDead::Hold,
        }
    }
}
