//! `cargo xtask bench --quick` (through the library) boots every policy
//! and writes a JSON file with every field the README documents, and its
//! plots.

use std::path::PathBuf;

use serde_json::Value;
use xtask::cli::BenchArgs;

fn object<'a>(value: &'a Value, what: &str) -> &'a serde_json::Map<String, Value> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not an object: {value}"))
}

fn assert_fields(value: &Value, what: &str, fields: &[&str]) {
    let map = object(value, what);
    for field in fields {
        assert!(map.contains_key(*field), "{what} lacks `{field}`: {value}");
    }
}

#[test]
fn quick_bench_writes_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("bench.json");
    let args = BenchArgs {
        smp: vec![],
        runs: 1,
        sections: vec![],
        variants: vec![],
        peers: vec![],
        json: Some(json_path.clone()),
        plot: dir.path().join("plots"),
        quick: true,
        grid_timeout_s: 60,
        apic: xtask::Apic::Xapic,
        arch: xtask::Arch::X86_64,
        // QEMU on one host core (taskset), as `--host-cores 1`.
        host_cores: vec![1],
    };
    xtask::commands::bench::run(&args).unwrap_or_else(|err| panic!("bench --quick: {err}"));

    let json: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_fields(
        &json,
        "the bench JSON",
        &[
            "config",
            "host_cores",
            "clock_ticks_per_second",
            "wall_s",
            "definitions",
            "summary",
            "runs",
        ],
    );
    assert_fields(
        &json["config"],
        "config",
        &[
            "smp",
            "runs",
            "sync_grid",
            "compute_grid",
            "idle_ms",
            "grid_timeout_s",
            "seed",
        ],
    );
    assert_eq!(json["config"]["smp"], serde_json::json!([1, 2]));

    assert_eq!(
        json["config"]["variants"],
        serde_json::json!(["default", "sm-pinned", "always-ipi", "idle-poll", "floor"])
    );

    // 1 run of: the 5 quick variants x 2 core counts, sync-heavy and
    // compute-heavy, + 3 x 2 (idle: default, always-ipi and idle-poll;
    // no sm-pinned, no floor).
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 26, "{}", json["runs"]);
    for run in runs {
        assert_fields(
            run,
            "a run",
            &[
                "section",
                "variant",
                "smp",
                "params",
                "timeout_s",
                "reproduce",
                "round",
                "status",
                "verdict",
                "wall_s",
                "result",
                "checksums_match",
                "stats",
                "totals",
                "idle",
                "linux_costs",
                "serial",
                "pool",
                // The boot record stress keeps too.
                "apic",
                "class",
                "reason",
                "marked_lines",
                "lost_wakeups",
                "qemu_command",
            ],
        );
        assert_eq!(run["host_cores"], 1, "{run}");
        assert!(
            run["qemu_command"]
                .as_str()
                .is_some_and(|command| command.contains("taskset --cpu-list")),
            "{run}"
        );
        assert!(
            run["reproduce"]
                .as_str()
                .is_some_and(|command| command.starts_with("cargo xtask run --host-cores 1 ")),
            "{run}"
        );
        assert_eq!(run["status"], "ok", "{run}");
        assert_eq!(run["class"], "passed", "{run}");
        let section = run["section"].as_str().unwrap();
        let variant = run["variant"].as_str().unwrap();
        if section == "idle" {
            assert_fields(
                &run["idle"],
                "idle",
                &["wall_s", "qemu_cpu_s", "host_cpu_per_wall"],
            );
        } else {
            assert_eq!(run["checksums_match"], true, "{run}");
            assert_fields(
                &run["result"],
                "result",
                &[
                    "workload",
                    "size",
                    "iterations",
                    "workers",
                    "elapsed_us",
                    "residual",
                    "checksum",
                ],
            );
        }
        if variant != "floor" && section != "idle" {
            assert_fields(
                &run["stats"],
                "stats",
                &[
                    "label",
                    "policy",
                    "tsc_ticks_per_ms",
                    "cores",
                    "wake_latency_us",
                    "host",
                ],
            );
            // The parallelism in force (measured, or raised by a round
            // trial): at least one core at once, at most the boot's.
            let parallelism = run["stats"]["host"]["parallelism"].as_u64().unwrap();
            assert!(
                (1..=run["smp"].as_u64().unwrap()).contains(&parallelism),
                "{run}"
            );
            // On one host core no two vCPUs run at once, so the window
            // saw no second core at once (a look that took a core run
            // while the looker was descheduled for one run beside it
            // would see more), and on more than one core that window is
            // one of two, the first's reading kept beside it
            // (`sched::host_parallelism::wants_second_window`).
            let host = &run["stats"]["host"];
            let seen_milli = host["parallelism_seen_milli"].as_u64().unwrap();
            assert!(
                (1000..1500).contains(&seen_milli),
                "one host core, {seen_milli} thousandths of a core seen at once: {run}"
            );
            if run["smp"].as_u64().unwrap() > 1 {
                assert!(
                    host["first_window_parallelism_milli"].as_u64().unwrap() > 0,
                    "no second core seen, from one window: {run}"
                );
            }
            let expected_policy = match variant {
                "idle-poll" => "poll",
                "always-ipi" | "always-ipi-steal" => "always-ipi",
                "default" => "state-machine",
                sm if sm.starts_with("sm-") => "state-machine",
                other => panic!("unexpected variant {other}"),
            };
            assert_eq!(run["stats"]["policy"], expected_policy, "{run}");
            // The kernel's pool line: which pool ran the rounds, and
            // how many distinct cores ran each (at least one).
            // The default and idle-poll leave the pool to the kernel's
            // round plan (which depends on the host): either pool, with
            // the plan's chunk count printed.
            match variant {
                "sm-pinned" | "sm-pinned-backoff-off" | "always-ipi" => {
                    assert_eq!(run["pool"]["kind"], "pinned", "{run}");
                }
                "default" | "idle-poll" => {
                    let kind = run["pool"]["kind"].as_str().unwrap();
                    assert!(kind == "pinned" || kind == "steal", "{run}");
                }
                _ => assert_eq!(run["pool"]["kind"], "steal", "{run}"),
            }
            assert!(run["pool"]["chunks"].as_u64().unwrap() >= 1, "{run}");
            assert!(
                run["pool"]["cores_per_round_median"].as_u64().unwrap() >= 1,
                "{run}"
            );
            // The pooled rounds' split: a row block takes time, and the
            // rest of a round is printed beside it.
            assert!(
                run["pool"]["round_longest_block_ns"].as_u64().unwrap() > 0,
                "{run}"
            );
            assert!(run["pool"]["round_rest_ns"].is_u64(), "{run}");
            for core in run["stats"]["cores"].as_array().unwrap() {
                assert_fields(
                    core,
                    "a core",
                    &[
                        "core",
                        "ipis_sent",
                        "elided_target_running",
                        "elided_dont_sleep",
                        "elided_already_claimed",
                        "elided_already_pending",
                        "elided_self_target",
                        "elided_polling",
                        "inbox_pushes",
                        "halts",
                        "wakeups",
                        "spurious_wakeups",
                        "switches",
                        "tasks_finished",
                        "polls",
                        "polls_caught",
                        "polls_stolen",
                        "idle_us",
                        "halted_us",
                        "wake_irqs",
                        "wake_ipis_to",
                        "ipi_wakes_with_work",
                        "needless_ipis",
                    ],
                );
            }
            assert_fields(
                &run["totals"],
                "totals",
                &[
                    "cores",
                    "ipis_sent",
                    "wake_ipis_to",
                    "ipi_wakes_with_work",
                    "needless_ipis",
                    "wakeups",
                    "spurious_wakeups",
                    "halts",
                    "wake_irqs",
                ],
            );
        }
    }

    let summary = json["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 26);
    for row in summary {
        assert_fields(
            row,
            "a summary row",
            &[
                "section",
                "variant",
                "smp",
                "ok",
                "timed_out",
                "failed",
                "timeout_s",
                "time_ms",
                "ipis_per_core",
                "wakeups_per_core",
                "spurious_per_core",
                "needless_ipi_share",
                "wake_latency",
                "idle_host_cpu",
                "ratio_to_state_machine",
                "state_machine_over_floor",
                "efficiency",
                "ipis_per_iteration",
                "cores_per_round",
                "round_longest_block_us",
                "round_rest_us",
                "host_cores",
                "measured_parallelism",
            ],
        );
        assert_eq!(row["ok"], 1, "{row}");
        assert_eq!(row["host_cores"], 1, "{row}");
        let measured = if row["section"] == "idle" {
            "idle_host_cpu"
        } else {
            "time_ms"
        };
        assert_fields(
            &row[measured],
            measured,
            &["count", "median", "p90", "min", "max"],
        );
    }
    for plot in [
        "laplace_time.svg",
        "laplace_compute_time.svg",
        "ipis_per_core.svg",
        "idle_host_cpu.svg",
    ] {
        let path: PathBuf = dir.path().join("plots/host-cores-1").join(plot);
        let svg = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        assert!(svg.starts_with("<svg"), "{}", path.display());
    }
}
