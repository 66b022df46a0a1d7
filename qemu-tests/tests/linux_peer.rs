//! The Linux peer: Debian's kernel with the project's initramfs boots on
//! the same QEMU machine as Vigil, and its `/init` computes what the host
//! computes, bit for bit, and reports what Linux paid. `cargo xtask test`
//! runs this only when it could fetch Debian's kernel package, and counts
//! it as skipped, with the reason, when it could not; run by hand without
//! the package, it fails with the fetch's error.

use xtask::runner::linux_peer::build_linux_peer;
use xtask::runner::qemu::{Guest, RunConfig, run_guest};
use xtask::{Verdict, runner::platform::Machine};

use vigil_proto::linux_peer::LinuxIdle;

/// Linux's boot at 2 vCPUs took 9-16 s here; the loop is milliseconds.
const LINUX_PEER_TIMEOUT_S: u64 = 300;

#[test]
fn linux_peer_at_2_cores_matches_the_host_and_reports_its_costs() {
    let peer = build_linux_peer().unwrap_or_else(|err| panic!("the Linux peer: {err}"));
    let config = RunConfig {
        smp: 2,
        machine: Machine::Pc,
        timeout_s: Some(LINUX_PEER_TIMEOUT_S),
        params: ["size=16", "iterations=50", "pool=pinned"]
            .map(str::to_string)
            .to_vec(),
        ..RunConfig::default()
    };
    let outcome = run_guest(&config, Guest::LinuxPeer(&peer, LinuxIdle::Default))
        .unwrap_or_else(|err| panic!("could not boot QEMU: {err}"));
    let describe = qemu_tests::describe(&outcome);
    assert_eq!(outcome.verdict, Verdict::Success, "{describe}");
    let [check] = outcome.checksum_checks.as_slice() else {
        panic!(
            "expected one checked result line, got {:?}\n{describe}",
            outcome.checksum_checks
        );
    };
    assert!(check.matches(), "{}\n{describe}", check.describe());
    assert_eq!(
        (
            check.guest.size,
            check.guest.iterations,
            check.guest.workers
        ),
        (16, 50, 2),
        "{describe}"
    );
    let costs = xtask::guest::linux_costs::find_linux_costs(&outcome.serial)
        .unwrap_or_else(|| panic!("no cost line\n{describe}"));
    assert_eq!(
        (costs.idle, costs.cpus, costs.iterations),
        (LinuxIdle::Default, 2, 50),
        "{describe}"
    );
}
