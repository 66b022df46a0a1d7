//! The GICv3 interrupt controller of QEMU's `virt` (`gic-version=3`): the
//! distributor (shared; Vigil routes no SPI through it, it is only
//! enabled), one redistributor per core (its SGIs and PPIs: the wake,
//! probe and test SGIs, the timer's PPI), and the CPU interface through
//! system registers (`ICC_*_EL1`, named by encoding).
//!
//! Every interrupt Vigil uses is Group 1 (the only group a kernel at EL1
//! of a machine without EL3 uses), acknowledged through `ICC_IAR1_EL1` and
//! ended through `ICC_EOIR1_EL1` (which, with `EOImode` 0, also
//! deactivates it).

use super::devicetree::Region;
use super::sysreg::{isb, read_sysreg, write_sysreg};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const GICD_CTLR: u64 = 0x0000;
const GICD_CTLR_RWP: u32 = 1 << 31;
/// Affinity routing (ARE, or ARE_NS in the non-secure view: bit 4 both).
const GICD_CTLR_ARE: u32 = 1 << 4;
/// Group 1 enable (EnableGrp1, or EnableGrp1A in the non-secure view).
const GICD_CTLR_ENABLE_GRP1: u32 = 1 << 1;

const GICR_TYPER: u64 = 0x0008;
const GICR_TYPER_VLPIS: u64 = 1 << 1;
const GICR_TYPER_LAST: u64 = 1 << 4;
const GICR_WAKER: u64 = 0x0014;
const GICR_WAKER_PROCESSOR_SLEEP: u32 = 1 << 1;
const GICR_WAKER_CHILDREN_ASLEEP: u32 = 1 << 2;
/// The SGI/PPI frame follows the redistributor's control frame.
const SGI_FRAME_OFFSET: u64 = 0x1_0000;
const GICR_IGROUPR0: u64 = 0x0080;
const GICR_ISENABLER0: u64 = 0x0100;
const GICR_ICENABLER0: u64 = 0x0180;
const GICR_ISPENDR0: u64 = 0x0200;
const GICR_IPRIORITYR: u64 = 0x0400;

/// INTIDs from 1020 up are special (1023: nothing pending).
pub const SPECIAL_INTID: u32 = 1020;

static DISTRIBUTOR: AtomicU64 = AtomicU64::new(0);
/// The redistributor regions (up to 4), from the device tree.
static REGIONS: [(AtomicU64, AtomicU64); 4] = [const { (AtomicU64::new(0), AtomicU64::new(0)) }; 4];
static REGION_COUNT: AtomicUsize = AtomicUsize::new(0);

fn read32(address: u64) -> u32 {
    // SAFETY: `address` is a GIC register (Device memory, identity-mapped
    // by `paging`), read by this module only at documented offsets.
    unsafe { (address as *const u32).read_volatile() }
}

fn write32(address: u64, value: u32) {
    // SAFETY: as in `read32`.
    unsafe { (address as *mut u32).write_volatile(value) }
}

fn read64(address: u64) -> u64 {
    // SAFETY: as in `read32`; GICR_TYPER is a 64-bit register.
    unsafe { (address as *const u64).read_volatile() }
}

/// Records the GIC's regions and enables the distributor with affinity
/// routing and Group 1 (bootstrap core, before any other core starts).
pub fn init_distributor(distributor: u64, redistributors: &[Region]) {
    DISTRIBUTOR.store(distributor, Ordering::Relaxed);
    for (slot, region) in REGIONS.iter().zip(redistributors) {
        slot.0.store(region.base, Ordering::Relaxed);
        slot.1.store(region.bytes, Ordering::Relaxed);
    }
    REGION_COUNT.store(redistributors.len().min(REGIONS.len()), Ordering::Relaxed);
    write32(distributor + GICD_CTLR, 0);
    wait_for_distributor();
    write32(
        distributor + GICD_CTLR,
        GICD_CTLR_ARE | GICD_CTLR_ENABLE_GRP1,
    );
    wait_for_distributor();
}

fn wait_for_distributor() {
    let distributor = DISTRIBUTOR.load(Ordering::Relaxed);
    while read32(distributor + GICD_CTLR) & GICD_CTLR_RWP != 0 {
        core::hint::spin_loop();
    }
}

/// The control frame of the redistributor whose affinity is `hw_id`
/// (Aff3.Aff2.Aff1.Aff0, as `GICR_TYPER[63:32]` holds it), if any.
pub fn find_redistributor(hw_id: u32) -> Option<u64> {
    for (base, bytes) in REGIONS
        .iter()
        .take(REGION_COUNT.load(Ordering::Relaxed))
        .map(|(b, n)| (b.load(Ordering::Relaxed), n.load(Ordering::Relaxed)))
    {
        let mut frame = base;
        while frame < base + bytes {
            let typer = read64(frame + GICR_TYPER);
            if (typer >> 32) as u32 == hw_id {
                return Some(frame);
            }
            if typer & GICR_TYPER_LAST != 0 {
                break;
            }
            frame += if typer & GICR_TYPER_VLPIS != 0 {
                0x4_0000
            } else {
                0x2_0000
            };
        }
    }
    None
}

/// Wakes this core's redistributor, makes every SGI and PPI Group 1, gives
/// each of `priorities` (INTID, priority: lower is more urgent) its
/// priority and enables it, and turns on this core's CPU interface.
/// Returns the SGI frame (for [`is_pending`]).
pub fn init_this_core(redistributor: u64, priorities: &[(u32, u8)]) -> u64 {
    let waker = read32(redistributor + GICR_WAKER);
    write32(
        redistributor + GICR_WAKER,
        waker & !GICR_WAKER_PROCESSOR_SLEEP,
    );
    while read32(redistributor + GICR_WAKER) & GICR_WAKER_CHILDREN_ASLEEP != 0 {
        core::hint::spin_loop();
    }
    let sgi = redistributor + SGI_FRAME_OFFSET;
    write32(sgi + GICR_ICENABLER0, u32::MAX);
    write32(sgi + GICR_IGROUPR0, u32::MAX);
    let mut enable = 0u32;
    for &(intid, priority) in priorities {
        assert!(intid < 32, "INTID {intid} is not an SGI or PPI");
        // SAFETY: GICR_IPRIORITYR is byte-accessible, one byte per INTID.
        unsafe { ((sgi + GICR_IPRIORITYR + u64::from(intid)) as *mut u8).write_volatile(priority) };
        enable |= 1 << intid;
    }
    write32(sgi + GICR_ISENABLER0, enable);
    // The CPU interface: system-register access, every priority unmasked,
    // no preemption grouping, EOI also deactivates, Group 1 on.
    write_sysreg!("s3_0_c12_c12_5", read_sysreg!("s3_0_c12_c12_5") | 1); // ICC_SRE_EL1.SRE
    isb();
    write_sysreg!("s3_0_c4_c6_0", 0xff); // ICC_PMR_EL1
    write_sysreg!("s3_0_c12_c12_3", 0); // ICC_BPR1_EL1
    write_sysreg!("s3_0_c12_c12_4", 0); // ICC_CTLR_EL1: EOImode 0
    write_sysreg!("s3_0_c12_c12_7", 1); // ICC_IGRPEN1_EL1
    isb();
    sgi
}

/// Whether SGI or PPI `intid` is pending on the core whose SGI frame is
/// `sgi_frame` (GICR_ISPENDR0).
pub fn is_pending(sgi_frame: u64, intid: u32) -> bool {
    read32(sgi_frame + GICR_ISPENDR0) & (1 << intid) != 0
}

/// Acknowledges the highest-priority pending interrupt (ICC_IAR1_EL1):
/// its INTID, or one of 1020 and up when there is none.
pub fn acknowledge() -> u32 {
    read_sysreg!("s3_0_c12_c12_0") as u32
}

/// Ends (and deactivates) interrupt `intid` (ICC_EOIR1_EL1).
pub fn end_of_interrupt(intid: u32) {
    write_sysreg!("s3_0_c12_c12_1", u64::from(intid));
}

/// The value of `ICC_SGI1R_EL1` that sends SGI `intid` to the one core
/// whose affinity is `hw_id` (Aff3.Aff2.Aff1.Aff0): target list bit Aff0
/// % 16 in range Aff0 / 16.
pub fn sgi1r_value(hw_id: u32, intid: u32) -> u64 {
    let aff0 = u64::from(hw_id & 0xff);
    let aff1 = u64::from((hw_id >> 8) & 0xff);
    let aff2 = u64::from((hw_id >> 16) & 0xff);
    let aff3 = u64::from(hw_id >> 24);
    (1 << (aff0 % 16))
        | (aff1 << 16)
        | (u64::from(intid & 0xf) << 24)
        | (aff2 << 32)
        | ((aff0 / 16) << 44)
        | (aff3 << 48)
}

/// Writes `ICC_SGI1R_EL1` (see `ipi::send` for the barriers around it).
pub fn write_sgi1r(value: u64) {
    write_sysreg!("s3_0_c12_c11_5", value);
}
