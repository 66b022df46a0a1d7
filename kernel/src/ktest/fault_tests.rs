//! Exception reporting: a guard-page fault is caught and attributed; `#BP`
//! is reported and execution resumes.

use super::runner::{TestCase, TestResult};
use crate::arch::{exceptions, fault_probe, paging};
use crate::ensure;

pub const GUARD_PAGE_FAULT_REPORTED: TestCase = TestCase {
    name: "fault::guard_page_fault_reported",
    run: guard_page_fault_reported,
};
pub const BREAKPOINT_RESUMES: TestCase = TestCase {
    name: "fault::breakpoint_resumes",
    run: breakpoint_resumes,
};

/// A fresh stack's lowest page is readable; the page below it faults with a
/// not-present error at exactly that address, and is named as a guard page.
fn guard_page_fault_reported() -> TestResult {
    let owner = paging::GuardOwner {
        what: "test stack",
        index: 7,
    };
    let stack = paging::map_stack(8192, owner);
    let guard = stack.guard.as_u64();
    ensure!(
        fault_probe::probe_read_u64(stack.bottom.as_u64()).is_ok(),
        "stack bottom not mapped"
    );
    ensure!(
        fault_probe::probe_read_u64(stack.top.as_u64() - 8).is_ok(),
        "stack top not mapped"
    );
    let fault = fault_probe::probe_read_u64(guard + 16);
    let Err(fault) = fault else {
        return Err(alloc::format!("read of guard page {guard:#x} did not fault").into());
    };
    ensure!(
        fault.address == guard + 16,
        "CR2 {:#x}, expected {:#x}",
        fault.address,
        guard + 16
    );
    ensure!(
        fault.is_not_present(),
        "error code {:#x} says present",
        fault.error_code
    );
    let described = paging::describe_guard(guard + 16);
    ensure!(described.is_guard(), "guard page not in the registry");
    let text = alloc::format!("{described}");
    ensure!(
        text == ": guard page of test stack 7",
        "described as `{text}`"
    );
    ensure!(
        !paging::describe_guard(stack.bottom.as_u64()).is_guard(),
        "stack page called a guard"
    );
    Ok(())
}

fn breakpoint_resumes() -> TestResult {
    let before = exceptions::breakpoint_count();
    exceptions::breakpoint();
    let after = exceptions::breakpoint_count();
    ensure!(after == before + 1, "breakpoints {before} -> {after}");
    Ok(())
}
