//! Exception reporting and stacks: a guard-page fault is caught and
//! attributed; `#BP` is reported and execution resumes; a fresh stack is
//! all zeros whatever its frames held.

use super::runner::{TestCase, TestResult};
use crate::arch::{exceptions, fault_probe, paging};
use crate::ensure;

pub const GUARD_PAGE_FAULT_REPORTED: TestCase = TestCase {
    name: "fault::guard_page_fault_reported",
    run: guard_page_fault_reported,
};
#[cfg(target_arch = "x86_64")]
pub const FRESH_STACK_SCRUBBED: TestCase = TestCase {
    name: "fault::fresh_stack_is_scrubbed",
    run: fresh_stack_scrubbed,
};
#[cfg(target_arch = "x86_64")]
pub const BOOTSTRAP_CORE_OWN_STACK: TestCase = TestCase {
    name: "fault::bootstrap_core_left_the_bootloaders_stack",
    run: bootstrap_core_own_stack,
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

/// A fresh stack reads all zeros even where its frames held other bytes:
/// `map_stack` overwrites every byte of each frame (under TCG, stale
/// translations of code that once ran there would otherwise put every
/// store to the stack on QEMU's slow path). The next frames are filled
/// with 0xa5 first; the stack and any page table it needs take them
/// (checked: another core taking frames in between would make the test
/// fail, not pass).
#[cfg(target_arch = "x86_64")]
fn fresh_stack_scrubbed() -> TestResult {
    const STACK_BYTES: u64 = 16 * 1024;
    let pages = STACK_BYTES / 4096;
    // The stack's pages, and up to three new page tables before them.
    let (poisoned_from, poisoned_to) = paging::poison_next_frames(pages + 3, 0xa5);
    let stack = paging::map_stack(
        STACK_BYTES,
        paging::GuardOwner {
            what: "scrub test stack",
            index: 0,
        },
    );
    let mut address = stack.bottom.as_u64();
    while address < stack.top.as_u64() {
        let phys = paging::phys_of(address).unwrap_or(0);
        ensure!(
            (poisoned_from..poisoned_to).contains(&phys),
            "stack word {address:#x} is at {phys:#x}, outside the poisoned frames [{poisoned_from:#x}, {poisoned_to:#x})"
        );
        let word = fault_probe::probe_read_u64(address)
            .map_err(|fault| alloc::format!("stack word {address:#x} unreadable: {fault:?}"))?;
        ensure!(word == 0, "stack word {address:#x} reads {word:#x}, not 0");
        address += 8;
    }
    Ok(())
}

/// The bootstrap core went on with its boot (and runs its idle loop) on a
/// stack of its own, mapped by `map_stack` and so scrubbed, not on the
/// bootloader's, whose pages TCG may hold stale translations of.
#[cfg(target_arch = "x86_64")]
fn bootstrap_core_own_stack() -> TestResult {
    ensure!(
        crate::arch::boot::bootstrap_core_on_own_stack(),
        "the bootstrap core's boot went on outside the stack mapped for it"
    );
    Ok(())
}
