//! The boot parameters stress and bench pass, built from typed settings so
//! every run spells them the same way (and its reproduce command too).

use std::fmt;

use serde::Serialize;

use crate::args::{Backoff, IpiFault, Pool, WakePolicy, Watchdog};

/// `workload=` values xtask drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuestWorkload {
    /// Fork-join Jacobi over the scheduler and the wake protocol.
    Laplace,
    /// The same grid with bare IPI-released workers (the floor).
    Floor,
    /// Every core idles for `idle_ms`.
    Idle,
}

impl GuestWorkload {
    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Laplace => "laplace",
            Self::Floor => "floor",
            Self::Idle => "idle",
        }
    }
}

impl fmt::Display for GuestWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parameters of one run-mode boot; `None` leaves the kernel's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelParams {
    /// `workload=`.
    pub workload: Option<GuestWorkload>,
    /// `policy=` (must be `None` for an `idle-poll` build).
    pub policy: Option<WakePolicy>,
    /// `seed=`.
    pub seed: Option<u64>,
    /// `chaos=on|off`.
    pub chaos: Option<bool>,
    /// `watchdog=off|MS`.
    pub watchdog: Option<Watchdog>,
    /// `size=`.
    pub size: Option<u32>,
    /// `iterations=`.
    pub iterations: Option<u32>,
    /// `idle_ms=`.
    pub idle_ms: Option<u32>,
    /// `fault=` (an IPI fault).
    pub fault: Option<IpiFault>,
    /// `pool=`.
    pub pool: Option<Pool>,
    /// `backoff=`.
    pub backoff: Option<Backoff>,
}

impl KernelParams {
    /// The `key=value` tokens, in a fixed order.
    pub fn to_params(&self) -> Vec<String> {
        let mut params = Vec::new();
        if let Some(workload) = self.workload {
            params.push(format!("workload={workload}"));
        }
        if let Some(policy) = self.policy {
            params.push(format!("policy={policy}"));
        }
        if let Some(seed) = self.seed {
            params.push(format!("seed={seed}"));
        }
        if let Some(chaos) = self.chaos {
            params.push(format!("chaos={}", if chaos { "on" } else { "off" }));
        }
        if let Some(watchdog) = self.watchdog {
            params.push(format!("watchdog={}", watchdog.param_value()));
        }
        if let Some(fault) = self.fault {
            params.push(format!("fault={fault}"));
        }
        if let Some(size) = self.size {
            params.push(format!("size={size}"));
        }
        if let Some(iterations) = self.iterations {
            params.push(format!("iterations={iterations}"));
        }
        if let Some(idle_ms) = self.idle_ms {
            params.push(format!("idle_ms={idle_ms}"));
        }
        if let Some(pool) = self.pool {
            params.push(format!("pool={pool}"));
        }
        if let Some(backoff) = self.backoff {
            params.push(format!("backoff={backoff}"));
        }
        params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_come_out_in_order() {
        let params = KernelParams {
            workload: Some(GuestWorkload::Laplace),
            policy: Some(WakePolicy::RacyFlag),
            seed: Some(7),
            chaos: Some(true),
            watchdog: Some(Watchdog::Off),
            size: Some(64),
            iterations: Some(300),
            idle_ms: None,
            fault: Some(IpiFault::DroppedIpi),
            pool: Some(Pool::Pinned),
            backoff: Some(Backoff::Off),
        };
        assert_eq!(
            params.to_params().join(" "),
            "workload=laplace policy=racy-flag seed=7 chaos=on watchdog=off fault=dropped-ipi size=64 iterations=300 pool=pinned backoff=off"
        );
        assert!(KernelParams::default().to_params().is_empty());
        let idle = KernelParams {
            workload: Some(GuestWorkload::Idle),
            idle_ms: Some(3000),
            chaos: Some(false),
            watchdog: Some(Watchdog::Ms(200)),
            ..KernelParams::default()
        };
        assert_eq!(
            idle.to_params().join(" "),
            "workload=idle chaos=off watchdog=200 idle_ms=3000"
        );
    }
}
