//! The local APIC: xAPIC through an uncached MMIO mapping (what QEMU TCG
//! offers), x2APIC through MSRs when CPUID offers it. Provides this core's
//! id, EOI, fixed IPIs to one core, the INIT/SIPI broadcast used to start the
//! APs, and a per-core one-shot timer calibrated against the PIT (TSC-deadline
//! mode when CPUID offers it).

use super::interrupt_vectors::{ERROR_VECTOR, SPURIOUS_VECTOR, TIMER_VECTOR};
use super::{paging, pit, tsc};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use raw_cpuid::CpuId;
use x86_64::PhysAddr;
use x86_64::registers::model_specific::Msr;

const IA32_APIC_BASE_MSR: u32 = 0x1b;
const IA32_TSC_DEADLINE_MSR: u32 = 0x6e0;
const APIC_BASE_ENABLE: u64 = 1 << 11;
const APIC_BASE_X2APIC: u64 = 1 << 10;
const X2APIC_MSR_BASE: u32 = 0x800;

const REG_ID: u32 = 0x20;
const REG_TPR: u32 = 0x80;
const REG_EOI: u32 = 0xb0;
const REG_SVR: u32 = 0xf0;
const REG_ESR: u32 = 0x280;
const REG_IRR_BASE: u32 = 0x200;
const REG_ICR_LOW: u32 = 0x300;
const REG_ICR_HIGH: u32 = 0x310;
const REG_LVT_TIMER: u32 = 0x320;
const REG_LVT_LINT0: u32 = 0x350;
const REG_LVT_LINT1: u32 = 0x360;
const REG_LVT_ERROR: u32 = 0x370;
const REG_TIMER_INITIAL: u32 = 0x380;
const REG_TIMER_CURRENT: u32 = 0x390;
const REG_TIMER_DIVIDE: u32 = 0x3e0;

const SVR_ENABLE: u32 = 1 << 8;
const LVT_MASKED: u32 = 1 << 16;
const LVT_TIMER_TSC_DEADLINE: u32 = 0b10 << 17;
const ICR_DELIVERY_PENDING: u32 = 1 << 12;
const ICR_LEVEL_ASSERT: u32 = 1 << 14;
const ICR_DELIVERY_INIT: u32 = 0b101 << 8;
const ICR_DELIVERY_STARTUP: u32 = 0b110 << 8;
const ICR_ALL_EXCLUDING_SELF: u32 = 0b11 << 18;
const TIMER_DIVIDE_BY_16: u32 = 0b0011;
/// One calibration window, timed by the PIT.
const CALIBRATION_US: u64 = 10_000;
/// Calibration windows; the median of each clock's counts is kept.
const CALIBRATION_RUNS: usize = 3;

static X2APIC: AtomicBool = AtomicBool::new(false);
static TSC_DEADLINE: AtomicBool = AtomicBool::new(false);
/// Virtual address of the xAPIC MMIO page (0 when in x2APIC mode).
static XAPIC_BASE: AtomicU64 = AtomicU64::new(0);
/// The ICR_HIGH value each core last wrote (`u32::MAX`: none yet), by core
/// index; each entry is touched only by its own core.
static LAST_ICR_HIGH: [AtomicU32; super::interrupt_vectors::MAX_CORES] =
    [const { AtomicU32::new(u32::MAX) }; super::interrupt_vectors::MAX_CORES];
/// LAPIC timer ticks (divide-by-16) per millisecond.
static TIMER_TICKS_PER_MS: AtomicU64 = AtomicU64::new(0);

fn read(reg: u32) -> u32 {
    if X2APIC.load(Ordering::Relaxed) {
        // SAFETY: in x2APIC mode every LAPIC register is the MSR 0x800 +
        // (offset >> 4); reading one has no side effect besides the read.
        unsafe { Msr::new(X2APIC_MSR_BASE + (reg >> 4)).read() as u32 }
    } else {
        let base = XAPIC_BASE.load(Ordering::Relaxed);
        // SAFETY: `base` is the uncached mapping of this core's LAPIC page
        // made by `init_bootstrap`; `reg` is a register offset inside it.
        unsafe { ((base + u64::from(reg)) as *const u32).read_volatile() }
    }
}

fn write(reg: u32, value: u32) {
    if X2APIC.load(Ordering::Relaxed) {
        // SAFETY: as in `read`; writes go to this core's own LAPIC.
        unsafe { Msr::new(X2APIC_MSR_BASE + (reg >> 4)).write(u64::from(value)) }
    } else {
        let base = XAPIC_BASE.load(Ordering::Relaxed);
        // SAFETY: as in `read`.
        unsafe { ((base + u64::from(reg)) as *mut u32).write_volatile(value) }
    }
}

/// Whether the LAPIC runs in x2APIC mode.
pub fn is_x2apic() -> bool {
    X2APIC.load(Ordering::Relaxed)
}

/// Chooses the mode (x2APIC if CPUID offers it), maps the xAPIC page
/// uncached if needed, enables the bootstrap core's LAPIC and calibrates the
/// TSC and the LAPIC timer against the PIT.
pub fn init_bootstrap(phys_base: u64) {
    let features = CpuId::new().get_feature_info();
    let x2apic = features.as_ref().is_some_and(|f| f.has_x2apic());
    X2APIC.store(x2apic, Ordering::Relaxed);
    TSC_DEADLINE.store(
        features.as_ref().is_some_and(|f| f.has_tsc_deadline()),
        Ordering::Relaxed,
    );
    if !x2apic {
        let virt = paging::map_mmio(PhysAddr::new(phys_base), 4096);
        XAPIC_BASE.store(virt.as_u64(), Ordering::Relaxed);
    }
    init_this_core();
    calibrate();
}

/// Enables this core's LAPIC: software-enable with the spurious vector, accept
/// every priority, error vector set, LINT0/LINT1 and the timer masked.
pub fn init_this_core() {
    let mut base_msr = Msr::new(IA32_APIC_BASE_MSR);
    // SAFETY: setting the global-enable (and x2APIC-enable, when CPUID offered
    // it) bits of IA32_APIC_BASE keeps the base address as the firmware set it.
    unsafe {
        let mut value = base_msr.read() | APIC_BASE_ENABLE;
        if is_x2apic() {
            value |= APIC_BASE_X2APIC;
        }
        base_msr.write(value);
    }
    write(REG_TPR, 0);
    write(REG_LVT_LINT0, LVT_MASKED);
    write(REG_LVT_LINT1, LVT_MASKED);
    timer_one_shot_disarmed();
    write(REG_LVT_ERROR, u32::from(ERROR_VECTOR));
    write(REG_SVR, SVR_ENABLE | u32::from(SPURIOUS_VECTOR));
    write(REG_ESR, 0);
    write(REG_ESR, 0);
    eoi();
}

/// This core's local APIC id.
pub fn id() -> u32 {
    let raw = read(REG_ID);
    if is_x2apic() { raw } else { raw >> 24 }
}

/// Signals end of interrupt.
pub fn eoi() {
    write(REG_EOI, 0);
}

/// The error status register (written first, as the SDM requires).
pub fn error_status() -> u32 {
    write(REG_ESR, 0);
    read(REG_ESR)
}

fn send_icr(dest_apic_id: u32, low: u32) {
    if is_x2apic() {
        // The x2APIC ICR `wrmsr` is not serialising: without a fence the IPI
        // could overtake the caller's earlier stores (the push that the
        // IPI announces). `mfence` orders them, as Linux's
        // `weak_wrmsr_fence` does. (The xAPIC ICR write below is an uncached
        // store, which x86 never reorders with earlier stores.)
        core::sync::atomic::fence(Ordering::SeqCst);
        let mut icr = Msr::new(X2APIC_MSR_BASE + (REG_ICR_LOW >> 4));
        // SAFETY: x2APIC ICR write: one 64-bit MSR, destination in the high
        // half; delivery is tracked by the hardware, no status bit to poll.
        unsafe { icr.write((u64::from(dest_apic_id) << 32) | u64::from(low)) };
        return;
    }
    // The xAPIC ICR is two registers: an interrupt handler on this core that
    // sent its own IPI between our two writes would redirect ours.
    // Under TCG every LAPIC register access is an exit into QEMU (~5 µs
    // each, measured), so the sequence is kept short: the previous send
    // already waited for its delivery (so no poll before writing), and the
    // destination register is only rewritten when the destination changes
    // (this core's last destination is remembered; only this function
    // writes ICR_HIGH).
    super::interrupts::without(|| {
        let last = &LAST_ICR_HIGH[super::percpu::current_index()];
        let high = dest_apic_id << 24;
        if last.load(Ordering::Relaxed) != high {
            write(REG_ICR_HIGH, high);
            last.store(high, Ordering::Relaxed);
        }
        write(REG_ICR_LOW, low);
        while read(REG_ICR_LOW) & ICR_DELIVERY_PENDING != 0 {
            core::hint::spin_loop();
        }
    });
}

/// Sends a fixed interrupt with `vector` to the core with `dest_apic_id`, and
/// (xAPIC) waits until the LAPIC reports it delivered.
pub fn send_ipi(dest_apic_id: u32, vector: u8) {
    send_icr(dest_apic_id, u32::from(vector) | ICR_LEVEL_ASSERT);
}

/// Broadcasts INIT to every other core.
///
/// # Safety
///
/// INIT resets every other CPU, whatever it is running: call it only while
/// no other core runs kernel code (during bring-up, before any AP has been
/// started, or with every AP parked where losing its state is intended).
pub unsafe fn send_init_to_all_others() {
    send_icr(
        0,
        ICR_DELIVERY_INIT | ICR_LEVEL_ASSERT | ICR_ALL_EXCLUDING_SELF,
    );
}

/// Broadcasts a STARTUP IPI: every other core in wait-for-SIPI starts in real
/// mode at physical address `page << 12`.
///
/// # Safety
///
/// Physical page `page` must hold the AP trampoline, with its parameters
/// (page tables, stacks, entry point) written, identity-mapped, and kept
/// until every started core has left it.
pub unsafe fn send_startup_to_all_others(page: u8) {
    send_icr(
        0,
        ICR_DELIVERY_STARTUP | ICR_LEVEL_ASSERT | ICR_ALL_EXCLUDING_SELF | u32::from(page),
    );
}

/// Whether `vector` is pending (requested, not yet serviced) on this core.
pub fn is_pending(vector: u8) -> bool {
    let reg = REG_IRR_BASE + u32::from(vector / 32) * 0x10;
    read(reg) & (1 << (vector % 32)) != 0
}

/// Counts the LAPIC timer's and the TSC's ticks over PIT-timed windows.
/// Each TSC read sits right next to the PIT wait, inside the LAPIC count's
/// window; a vCPU descheduled between a read and the wait (under a loaded
/// host) skews that one window by its time off the host, so the median of
/// [`CALIBRATION_RUNS`] windows is kept for each clock. (One window, with
/// the TSC read before the LAPIC count started, once put the TSC 5% fast
/// on a loaded CI host, and a one-shot timer then seemed to fire early.)
fn calibrate() {
    write(REG_TIMER_DIVIDE, TIMER_DIVIDE_BY_16);
    write(REG_LVT_TIMER, LVT_MASKED | u32::from(TIMER_VECTOR));
    let mut lapic_ticks = [0u64; CALIBRATION_RUNS];
    let mut tsc_ticks = [0u64; CALIBRATION_RUNS];
    for run in 0..CALIBRATION_RUNS {
        write(REG_TIMER_INITIAL, u32::MAX);
        let tsc_start = tsc::now();
        pit::wait_us(CALIBRATION_US);
        let tsc_end = tsc::now();
        let remaining = read(REG_TIMER_CURRENT);
        lapic_ticks[run] = u64::from(u32::MAX - remaining);
        tsc_ticks[run] = tsc_end - tsc_start;
    }
    timer_one_shot_disarmed();
    lapic_ticks.sort_unstable();
    tsc_ticks.sort_unstable();
    let per_ms_divisor = CALIBRATION_US / 1000;
    TIMER_TICKS_PER_MS.store(
        lapic_ticks[CALIBRATION_RUNS / 2] / per_ms_divisor,
        Ordering::Relaxed,
    );
    tsc::set_ticks_per_ms(tsc_ticks[CALIBRATION_RUNS / 2] / per_ms_divisor);
}

/// LAPIC timer ticks per millisecond (divide-by-16), as calibrated.
pub fn timer_ticks_per_ms() -> u64 {
    TIMER_TICKS_PER_MS.load(Ordering::Relaxed)
}

/// Whether the one-shot timer uses TSC-deadline mode.
pub fn uses_tsc_deadline() -> bool {
    TSC_DEADLINE.load(Ordering::Relaxed)
}

/// Puts this core's timer in one-shot (or TSC-deadline) mode, unmasked, with
/// nothing armed: from then on arming or disarming is one register write.
fn timer_one_shot_disarmed() {
    if uses_tsc_deadline() {
        write(
            REG_LVT_TIMER,
            LVT_TIMER_TSC_DEADLINE | u32::from(TIMER_VECTOR),
        );
        // SAFETY: writing 0 to IA32_TSC_DEADLINE disarms the timer.
        unsafe { Msr::new(IA32_TSC_DEADLINE_MSR).write(0) };
    } else {
        write(REG_TIMER_DIVIDE, TIMER_DIVIDE_BY_16);
        write(REG_TIMER_INITIAL, 0);
        write(REG_LVT_TIMER, u32::from(TIMER_VECTOR));
    }
}

/// Arms this core's one-shot timer to raise `TIMER_VECTOR` in `us`
/// microseconds (replacing any armed deadline): one register write.
pub fn arm_oneshot_us(us: u64) {
    if uses_tsc_deadline() {
        let deadline = tsc::now() + tsc::us_to_ticks(us);
        // SAFETY: IA32_TSC_DEADLINE arms this core's timer; no memory effect.
        unsafe { Msr::new(IA32_TSC_DEADLINE_MSR).write(deadline) };
        return;
    }
    let ticks = (us * timer_ticks_per_ms() / 1000).clamp(1, u64::from(u32::MAX)) as u32;
    write(REG_TIMER_INITIAL, ticks);
}

/// Disarms this core's one-shot timer.
pub fn cancel_timer() {
    if uses_tsc_deadline() {
        // SAFETY: writing 0 to IA32_TSC_DEADLINE disarms the timer.
        unsafe { Msr::new(IA32_TSC_DEADLINE_MSR).write(0) };
    } else {
        write(REG_TIMER_INITIAL, 0);
    }
}
