//! Campaigns split over machines: `--shard K/N` boots the K-th of N
//! disjoint slices of a campaign's plan, each boot with the seed it has in
//! the whole campaign, and `stress merge` joins the shards' JSON files back
//! into the whole campaign's table.
//!
//! Run `r` (0-based) at the `c`-th core count of `--smp` belongs to shard
//! `(r + c) mod N + 1`: a diagonal over the plan, so that with at least N
//! runs every shard gets every core count (a plain `i mod N` over the plan
//! gave each shard one core count whenever N divides their number) and N
//! machines finish at about the same time.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, XtaskError};
use crate::stress::runner::{StressConfig, StressRun};

/// One slice of a campaign: `index` of `count`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which slice, 1..=count.
    pub index: u32,
    /// How many slices.
    pub count: u32,
}

impl Shard {
    /// Whether run `run` (0-based) at the `smp_position`-th core count is
    /// in this slice.
    pub fn holds(self, run: u32, smp_position: usize) -> bool {
        (u64::from(run) + smp_position as u64) % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `K/N` with 1 <= K <= N (for `--shard`).
pub fn parse_shard(text: &str) -> std::result::Result<Shard, String> {
    let bad = || format!("`{text}` is not K/N with 1 <= K <= N (e.g. --shard 2/3)");
    let (index, count) = text.split_once('/').ok_or_else(bad)?;
    let index: u32 = index.trim().parse().map_err(|_| bad())?;
    let count: u32 = count.trim().parse().map_err(|_| bad())?;
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

/// A stress JSON file as `--json` writes it (its summary is recomputed).
#[derive(Debug, Deserialize)]
pub struct StressFile {
    /// The campaign's settings.
    pub config: StressConfig,
    /// Build profile and features.
    pub build: String,
    /// Every run.
    pub runs: Vec<StressRun>,
}

/// Reads one `--json` file.
pub fn read_stress_file(path: &Path) -> Result<StressFile> {
    let text = fs::read_to_string(path)
        .map_err(|err| XtaskError::usage(format!("reading {}: {err}", path.display())))?;
    serde_json::from_str(&text).map_err(|err| {
        XtaskError::usage(format!(
            "{} is not a stress --json file: {err}",
            path.display()
        ))
    })
}

/// The whole campaign, joined from its shards.
#[derive(Debug)]
pub struct Merged {
    /// The campaign's settings (no shard; the first file's jobs).
    pub config: StressConfig,
    /// Build profile and features.
    pub build: String,
    /// Every run, in the whole plan's order.
    pub runs: Vec<StressRun>,
}

/// Joins the shards of one campaign. They must be the same campaign (the
/// same settings but for the shard and the jobs per machine), every shard
/// of it exactly once, and together every boot of its plan. Anything else
/// is a usage error naming what is wrong.
pub fn merge(files: Vec<(PathBuf, StressFile)>) -> Result<Merged> {
    let Some((first_path, first)) = files.first() else {
        return Err(XtaskError::usage("stress merge needs at least one file"));
    };
    let campaign = |config: &StressConfig| StressConfig {
        shard: None,
        jobs: 0,
        ..config.clone()
    };
    let whole = campaign(&first.config);
    let count = first.config.shard.map_or(1, |shard| shard.count);
    let mut seen = BTreeSet::new();
    for (path, file) in &files {
        if campaign(&file.config) != whole || file.build != first.build {
            return Err(XtaskError::usage(format!(
                "{} is another campaign than {} (settings or build differ)",
                path.display(),
                first_path.display()
            )));
        }
        let index = match file.config.shard {
            Some(shard) if shard.count == count => shard.index,
            None if count == 1 => 1,
            other => {
                return Err(XtaskError::usage(format!(
                    "{} is shard {} of a campaign split in {count}",
                    path.display(),
                    other.map_or("none".to_string(), |shard| shard.to_string())
                )));
            }
        };
        if !seen.insert(index) {
            return Err(XtaskError::usage(format!(
                "shard {index}/{count} given twice ({})",
                path.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !seen.contains(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(XtaskError::usage(format!(
            "missing shard(s) {}",
            missing.join(", ")
        )));
    }
    let build = first.build.clone();
    let first_config = first.config.clone();
    let mut runs: Vec<StressRun> = files.into_iter().flat_map(|(_, file)| file.runs).collect();
    runs.sort_by_key(|run| run.planned.order);
    let planned = whole.plan();
    let orders: Vec<u64> = runs.iter().map(|run| run.planned.order).collect();
    let expected: Vec<u64> = planned.iter().map(|run| run.order).collect();
    if orders != expected {
        return Err(XtaskError::usage(format!(
            "the shards hold {} boot(s), the campaign has {} (a shard stopped early or was cut short)",
            orders.len(),
            expected.len()
        )));
    }
    Ok(Merged {
        config: StressConfig {
            shard: None,
            ..first_config
        },
        build,
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::boot_record::BootRecord;
    use crate::campaign::run_class::RunClass;
    use crate::campaign::scope::CampaignScope;
    use crate::guest::settings::WakePolicy;
    use crate::stress::runner::PlannedRun;

    #[test]
    fn shards_parse_and_bad_ones_say_why() {
        assert_eq!(parse_shard("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(parse_shard("1/1").unwrap().to_string(), "1/1");
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/2/3", ""] {
            let err = parse_shard(bad).unwrap_err();
            assert!(err.contains("K/N"), "{bad}: {err}");
        }
    }

    fn campaign(shard: Option<Shard>) -> StressConfig {
        StressConfig {
            base_seed: 42,
            shard,
            ..StressConfig::new(vec![4, 8, 16], 5, WakePolicy::StateMachine)
        }
    }

    #[test]
    fn the_shards_partition_the_plan_with_the_same_seeds() {
        let whole = campaign(None).plan();
        assert_eq!(whole.len(), 15);
        let mut joined: Vec<PlannedRun> = (1..=4)
            .flat_map(|index| campaign(Some(Shard { index, count: 4 })).plan())
            .collect();
        joined.sort_by_key(|run| run.order);
        assert_eq!(joined, whole);
        // Each shard has every core count, also when the shard count
        // divides the number of core counts.
        for count in [2, 3, 4] {
            for index in 1..=count {
                let config = StressConfig {
                    scope: CampaignScope {
                        smp: vec![4, 8, 16, 32],
                        ..campaign(None).scope
                    },
                    ..campaign(Some(Shard { index, count }))
                };
                let smps: BTreeSet<u32> = config.plan().iter().map(|run| run.boot.smp).collect();
                assert_eq!(smps, BTreeSet::from([4, 8, 16, 32]), "{index}/{count}");
            }
        }
    }

    fn ran(planned: PlannedRun, class: RunClass) -> StressRun {
        StressRun {
            planned,
            record: BootRecord::without_output(class, String::new(), "success"),
        }
    }

    fn shard_file(index: u32, count: u32) -> (PathBuf, StressFile) {
        let config = StressConfig {
            jobs: index as usize,
            ..campaign(Some(Shard { index, count }))
        };
        let runs = config
            .plan()
            .into_iter()
            .map(|planned| {
                let class = if planned.order == 3 {
                    RunClass::Stuck
                } else {
                    RunClass::Passed
                };
                ran(planned, class)
            })
            .collect();
        (
            PathBuf::from(format!("shard{index}.json")),
            StressFile {
                config,
                build: "debug".to_string(),
                runs,
            },
        )
    }

    #[test]
    fn merged_shards_are_the_whole_campaign_in_plan_order() {
        let merged = merge(vec![shard_file(3, 3), shard_file(1, 3), shard_file(2, 3)]).unwrap();
        assert_eq!(
            StressConfig {
                jobs: campaign(None).jobs,
                ..merged.config.clone()
            },
            campaign(None)
        );
        let orders: Vec<u64> = merged.runs.iter().map(|run| run.planned.order).collect();
        assert_eq!(orders, (0..15).collect::<Vec<u64>>());
        let whole = campaign(None).plan();
        for (run, planned) in merged.runs.iter().zip(&whole) {
            assert_eq!(&run.planned, planned);
        }
        assert_eq!(merged.runs[3].record.class, RunClass::Stuck);
    }

    #[test]
    fn a_missing_repeated_or_foreign_shard_is_refused() {
        let err = merge(vec![shard_file(1, 3), shard_file(3, 3)]).unwrap_err();
        assert!(err.to_string().contains("missing shard(s) 2/3"), "{err}");
        let err = merge(vec![shard_file(1, 2), shard_file(1, 2)]).unwrap_err();
        assert!(err.to_string().contains("given twice"), "{err}");
        let err = merge(vec![shard_file(1, 2), shard_file(2, 3)]).unwrap_err();
        assert!(err.to_string().contains("split in 2"), "{err}");
        let (path, mut other) = shard_file(2, 2);
        other.config.base_seed = 7;
        let err = merge(vec![shard_file(1, 2), (path, other)]).unwrap_err();
        assert!(err.to_string().contains("another campaign"), "{err}");
        let (path, mut bochs) = shard_file(2, 2);
        bochs.config.bochs = Some(crate::runner::bochs::BochsSettings::default());
        let err = merge(vec![shard_file(1, 2), (path, bochs)]).unwrap_err();
        assert!(err.to_string().contains("another campaign"), "{err}");
        let (path, mut short) = shard_file(2, 2);
        short.runs.pop();
        let err = merge(vec![shard_file(1, 2), (path, short)]).unwrap_err();
        assert!(err.to_string().contains("hold 14 boot(s)"), "{err}");
        assert_eq!(err.exit_code(), 2);
    }
}
