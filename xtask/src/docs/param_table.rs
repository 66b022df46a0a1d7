//! The kernel-parameter and fault tables of `docs/harness.md`, from
//! vigil-proto: every key in the kernel's order, its values (named values,
//! ranges), its default and its one-line summary, so that a key, a value, a
//! range or a default changed in proto changes the table.

use vigil_proto::boot_params::{
    BACKOFF_US_RANGE, Backoff, BootParams, CHUNKS_RANGE, DEFAULT_GRID_SIZE, DEFAULT_IDLE_MS,
    DEFAULT_ITERATIONS, DEFAULT_SEED, DEFAULT_WATCHDOG_MS, Fault, GRID_SIZE_RANGE, IDLE_MS_RANGE,
    ITERATIONS_RANGE, Key, Mode, OFF, PARALLELISM_RANGE, POLICY_PARAMS, POLLERS_RANGE, Pool,
    Release, Switch, Trial, WATCHDOG_MS_RANGE, Workload, backoff_value,
};

/// `a`, `b`, `c` in backticks.
fn names<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    values
        .into_iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `key=` takes and its default, as the table's two middle columns.
fn values_and_default(key: Key) -> (String, String) {
    let defaults = BootParams::default();
    match key {
        Key::Mode => (
            names(Mode::ALL.iter().map(|m| m.name())),
            format!("`{}`", defaults.mode.name()),
        ),
        Key::Test => ("a substring of test names".into(), "all tests".into()),
        Key::Fault => (
            "see the fault table".into(),
            format!("`{}`", defaults.fault.name()),
        ),
        Key::Workload => (
            names(Workload::ALL.iter().map(|w| w.name())),
            format!("`{}`", defaults.workload.name()),
        ),
        Key::Size => (
            format!("{}..={}", GRID_SIZE_RANGE.start(), GRID_SIZE_RANGE.end()),
            DEFAULT_GRID_SIZE.to_string(),
        ),
        Key::Iterations => (
            format!("{}..={}", ITERATIONS_RANGE.start(), ITERATIONS_RANGE.end()),
            DEFAULT_ITERATIONS.to_string(),
        ),
        Key::Policy => (
            names(POLICY_PARAMS.iter().map(|p| p.name())),
            format!("`{}`", defaults.policy.name()),
        ),
        Key::Seed => (
            "a u64, decimal or `0x` hex".into(),
            DEFAULT_SEED.to_string(),
        ),
        Key::Chaos => (
            names(Switch::ALL.iter().map(|s| s.name())),
            format!("`{}`", Switch::from_bool(defaults.chaos).name()),
        ),
        Key::Backoff => (
            format!(
                "{}, or a poll time in µs {}..={}",
                names(Backoff::ALL.iter().map(|b| b.name())),
                BACKOFF_US_RANGE.start(),
                BACKOFF_US_RANGE.end()
            ),
            format!("`{}`", backoff_value(defaults.backoff)),
        ),
        Key::Watchdog => (
            format!(
                "a scan period in ms {}..={}, or `{OFF}`",
                WATCHDOG_MS_RANGE.start(),
                WATCHDOG_MS_RANGE.end()
            ),
            format!("{DEFAULT_WATCHDOG_MS} ms"),
        ),
        Key::IdleMs => (
            format!("{}..={}", IDLE_MS_RANGE.start(), IDLE_MS_RANGE.end()),
            DEFAULT_IDLE_MS.to_string(),
        ),
        Key::Release => (
            names(Release::ALL.iter().map(|r| r.name())),
            format!("`{}`", defaults.release.name()),
        ),
        Key::Pool => (
            names(Pool::ALL.iter().map(|p| p.name())),
            "the round plan's".into(),
        ),
        Key::Parallelism => (
            format!(
                "{}..={}",
                PARALLELISM_RANGE.start(),
                PARALLELISM_RANGE.end()
            ),
            "measured at boot, raised by a round trial".into(),
        ),
        Key::Chunks => (
            format!("{}..={}", CHUNKS_RANGE.start(), CHUNKS_RANGE.end()),
            "the round plan's".into(),
        ),
        Key::Pollers => (
            format!("{}..={}", POLLERS_RANGE.start(), POLLERS_RANGE.end()),
            "the host parallelism".into(),
        ),
        Key::Trial => (
            names(Trial::ALL.iter().map(|t| t.name())),
            format!("`{}`", defaults.trial.name()),
        ),
    }
}

/// The kernel-parameter table (Markdown).
pub fn kernel_parameter_table() -> String {
    let mut out = String::from("| key | values | default | what it sets |\n|---|---|---|---|\n");
    for key in Key::ALL {
        let (values, default) = values_and_default(key);
        out.push_str(&format!(
            "| `{}` | {values} | {default} | {} |\n",
            key.name(),
            key.summary()
        ));
    }
    out
}

/// The fault table (Markdown).
pub fn fault_table() -> String {
    let mut out = String::from("| `fault=` | what it injects |\n|---|---|\n");
    for fault in Fault::ALL {
        out.push_str(&format!("| `{}` | {} |\n", fault.name(), fault.summary()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_and_fault_has_a_row() {
        let table = kernel_parameter_table();
        assert_eq!(table.lines().count(), 2 + Key::ALL.len());
        for key in Key::ALL {
            assert!(table.contains(&format!("| `{}` |", key.name())));
        }
        let faults = fault_table();
        for fault in Fault::ALL {
            assert!(faults.contains(&format!("| `{}` |", fault.name())));
        }
        assert!(table.contains("| `size` | 4..=4096 | 64 |"), "{table}");
    }
}
