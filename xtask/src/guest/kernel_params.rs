//! The boot parameters stress and bench pass, built from typed settings so
//! every run spells them the same way (and its reproduce command too).

use std::fmt;

use serde::Serialize;
use vigil_proto::boot_params::{ParamLine, Workload};

use crate::guest::settings::{Backoff, IpiFault, Pool, WakePolicy, Watchdog};

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
    /// The kernel's workload it selects.
    pub fn workload(self) -> Workload {
        match self {
            Self::Laplace => Workload::Laplace,
            Self::Floor => Workload::Floor,
            Self::Idle => Workload::Idle,
        }
    }

    /// The kernel's name (vigil-proto's).
    pub fn name(self) -> &'static str {
        self.workload().name()
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
    /// The kernel's parameter line for these settings.
    pub fn param_line(&self) -> ParamLine {
        ParamLine {
            workload: self.workload.map(GuestWorkload::workload),
            policy: self.policy.map(WakePolicy::policy),
            seed: self.seed,
            chaos: self.chaos,
            watchdog: self.watchdog.map(Watchdog::setting),
            fault: self.fault.map(IpiFault::fault),
            size: self.size,
            iterations: self.iterations,
            idle_ms: self.idle_ms,
            pool: self.pool.map(Pool::pool),
            backoff: self.backoff.map(|backoff| backoff.backoff().mode()),
            ..ParamLine::default()
        }
    }

    /// The `key=value` tokens, in vigil-proto's fixed order.
    pub fn to_params(&self) -> Vec<String> {
        self.param_line().tokens()
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

    #[test]
    fn params_parse_back_to_the_settings() {
        let params = KernelParams {
            workload: Some(GuestWorkload::Floor),
            policy: Some(WakePolicy::AlwaysIpi),
            watchdog: Some(Watchdog::Ms(50)),
            fault: Some(IpiFault::StrandedSteal),
            pool: Some(Pool::Steal),
            backoff: Some(Backoff::Adaptive),
            ..KernelParams::default()
        };
        let parsed = vigil_proto::boot_params::parse(&params.to_params().join(" ")).unwrap();
        assert_eq!(parsed.workload, Workload::Floor);
        assert_eq!(parsed.policy, vigil_proto::Policy::AlwaysIpi);
        assert_eq!(parsed.watchdog, vigil_proto::boot_params::Watchdog::Ms(50));
        assert_eq!(parsed.fault, vigil_proto::boot_params::Fault::StrandedSteal);
        assert_eq!(parsed.pool, Some(vigil_proto::boot_params::Pool::Steal));
        for workload in [
            GuestWorkload::Laplace,
            GuestWorkload::Floor,
            GuestWorkload::Idle,
        ] {
            assert_eq!(
                serde_json::to_string(&workload).unwrap(),
                format!("\"{}\"", workload.name())
            );
        }
    }
}
