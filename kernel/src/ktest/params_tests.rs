//! Boot-parameter parsing: defaults, every key, and every kind of rejection.

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::params::{BootParams, Fault, Mode, ParamError, parse};
use alloc::format;
use vigil_wake::Policy;

pub const DEFAULTS: TestCase = TestCase {
    name: "params::defaults",
    run: defaults,
};
pub const FULL_LINE: TestCase = TestCase {
    name: "params::full_line",
    run: full_line,
};
pub const REJECTS_BAD_LINES: TestCase = TestCase {
    name: "params::rejects_bad_lines",
    run: rejects_bad_lines,
};

fn defaults() -> TestResult {
    ensure!(
        parse("") == Ok(BootParams::default()),
        "empty line is not the defaults"
    );
    ensure!(
        parse("   ") == Ok(BootParams::default()),
        "blank line is not the defaults"
    );
    Ok(())
}

fn full_line() -> TestResult {
    let p = parse("mode=test test=heap fault=none workload=none size=128 iterations=7 policy=always-ipi seed=0xff")
        .map_err(|e| format!("{e}"))?;
    ensure!(p.mode == Mode::Test, "mode {:?}", p.mode);
    ensure!(
        p.test_filter.as_deref() == Some("heap"),
        "filter {:?}",
        p.test_filter
    );
    ensure!(p.fault == Fault::None, "fault {:?}", p.fault);
    ensure!(
        p.size == 128 && p.iterations == 7,
        "size {} iterations {}",
        p.size,
        p.iterations
    );
    ensure!(p.policy == Policy::AlwaysIpi, "policy {:?}", p.policy);
    ensure!(p.seed == 255, "hex seed parsed as {}", p.seed);
    Ok(())
}

fn rejects_bad_lines() -> TestResult {
    let cases: [(&str, &str); 9] = [
        ("bogus=1", "unknown key `bogus`"),
        ("mode", "`mode` is not of the form key=value"),
        ("mode=run mode=test", "key `mode` given more than once"),
        ("size=3", "`size=3`: expected an integer in 4..=4096"),
        ("size=abc", "`size=abc`: expected an integer in 4..=4096"),
        (
            "iterations=0",
            "`iterations=0`: expected an integer in 1..=10000000",
        ),
        (
            "policy=fast",
            "`policy=fast`: expected one of state-machine|always-ipi|racy-flag",
        ),
        ("seed=0xzz", "`seed=0xzz`: expected an integer"),
        ("test=", "`test=`: expected a non-empty test-name substring"),
    ];
    for (line, want) in cases {
        match parse(line) {
            Ok(p) => return Err(format!("`{line}` was accepted as {p:?}").into()),
            Err(err) => {
                let text = format!("{err}");
                ensure!(
                    text.contains(want),
                    "`{line}` rejected as `{text}`, expected `{want}`"
                );
            }
        }
    }
    ensure!(
        matches!(parse("Mode=run"), Err(ParamError::UnknownKey(_))),
        "keys must be case-sensitive"
    );
    Ok(())
}
