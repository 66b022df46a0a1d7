//! The Linux peer's cost line (`linux-costs: ...`, vigil-proto's
//! [`LinuxCosts`]) found in a serial log.

pub use vigil_proto::linux_peer::LinuxCosts;

use crate::guest::test_output::strip_core_prefix;

/// The first cost line in `serial`, if the peer printed one.
pub fn find_linux_costs(serial: &str) -> Option<LinuxCosts> {
    serial
        .lines()
        .filter_map(|line| strip_core_prefix(line).map(|(_core, message)| message))
        .find_map(LinuxCosts::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_found_after_its_prefix() {
        let serial = "[    0.1] Linux booting\n[c2] linux-costs: idle_choice=default idle_driver=none cpus=2 iterations=10 voluntary_switches=20 involuntary_switches=1 rescheduling_ipis=19 function_call_ipis=3\n";
        let costs = find_linux_costs(serial).unwrap();
        assert_eq!((costs.cpus, costs.rescheduling_ipis), (2, 19));
        assert_eq!(find_linux_costs("[c0] laplace: size=4\n"), None);
    }
}
