//! Boot-time platform state: fw_cfg, the console prefix; on x86_64 the
//! PIC, the double-fault stack and the ACPI power-off.

use super::runner::{TestCase, TestResult};
use crate::arch::{fw_cfg, percpu};
#[cfg(target_arch = "x86_64")]
use crate::arch::{gdt, pic};
use crate::console::CorePrefix;
use crate::{ensure, params};

#[cfg(target_arch = "x86_64")]
pub const PIC_MASKED: TestCase = TestCase {
    name: "platform::pic_masked",
    run: pic_masked,
};
pub const FW_CFG_CARRIES_PARAMS: TestCase = TestCase {
    name: "platform::fw_cfg_carries_params",
    run: fw_cfg_carries_params,
};
#[cfg(target_arch = "x86_64")]
pub const DOUBLE_FAULT_IST: TestCase = TestCase {
    name: "platform::double_fault_ist",
    run: double_fault_ist,
};
#[cfg(target_arch = "aarch64")]
pub const RAM_IS_NORMAL_SHAREABLE: TestCase = TestCase {
    name: "platform::ram_is_normal_shareable_memory",
    run: ram_is_normal_shareable,
};
#[cfg(target_arch = "aarch64")]
pub const NULL_PAGE_FAULTS: TestCase = TestCase {
    name: "platform::null_page_faults",
    run: null_page_faults,
};
pub const CONSOLE_PREFIX: TestCase = TestCase {
    name: "platform::console_prefix",
    run: console_prefix,
};
#[cfg(target_arch = "x86_64")]
pub const S5_SLEEP_TYPES: TestCase = TestCase {
    name: "platform::s5_sleep_types",
    run: s5_sleep_types,
};

#[cfg(target_arch = "x86_64")]
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

#[cfg(target_arch = "x86_64")]
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

#[cfg(target_arch = "x86_64")]
/// The DSDT scan for `\_S5`: the encodings firmware uses (byte constants,
/// `ZeroOp`/`OneOp`, a rooted name, a two-byte package length), and what
/// is not an `_S5_` package. Then the machine's own DSDT, as found at boot.
fn s5_sleep_types() -> TestResult {
    use crate::arch::acpi_poweroff::s5_sleep_types as s5;
    // Name(_S5_, Package(4) { 5, 5, 0, 0 }), as SeaBIOS and Bochs write it.
    let bytes = [
        0x08, b'_', b'S', b'5', b'_', 0x12, 0x0a, 0x04, 0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00,
    ];
    ensure!(
        s5(&bytes) == Some((5, 5)),
        "byte constants: {:?}",
        s5(&bytes)
    );
    // Name(\_S5_, Package(2) { Zero, Zero }), preceded by other AML.
    let zero = [
        0x10, 0x99, 0x08, b'\\', b'_', b'S', b'5', b'_', 0x12, 0x04, 0x02, 0x00, 0x00,
    ];
    ensure!(s5(&zero) == Some((0, 0)), "ZeroOp, rooted: {:?}", s5(&zero));
    // A two-byte PkgLength (lead byte 0b01xx_xxxx), OneOp then a byte.
    let long = [
        0x08, b'_', b'S', b'5', b'_', 0x12, 0x40, 0x01, 0x02, 0x01, 0x0a, 0x07,
    ];
    ensure!(
        s5(&long) == Some((1, 7)),
        "two-byte length: {:?}",
        s5(&long)
    );
    // `_S5_` as a method name or in a string is not the object.
    let method = [0x14, b'_', b'S', b'5', b'_', 0x12, 0x04, 0x02, 0x00, 0x00];
    ensure!(s5(&method).is_none(), "not a Name: {:?}", s5(&method));
    ensure!(s5(b"no sleep state here").is_none(), "absent");
    ensure!(
        s5(&bytes[..8]).is_none(),
        "a cut-off package must not read past the table"
    );
    // A method named _S5_ first, the Name after it.
    let both = [
        0x14, b'_', b'S', b'5', b'_', 0x00, 0x08, b'_', b'S', b'5', b'_', 0x12, 0x04, 0x02, 0x0a,
        0x05, 0x0a, 0x05,
    ];
    ensure!(
        s5(&both) == Some((5, 5)),
        "the Name after a method: {:?}",
        s5(&both)
    );
    // QEMU's pc and q35 firmware (SeaBIOS, OVMF) describe S5.
    ensure!(
        crate::arch::acpi_poweroff::available(),
        "the boot found no ACPI power-off in this machine's FADT/DSDT"
    );
    Ok(())
}

/// The kernel's data (a static, the heap, a task's stack) is Normal
/// write-back, inner-shareable memory: load/store-exclusive, which every
/// atomic here compiles to, is only guaranteed there, and the global
/// monitor that makes a compare-exchange atomic between cores only tracks
/// shareable memory. The UART is Device memory.
#[cfg(target_arch = "aarch64")]
fn ram_is_normal_shareable() -> TestResult {
    use crate::arch::paging::translate;
    static WORD: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
    let heap = alloc::boxed::Box::new(0u64);
    let stack = 0u64;
    for (what, address) in [
        ("a static", WORD.as_ptr() as u64),
        ("the heap", core::ptr::from_ref(&*heap) as u64),
        ("this task's stack", core::ptr::from_ref(&stack) as u64),
    ] {
        let Some(t) = translate(address) else {
            return Err(alloc::format!("{what} at {address:#x} does not translate").into());
        };
        ensure!(
            t.attributes == 0xff && t.shareability == 0b11,
            "{what} at {address:#x}: attributes {:#x}, shareability {:#b} (want Normal write-back 0xff, inner shareable 0b11)",
            t.attributes,
            t.shareability
        );
    }
    let uart = translate(0x0900_0000).ok_or("the UART does not translate")?;
    ensure!(
        uart.attributes == 0x04,
        "the UART's attributes {:#x}, want Device-nGnRE 0x04",
        uart.attributes
    );
    Ok(())
}

/// A null pointer faults: the first 2 MiB (the flash at 0) are unmapped.
#[cfg(target_arch = "aarch64")]
fn null_page_faults() -> TestResult {
    let fault = crate::arch::fault_probe::probe_read_u64(8);
    let Err(fault) = fault else {
        return Err("a read at address 8 did not fault".into());
    };
    ensure!(fault.address == 8, "FAR {:#x}, expected 0x8", fault.address);
    ensure!(
        fault.is_not_present(),
        "syndrome {:#x} is not a translation fault",
        fault.error_code
    );
    Ok(())
}
