//! Page tables. The bootloader maps all physical memory at a dynamic offset;
//! Vigil edits the active tables through that mapping (an `OffsetPageTable`)
//! to map stacks with unmapped guard pages below them, in a PML4 slot the
//! bootloader left empty, and keeps a registry of those guard pages so a fault
//! on one is reported by name.

use crate::arch::guard_pages;
pub use crate::arch::guard_pages::{GuardOwner, describe_guard};
use crate::memory::frames::{BumpFrames, FRAME_BYTES, FRAMES};
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;
use x86_64::registers::control::Cr3;
use x86_64::structures::paging::{
    FrameAllocator, Mapper, OffsetPageTable, Page, PageTable, PageTableFlags, PhysFrame, Size4KiB,
};
use x86_64::{PhysAddr, VirtAddr};

static PHYS_OFFSET: AtomicU64 = AtomicU64::new(0);

struct Kva {
    mapper: OffsetPageTable<'static>,
    /// Next free virtual address in Vigil's own PML4 slot.
    next: u64,
    end: u64,
}

static KVA: Mutex<Option<Kva>> = Mutex::new(None);

/// A stack mapped by [`map_stack`]: `[bottom, top)` is mapped, the page
/// below `bottom` is not.
#[derive(Debug, Clone, Copy)]
pub struct MappedStack {
    /// Lowest mapped address.
    pub bottom: VirtAddr,
    /// One past the highest mapped address (the initial stack pointer).
    pub top: VirtAddr,
    /// Start of the unmapped guard page.
    pub guard: VirtAddr,
}

/// Translates a physical address through the bootloader's full mapping.
pub fn phys_to_virt(phys: PhysAddr) -> VirtAddr {
    VirtAddr::new(PHYS_OFFSET.load(Ordering::Relaxed) + phys.as_u64())
}

/// A pointer to physical address `phys` through the bootloader's full
/// mapping (read-write, cacheable): how the heap reaches its frames.
pub fn phys_to_ptr(phys: u64) -> *mut u8 {
    phys_to_virt(PhysAddr::new(phys)).as_mut_ptr()
}

// SAFETY: every frame returned comes from a region the boot's memory map
// marked usable and is handed out at most once (the bump pointer only grows).
unsafe impl FrameAllocator<Size4KiB> for BumpFrames {
    fn allocate_frame(&mut self) -> Option<PhysFrame<Size4KiB>> {
        self.allocate_contiguous(FRAME_BYTES)
            .map(|start| PhysFrame::containing_address(PhysAddr::new(start)))
    }
}

/// Records the physical-memory offset and claims an empty PML4 slot.
/// Must run once, on the bootstrap core, before the heap is used for stacks.
pub fn init(phys_offset: u64) {
    PHYS_OFFSET.store(phys_offset, Ordering::Relaxed);
    let (pml4_frame, _) = Cr3::read();
    let pml4_virt = phys_to_virt(pml4_frame.start_address());
    // SAFETY: CR3 names the active PML4, which the bootloader mapped (like all
    // physical memory) at `phys_offset`; from here on only this module edits
    // the page tables, always under the KVA lock.
    let pml4: &'static mut PageTable = unsafe { &mut *pml4_virt.as_mut_ptr() };
    // Use the highest empty slot in the lower half of the kernel's view that
    // is not slot 0 (the trampoline's identity map lives there).
    let slot = (1..256)
        .rev()
        .find(|&i| pml4[i].is_unused())
        .expect("no free PML4 slot");
    let base = (slot as u64) << 39;
    // SAFETY: as above; `phys_offset` maps all physical memory.
    let mapper = unsafe { OffsetPageTable::new(pml4, VirtAddr::new(phys_offset)) };
    *KVA.lock() = Some(Kva {
        mapper,
        next: base,
        end: base + (1 << 39),
    });
}

/// Maps a fresh stack of `bytes` (rounded to pages) with an unmapped guard
/// page below it, and records the guard as protecting `owner`.
pub fn map_stack(bytes: u64, owner: GuardOwner) -> MappedStack {
    let pages = bytes.div_ceil(FRAME_BYTES);
    let mut kva = KVA.lock();
    let kva = kva.as_mut().expect("paging::init not called");
    let guard = kva.next;
    let bottom = guard + FRAME_BYTES;
    let top = bottom + pages * FRAME_BYTES;
    assert!(top <= kva.end, "kernel virtual area exhausted");
    kva.next = top;
    let flags = PageTableFlags::PRESENT | PageTableFlags::WRITABLE | PageTableFlags::NO_EXECUTE;
    let mut frames = FRAMES.lock();
    for i in 0..pages {
        let page = Page::<Size4KiB>::containing_address(VirtAddr::new(bottom + i * FRAME_BYTES));
        let frame = FrameAllocator::allocate_frame(&mut *frames)
            .expect("out of physical memory for a stack");
        scrub(frame);
        // SAFETY: `page` is in Vigil's own PML4 slot, handed out once by the
        // bump pointer above, so it aliases nothing; `frame` is fresh.
        unsafe { kva.mapper.map_to(page, frame, flags, &mut *frames) }
            .expect("stack page already mapped")
            .flush();
    }
    guard_pages::register(guard, owner);
    MappedStack {
        bottom: VirtAddr::new(bottom),
        top: VirtAddr::new(top),
        guard: VirtAddr::new(guard),
    }
}

/// Zeroes a fresh stack frame through the physical-memory mapping, every
/// byte of it.
///
/// Under QEMU's TCG a guest page from which code was once translated
/// stays a code page until every translation from it has been
/// overwritten, and until then every store to it takes QEMU's slow path
/// (a check for translations to invalidate, the dirty bitmap). Code ran
/// before the kernel (the bootloader's or the firmware's) from low memory
/// the boot map then marks usable, and the stacks are carved from there
/// (1 MiB up; the BIOS bootloader's stage 4 is loaded at 0x130000): a
/// core whose stack sat on such a page (0x132000 in the boots measured)
/// ran the same register loop 1.21-1.42x slower than the others, its
/// spills to the stack taking that path (`perf` on its vCPU thread:
/// QEMU's `notdirty_write` helpers, 15% of its time), and the boot's
/// parallelism measurement counted it at 0.66-0.82 of the other core.
/// The heap is not scrubbed (it is large, and it lies above the kernel
/// image at the harness's memory sizes under BIOS; a smaller machine, or
/// UEFI, whose firmware's code regions are usable after boot, may put it
/// on such pages).
/// Writing the whole frame once overwrites every stale translation, and
/// the page is plain RAM again. (On AArch64 QEMU loads the kernel's ELF
/// itself and no code runs from the RAM the kernel hands out before it.)
fn scrub(frame: PhysFrame<Size4KiB>) {
    // SAFETY: `frame` is RAM just handed out by the frame allocator
    // (nothing else refers to it), reached read-write through the
    // bootloader's mapping of all physical memory; FRAME_BYTES bytes from
    // its start are that frame alone.
    unsafe {
        core::ptr::write_bytes(
            phys_to_ptr(frame.start_address().as_u64()),
            0,
            FRAME_BYTES as usize,
        );
    }
}

/// Fills the next `count` frames the allocator will hand out with `byte`,
/// at most to the end of their region, and returns them as `[start, end)`
/// (in-kernel tests: what a stack would see of memory that held other
/// bytes before, such as the bootloader's).
pub fn poison_next_frames(count: u64, byte: u8) -> (u64, u64) {
    let frames = FRAMES.lock();
    let Some((start, region_end)) = frames.next_free_run() else {
        return (0, 0);
    };
    let end = region_end.min(start + count * FRAME_BYTES);
    // SAFETY: `[start, end)` is the free rest of one usable region, not
    // yet handed out (the bump pointer only grows, and the allocator's
    // lock is held, so nobody takes it meanwhile): nothing refers to it.
    // It is reached read-write through the mapping of all physical memory.
    unsafe { core::ptr::write_bytes(phys_to_ptr(start), byte, (end - start) as usize) };
    (start, end)
}

/// The physical address `virt` maps to in the current page tables, if
/// any.
pub fn phys_of(virt: u64) -> Option<u64> {
    use x86_64::structures::paging::Translate;
    let kva = KVA.lock();
    let kva = kva.as_ref().expect("paging::init not called");
    kva.mapper
        .translate_addr(VirtAddr::new(virt))
        .map(|phys| phys.as_u64())
}

/// Maps `bytes` of device memory at `phys` uncached (PCD|PWT) in Vigil's
/// area and returns the virtual address of `phys`.
pub fn map_mmio(phys: PhysAddr, bytes: u64) -> VirtAddr {
    let first = phys.as_u64() & !(FRAME_BYTES - 1);
    let pages = (phys.as_u64() + bytes - first).div_ceil(FRAME_BYTES);
    let mut kva = KVA.lock();
    let kva = kva.as_mut().expect("paging::init not called");
    let virt = kva.next;
    kva.next += pages * FRAME_BYTES;
    assert!(kva.next <= kva.end, "kernel virtual area exhausted");
    let flags = PageTableFlags::PRESENT
        | PageTableFlags::WRITABLE
        | PageTableFlags::NO_CACHE
        | PageTableFlags::WRITE_THROUGH
        | PageTableFlags::NO_EXECUTE;
    let mut frames = FRAMES.lock();
    for i in 0..pages {
        let page = Page::<Size4KiB>::containing_address(VirtAddr::new(virt + i * FRAME_BYTES));
        let frame = PhysFrame::containing_address(PhysAddr::new(first + i * FRAME_BYTES));
        // SAFETY: `page` is fresh in Vigil's own slot; `frame` is device
        // memory (not RAM the allocator hands out), mapped uncached so device
        // register reads and writes reach the device in program order.
        unsafe { kva.mapper.map_to(page, frame, flags, &mut *frames) }
            .expect("MMIO page already mapped")
            .flush();
    }
    VirtAddr::new(virt + (phys.as_u64() - first))
}

/// Identity-maps the low page at `phys` (executable, writable) for the AP
/// trampoline, which runs with paging turned on at that very address.
pub fn identity_map_low_page(phys: PhysAddr) {
    let mut kva = KVA.lock();
    let kva = kva.as_mut().expect("paging::init not called");
    let frame = PhysFrame::<Size4KiB>::containing_address(phys);
    let flags = PageTableFlags::PRESENT | PageTableFlags::WRITABLE;
    let mut frames = FRAMES.lock();
    // SAFETY: low memory below 1 MiB is unmapped by the bootloader and never
    // handed out by the frame allocator; the trampoline owns this page.
    unsafe { kva.mapper.identity_map(frame, flags, &mut *frames) }
        .expect("trampoline page already mapped")
        .flush();
}

/// Removes the trampoline's identity mapping once every AP has left it.
pub fn unmap_low_page(phys: PhysAddr) {
    let mut kva = KVA.lock();
    let kva = kva.as_mut().expect("paging::init not called");
    let page = Page::<Size4KiB>::containing_address(VirtAddr::new(phys.as_u64()));
    match kva.mapper.unmap(page) {
        Ok((_, flush)) => flush.flush(),
        Err(err) => log::warn!("trampoline page was not mapped: {err:?}"),
    }
}
