//! A bump allocator of 4 KiB physical frames over the regions the boot info
//! marks usable. Frames are never freed: the kernel allocates its heap, stacks
//! and page tables once at boot. Memory below 1 MiB is never handed out (the
//! AP trampoline lives there).

use bootloader_api::info::{MemoryRegionKind, MemoryRegions};
use spin::Mutex;
use x86_64::PhysAddr;
use x86_64::structures::paging::{FrameAllocator, PhysFrame, Size4KiB};

/// Size of one frame.
pub const FRAME_BYTES: u64 = 4096;
const LOW_MEMORY_END: u64 = 0x10_0000;
const MAX_REGIONS: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Region {
    next: u64,
    end: u64,
}

/// The boot-time frame allocator (one instance, behind [`FRAMES`]).
#[derive(Debug)]
pub struct BumpFrames {
    regions: [Region; MAX_REGIONS],
    count: usize,
}

/// The global frame allocator; filled by [`init`].
pub static FRAMES: Mutex<BumpFrames> = Mutex::new(BumpFrames {
    regions: [Region { next: 0, end: 0 }; MAX_REGIONS],
    count: 0,
});

static LOW_REGIONS: Mutex<[(u64, u64); MAX_REGIONS]> = Mutex::new([(0, 0); MAX_REGIONS]);

/// Whether the page at `phys` (below 1 MiB) lies in memory the boot map
/// marks usable (the AP trampoline needs one such page).
pub fn low_page_usable(phys: u64) -> bool {
    LOW_REGIONS
        .lock()
        .iter()
        .any(|&(start, end)| start <= phys && phys + FRAME_BYTES <= end)
}

/// Records the usable regions of the boot memory map.
pub fn init(regions: &MemoryRegions) {
    {
        let mut low = LOW_REGIONS.lock();
        let usable_low = regions
            .iter()
            .filter(|r| r.kind == MemoryRegionKind::Usable && r.start < LOW_MEMORY_END);
        for (slot, region) in low.iter_mut().zip(usable_low) {
            *slot = (region.start, region.end.min(LOW_MEMORY_END));
        }
    }
    let mut frames = FRAMES.lock();
    for region in regions
        .iter()
        .filter(|r| r.kind == MemoryRegionKind::Usable)
    {
        let start = region
            .start
            .max(LOW_MEMORY_END)
            .next_multiple_of(FRAME_BYTES);
        let end = region.end & !(FRAME_BYTES - 1);
        if start < end && frames.count < MAX_REGIONS {
            let i = frames.count;
            frames.regions[i] = Region { next: start, end };
            frames.count += 1;
        }
    }
}

impl BumpFrames {
    /// Takes `bytes` (rounded up to frames) of physically contiguous memory
    /// from the first region that still has room; returns its start.
    pub fn allocate_contiguous(&mut self, bytes: u64) -> Option<PhysAddr> {
        let bytes = bytes.next_multiple_of(FRAME_BYTES);
        let region = self.regions[..self.count]
            .iter_mut()
            .find(|r| r.end - r.next >= bytes)?;
        let start = region.next;
        region.next += bytes;
        Some(PhysAddr::new(start))
    }

    /// The largest contiguous run still free, in bytes.
    pub fn largest_free_bytes(&self) -> u64 {
        self.regions[..self.count]
            .iter()
            .map(|r| r.end - r.next)
            .max()
            .unwrap_or(0)
    }
}

// SAFETY: every frame returned comes from a region the bootloader marked
// usable and is handed out at most once (the bump pointer only grows).
unsafe impl FrameAllocator<Size4KiB> for BumpFrames {
    fn allocate_frame(&mut self) -> Option<PhysFrame<Size4KiB>> {
        self.allocate_contiguous(FRAME_BYTES)
            .map(PhysFrame::containing_address)
    }
}
