//! Checks every `laplace:`/`floor:` result the kernel printed against the
//! host's own computation ([`crate::guest::laplace_reference`]): a run whose
//! residual or checksum differs by one bit is failed as a checksum
//! mismatch. Every result is recomputed, whatever its size: the host does
//! the same arithmetic far faster than the TCG guest that printed it.

use serde::{Deserialize, Serialize};

use crate::guest::laplace_reference::{self, LaplaceResult};
use crate::guest::run_output::{GridResult, grid_results};

/// Grid sides the kernel accepts (`size=`): vigil-proto's range, as sizes.
pub const GRID_SIZE_RANGE: std::ops::RangeInclusive<usize> = std::ops::RangeInclusive::new(
    *vigil_proto::boot_params::GRID_SIZE_RANGE.start() as usize,
    *vigil_proto::boot_params::GRID_SIZE_RANGE.end() as usize,
);

/// One result line and what the host expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecksumCheck {
    /// What the kernel printed.
    pub guest: GridResult,
    /// What the host computed (`None`: the guest printed a size outside
    /// the kernel's own range, which no correct run does).
    pub host: Option<LaplaceResult>,
}

impl ChecksumCheck {
    /// Whether the guest's residual and checksum are the host's, bit for
    /// bit.
    pub fn matches(&self) -> bool {
        self.host.is_some_and(|host| {
            host.residual == self.guest.residual && host.checksum == self.guest.checksum
        })
    }

    /// `vigil: laplace checksum matches the host (0x...)`, or what differs.
    pub fn describe(&self) -> String {
        let workload = self.guest.workload.name();
        let Some(host) = self.host else {
            return format!(
                "vigil: {workload} checksum MISMATCH: size={} is outside the kernel's {}..={}",
                self.guest.size,
                GRID_SIZE_RANGE.start(),
                GRID_SIZE_RANGE.end()
            );
        };
        if self.matches() {
            format!(
                "vigil: {workload} checksum matches the host ({:#018x})",
                host.checksum
            )
        } else {
            format!(
                "vigil: {workload} checksum MISMATCH (size={} iterations={}): guest residual={} checksum={:#018x}, host residual={} checksum={:#018x}",
                self.guest.size,
                self.guest.iterations,
                self.guest.residual,
                self.guest.checksum,
                host.residual,
                host.checksum
            )
        }
    }
}

/// Checks every result line in `serial`.
pub fn check_serial(serial: &str) -> Vec<ChecksumCheck> {
    grid_results(serial).into_iter().map(check).collect()
}

/// Checks one result.
pub fn check(guest: GridResult) -> ChecksumCheck {
    let host = usize::try_from(guest.size)
        .ok()
        .filter(|size| GRID_SIZE_RANGE.contains(size))
        .map(|size| laplace_reference::cached(size, guest.iterations));
    ChecksumCheck { guest, host }
}

/// The first check that failed, if any.
pub fn first_mismatch(checks: &[ChecksumCheck]) -> Option<&ChecksumCheck> {
    checks.iter().find(|check| !check.matches())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "[c0] laplace: size=64 iterations=300 workers=4 elapsed_us=1 residual=759484750 checksum=0x22b50accc8dd2c19\n";

    #[test]
    fn the_kernels_answer_matches() {
        let checks = check_serial(GOOD);
        assert_eq!(checks.len(), 1);
        assert!(checks[0].matches());
        assert_eq!(
            checks[0].describe(),
            "vigil: laplace checksum matches the host (0x22b50accc8dd2c19)"
        );
        assert!(first_mismatch(&checks).is_none());
    }

    #[test]
    fn one_bit_off_is_a_mismatch() {
        let bad = GOOD.replace("0x22b50accc8dd2c19", "0x22b50accc8dd2c18");
        let checks = check_serial(&bad);
        assert!(!checks[0].matches());
        assert!(checks[0].describe().contains("MISMATCH"));
        let floor = GOOD
            .replace("laplace:", "floor:")
            .replace("residual=759484750", "residual=759484751");
        let checks = check_serial(&floor);
        let mismatch = first_mismatch(&checks).unwrap();
        assert!(
            mismatch
                .describe()
                .starts_with("vigil: floor checksum MISMATCH"),
            "{}",
            mismatch.describe()
        );
    }

    #[test]
    fn a_size_the_kernel_never_runs_is_a_mismatch_not_an_allocation() {
        let checks = check_serial(&GOOD.replace("size=64", "size=99999999999"));
        assert!(!checks[0].matches());
        assert!(
            checks[0]
                .describe()
                .contains("outside the kernel's 4..=4096")
        );
    }

    #[test]
    fn no_result_line_nothing_to_check() {
        assert!(check_serial("[c0] no results here\n").is_empty());
    }
}
