//! Format, parse, compare: every key and every value, and every kind of
//! rejection with the kernel's message.

use super::*;
use alloc::string::ToString;
use alloc::vec::Vec;
use alloc::{format, vec};
use vigil_wake::{BackoffMode, Policy};

/// The line `line` formats to, parsed.
fn round_trip(line: &ParamLine) -> BootParams {
    let text = line.to_string();
    parse(&text).unwrap_or_else(|err| panic!("`{text}` rejected: {err}"))
}

#[test]
fn no_settings_is_the_empty_line_and_the_defaults() {
    assert_eq!(ParamLine::default().to_string(), "");
    assert_eq!(round_trip(&ParamLine::default()), BootParams::default());
    assert_eq!(parse("   "), Ok(BootParams::default()));
    let defaults = BootParams::default();
    assert_eq!(defaults.size, 64);
    assert_eq!(defaults.iterations, 1000);
    assert_eq!(defaults.idle_ms, 3000);
    assert_eq!(defaults.watchdog, Watchdog::Ms(20));
    assert_eq!(defaults.seed, 1);
    assert_eq!(defaults.backoff, BackoffMode::Adaptive);
}

#[test]
fn every_key_round_trips_in_one_line() {
    let line = ParamLine {
        mode: Some(Mode::Test),
        test_filter: Some("heap".to_string()),
        workload: Some(Workload::Idle),
        policy: Some(Policy::RacyFlag),
        seed: Some(0xfeed),
        chaos: Some(true),
        watchdog: Some(Watchdog::Off),
        fault: Some(Fault::StrandedSteal),
        size: Some(128),
        iterations: Some(7),
        idle_ms: Some(250),
        pool: Some(Pool::Pinned),
        backoff: Some(BackoffMode::FixedUs(40)),
        release: Some(Release::Flat),
        parallelism: Some(3),
        chunks: Some(5),
        pollers: Some(0),
        trial: Some(Trial::Always),
    };
    let tokens = line.tokens();
    let keys: Vec<&str> = tokens
        .iter()
        .map(|token| token.split_once('=').expect("key=value").0)
        .collect();
    for key in Key::ALL {
        assert_eq!(
            keys.iter().filter(|k| **k == key.name()).count(),
            1,
            "{key:?} in {tokens:?}"
        );
    }
    assert_eq!(
        line.to_string(),
        "mode=test test=heap workload=idle policy=racy-flag seed=65261 chaos=on watchdog=off fault=stranded-steal size=128 iterations=7 idle_ms=250 pool=pinned backoff=40 release=flat parallelism=3 chunks=5 pollers=0 trial=always"
    );
    assert_eq!(
        round_trip(&line),
        BootParams {
            mode: Mode::Test,
            test_filter: Some("heap".to_string()),
            fault: Fault::StrandedSteal,
            workload: Workload::Idle,
            size: 128,
            iterations: 7,
            policy: Policy::RacyFlag,
            policy_given: true,
            seed: 0xfeed,
            chaos: true,
            backoff: BackoffMode::FixedUs(40),
            watchdog: Watchdog::Off,
            idle_ms: 250,
            release: Release::Flat,
            pool: Some(Pool::Pinned),
            parallelism: Some(3),
            chunks: Some(5),
            pollers: Some(0),
            trial: Trial::Always,
        }
    );
}

#[test]
fn every_named_value_round_trips() {
    for &mode in Mode::ALL {
        let line = ParamLine {
            mode: Some(mode),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).mode, mode);
    }
    for &fault in Fault::ALL {
        let line = ParamLine {
            fault: Some(fault),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).fault, fault);
    }
    for &workload in Workload::ALL {
        let line = ParamLine {
            workload: Some(workload),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).workload, workload);
    }
    for policy in POLICY_PARAMS {
        let line = ParamLine {
            policy: Some(policy),
            ..ParamLine::default()
        };
        let params = round_trip(&line);
        assert_eq!((params.policy, params.policy_given), (policy, true));
    }
    for chaos in [false, true] {
        let line = ParamLine {
            chaos: Some(chaos),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).chaos, chaos);
    }
    for &trial in Trial::ALL {
        let line = ParamLine {
            trial: Some(trial),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).trial, trial);
    }
    for &release in Release::ALL {
        let line = ParamLine {
            release: Some(release),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).release, release);
    }
    for &pool in Pool::ALL {
        let line = ParamLine {
            pool: Some(pool),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).pool, Some(pool));
    }
    for &named in Backoff::ALL {
        let line = ParamLine {
            backoff: Some(named.mode()),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).backoff, named.mode());
    }
    let line = ParamLine {
        watchdog: Some(Watchdog::Off),
        ..ParamLine::default()
    };
    assert_eq!(round_trip(&line).watchdog, Watchdog::Off);
}

#[test]
fn every_number_round_trips_at_both_ends_of_its_range() {
    for size in [*GRID_SIZE_RANGE.start(), *GRID_SIZE_RANGE.end()] {
        let line = ParamLine {
            size: Some(size),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).size, size);
    }
    for iterations in [*ITERATIONS_RANGE.start(), *ITERATIONS_RANGE.end()] {
        let line = ParamLine {
            iterations: Some(iterations),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).iterations, iterations);
    }
    for idle_ms in [*IDLE_MS_RANGE.start(), *IDLE_MS_RANGE.end()] {
        let line = ParamLine {
            idle_ms: Some(idle_ms),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).idle_ms, idle_ms);
    }
    for ms in [*WATCHDOG_MS_RANGE.start(), *WATCHDOG_MS_RANGE.end()] {
        let line = ParamLine {
            watchdog: Some(Watchdog::Ms(ms)),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).watchdog, Watchdog::Ms(ms));
    }
    for us in [*BACKOFF_US_RANGE.start(), *BACKOFF_US_RANGE.end()] {
        let line = ParamLine {
            backoff: Some(BackoffMode::FixedUs(us)),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).backoff, BackoffMode::FixedUs(us));
    }
    for seed in [0, u64::MAX] {
        let line = ParamLine {
            seed: Some(seed),
            ..ParamLine::default()
        };
        assert_eq!(round_trip(&line).seed, seed);
    }
    assert_eq!(parse("seed=0xff").map(|p| p.seed), Ok(255));
    assert_eq!(
        parse("backoff=0x10").map(|p| p.backoff),
        Ok(BackoffMode::FixedUs(16))
    );
}

fn bad(key: Key, value: &str, expected: &str) -> ParamError {
    ParamError::BadValue {
        key,
        value: value.to_string(),
        expected: expected.to_string(),
    }
}

#[test]
fn bad_values_say_what_the_key_takes() {
    let cases = [
        ("mode=walk", bad(Key::Mode, "walk", "one of run|test")),
        (
            "test=",
            bad(Key::Test, "", "a non-empty test-name substring"),
        ),
        (
            "fault=sometimes",
            bad(
                Key::Fault,
                "sometimes",
                "one of none|panic|triple-fault|hang|page-fault|ap-stack-overflow|dropped-task-wake|dropped-ipi|misdirected-ipi|miscounted-ipi|stranded-steal|busy-searcher|stalled-waker",
            ),
        ),
        (
            "workload=fft",
            bad(
                Key::Workload,
                "fft",
                "one of laplace|floor|idle|none|ping-pong",
            ),
        ),
        ("size=3", bad(Key::Size, "3", "an integer in 4..=4096")),
        (
            "size=4097",
            bad(Key::Size, "4097", "an integer in 4..=4096"),
        ),
        ("size=abc", bad(Key::Size, "abc", "an integer in 4..=4096")),
        (
            "iterations=0",
            bad(Key::Iterations, "0", "an integer in 1..=10000000"),
        ),
        (
            "iterations=10000001",
            bad(Key::Iterations, "10000001", "an integer in 1..=10000000"),
        ),
        (
            "policy=poll",
            bad(
                Key::Policy,
                "poll",
                "one of state-machine|always-ipi|racy-flag",
            ),
        ),
        (
            "seed=0xzz",
            bad(Key::Seed, "0xzz", "an integer in 0..=18446744073709551615"),
        ),
        ("chaos=yes", bad(Key::Chaos, "yes", "one of off|on")),
        (
            "backoff=0",
            bad(
                Key::Backoff,
                "0",
                "`off`, `adaptive` or a poll time in us in 1..=100000",
            ),
        ),
        (
            "backoff=100001",
            bad(
                Key::Backoff,
                "100001",
                "`off`, `adaptive` or a poll time in us in 1..=100000",
            ),
        ),
        (
            "watchdog=0",
            bad(
                Key::Watchdog,
                "0",
                "`off` or a scan period in ms in 1..=60000",
            ),
        ),
        (
            "watchdog=on",
            bad(
                Key::Watchdog,
                "on",
                "`off` or a scan period in ms in 1..=60000",
            ),
        ),
        (
            "idle_ms=600001",
            bad(Key::IdleMs, "600001", "an integer in 1..=600000"),
        ),
        (
            "release=star",
            bad(Key::Release, "star", "one of flat|tree"),
        ),
        ("trial=on", bad(Key::Trial, "on", "one of auto|always|off")),
        (
            "pool=shared",
            bad(Key::Pool, "shared", "one of pinned|steal"),
        ),
        (
            "parallelism=0",
            bad(Key::Parallelism, "0", "an integer in 1..=4096"),
        ),
        ("chunks=0", bad(Key::Chunks, "0", "an integer in 1..=4096")),
        (
            "pollers=4097",
            bad(Key::Pollers, "4097", "an integer in 0..=4096"),
        ),
    ];
    let mut keys_rejected = vec![];
    for (line, want) in cases {
        assert_eq!(parse(line), Err(want), "{line}");
        keys_rejected.push(line.split_once('=').unwrap().0);
    }
    for key in Key::ALL {
        assert!(keys_rejected.contains(&key.name()), "no bad {key:?} value");
    }
}

#[test]
fn bad_lines_are_rejected_with_the_kernels_messages() {
    let message = |line: &str| format!("{}", parse(line).unwrap_err());
    assert_eq!(
        message("bogus=1"),
        "unknown key `bogus` (known keys: mode, test, fault, workload, size, iterations, policy, seed, chaos, backoff, watchdog, idle_ms, release, pool, parallelism, chunks, pollers, trial)"
    );
    assert_eq!(
        parse("Mode=run"),
        Err(ParamError::UnknownKey("Mode".into()))
    );
    assert_eq!(message("mode"), "`mode` is not of the form key=value");
    assert_eq!(
        message("mode=run mode=test"),
        "key `mode` given more than once"
    );
    assert_eq!(
        message("size=3"),
        "`size=3`: expected an integer in 4..=4096"
    );
    assert_eq!(
        message("watchdog=0"),
        "`watchdog=0`: expected `off` or a scan period in ms in 1..=60000"
    );
}

#[test]
fn named_values_are_found_by_their_names() {
    for &fault in Fault::ALL {
        assert_eq!(Fault::from_name(fault.name()), Some(fault));
    }
    assert_eq!(Workload::from_name("ping-pong"), Some(Workload::PingPong));
    assert_eq!(Pool::from_name("Pinned"), None);
    assert_eq!(Switch::from_name(OFF), Some(Switch::Off));
    assert_eq!(backoff_value(BackoffMode::FixedUs(7)), "7");
    assert_eq!(Watchdog::Ms(200).value(), "200");
    assert_eq!(Watchdog::Off.scan_period_ms(), None);
}
