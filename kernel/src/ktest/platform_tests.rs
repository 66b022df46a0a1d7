//! Boot-time platform state: the PIC, fw_cfg, the double-fault stack, the
//! console prefix.

use super::runner::{TestCase, TestResult};
use crate::arch::{fw_cfg, gdt, percpu, pic};
use crate::console::CorePrefix;
use crate::{ensure, params};

pub const PIC_MASKED: TestCase = TestCase {
    name: "platform::pic_masked",
    run: pic_masked,
};
pub const FW_CFG_CARRIES_PARAMS: TestCase = TestCase {
    name: "platform::fw_cfg_carries_params",
    run: fw_cfg_carries_params,
};
pub const DOUBLE_FAULT_IST: TestCase = TestCase {
    name: "platform::double_fault_ist",
    run: double_fault_ist,
};
pub const CONSOLE_PREFIX: TestCase = TestCase {
    name: "platform::console_prefix",
    run: console_prefix,
};

fn pic_masked() -> TestResult {
    let masks = pic::masks();
    ensure!(
        masks == (0xff, 0xff),
        "PIC masks {masks:02x?}, expected all lines masked"
    );
    Ok(())
}

/// The suite itself was started with `mode=test` through fw_cfg.
fn fw_cfg_carries_params() -> TestResult {
    ensure!(fw_cfg::present(), "no fw_cfg signature");
    let line = fw_cfg::read_file(params::FW_CFG_FILE).map_err(|e| alloc::format!("{e:?}"))?;
    let Some(line) = line else {
        return Err("no opt/vigil/cmdline file".into());
    };
    ensure!(
        line.split_whitespace().any(|t| t == "mode=test"),
        "cmdline `{line}` lacks mode=test"
    );
    ensure!(
        fw_cfg::read_file("opt/vigil/absent") == Ok(None),
        "absent file found"
    );
    Ok(())
}

fn double_fault_ist() -> TestResult {
    let top = gdt::double_fault_stack_top();
    ensure!(top != 0, "no double-fault IST stack in this core's TSS");
    ensure!(top % 16 == 0, "IST stack top {top:#x} not 16-byte aligned");
    Ok(())
}

fn console_prefix() -> TestResult {
    let text = alloc::format!("{}", CorePrefix(percpu::current_index()));
    ensure!(text == "[c0] ", "bootstrap core prefix `{text}`");
    ensure!(
        alloc::format!("{}", CorePrefix(63)) == "[c63] ",
        "two-digit prefix"
    );
    Ok(())
}
