//! The Laplace workload computes what the host computes, bit for bit.

use qemu_tests::{boot, describe};
use xtask::Verdict;

/// Debug kernel, 4 vCPUs on 2 host cores: seconds, with room to spare.
const LAPLACE_TIMEOUT_S: u64 = 300;

/// Both pools, one boot each: the pinned pool splits the grid into one
/// block per core, the stealing pool into the chunks `chunks=` fixes (its
/// default count depends on the host); the result is the same, bit for
/// bit, and the host's.
#[test]
fn laplace_at_4_cores_passes_with_the_host_checksum_verified() {
    for (pool, blocks) in [("pool=pinned", 4), ("pool=steal chunks=3", 3)] {
        let mut params = vec!["workload=laplace", "size=64", "iterations=1000"];
        params.extend(pool.split(' '));
        let outcome = boot(4, LAPLACE_TIMEOUT_S, &params);
        assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
        let [check] = outcome.checksum_checks.as_slice() else {
            panic!(
                "expected one checked result line, got {:?}\n{}",
                outcome.checksum_checks,
                describe(&outcome)
            );
        };
        assert!(
            check.matches(),
            "{}\n{}",
            check.describe(),
            describe(&outcome)
        );
        assert_eq!(
            check.guest.workers,
            blocks,
            "{pool}: {}",
            describe(&outcome)
        );
        // The kernel's known answer for 64x64 after 1000 iterations.
        assert_eq!(check.guest.checksum, 0x8619_c703_5439_8c3d);
        assert_eq!(check.guest.residual, 252_862_090);
        assert_eq!(
            check.describe(),
            "vigil: laplace checksum matches the host (0x8619c70354398c3d)"
        );
    }
}
