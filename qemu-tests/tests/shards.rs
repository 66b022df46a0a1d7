//! A campaign split into shards and merged again is the whole campaign:
//! the same boots with the same seeds and reproduce commands, and the same
//! table (its counts; the timing columns are each boot's own).

use qemu_tests::kernel;
use xtask::WakePolicy;
use xtask::campaign::json_file::write_json;
use xtask::stress::report::{self as stress_report, StressJson};
use xtask::stress::runner::{StressConfig, StressRun, run_stress};
use xtask::stress::shard::{Shard, merge, read_stress_file};

fn campaign(shard: Option<Shard>) -> StressConfig {
    StressConfig {
        iterations: Some(10),
        base_seed: 31337,
        stall_s: 30,
        timeout_s: 300,
        jobs: 1,
        shard,
        ..StressConfig::new(vec![1, 2], 2, WakePolicy::StateMachine)
    }
}

fn boot(config: &StressConfig) -> Vec<StressRun> {
    run_stress(config, kernel(), |_| {}).unwrap_or_else(|err| panic!("stress: {err}"))
}

/// The table's counts per core count (not its timings).
fn counts(config: &StressConfig, runs: &[StressRun]) -> Vec<(u32, usize, usize, usize, usize)> {
    stress_report::summarize(&config.scope.smp, runs)
        .iter()
        .map(|row| (row.smp, row.runs, row.passed, row.stuck, row.other_failures))
        .collect()
}

#[test]
fn three_shards_merged_are_the_whole_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let whole_config = campaign(None);
    let whole = boot(&whole_config);
    assert_eq!(whole.len(), 4);

    let mut files = Vec::new();
    for index in 1..=3 {
        let config = campaign(Some(Shard { index, count: 3 }));
        let runs = boot(&config);
        let path = dir.path().join(format!("shard{index}.json"));
        let summary = stress_report::summarize(&config.scope.smp, &runs);
        write_json(
            &path,
            &StressJson {
                config: &config,
                build: config.build.variant_name(),
                summary: &summary,
                runs: &runs,
            },
        )
        .unwrap();
        files.push((path.clone(), read_stress_file(&path).unwrap()));
    }
    // Run r at the c-th core count is shard (r + c) mod 3 + 1's: shard 1
    // has run 1 at 1 core, shard 2 run 1 at 2 cores and run 2 at 1 core,
    // shard 3 run 2 at 2 cores.
    let sizes: Vec<usize> = files.iter().map(|(_, file)| file.runs.len()).collect();
    assert_eq!(sizes, [1, 2, 1]);

    let merged = merge(files).unwrap_or_else(|err| panic!("merge: {err}"));
    let planned = |runs: &[StressRun]| -> Vec<_> {
        runs.iter()
            .map(|run| {
                (
                    run.planned.order,
                    run.planned.boot.smp,
                    run.planned.seed,
                    run.planned.boot.reproduce.clone(),
                )
            })
            .collect()
    };
    assert_eq!(planned(&merged.runs), planned(&whole));
    assert!(merged.runs.iter().all(|run| run.record.class.is_pass()));
    assert_eq!(
        counts(&merged.config, &merged.runs),
        counts(&whole_config, &whole)
    );
}
