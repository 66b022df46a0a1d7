//! A bump allocator of 4 KiB physical frames over the regions the boot's
//! memory map marks usable. Frames are never freed: the kernel allocates its
//! heap, stacks and page tables once at boot. Memory below 1 MiB is never
//! handed out (the x86_64 AP trampoline lives there). Addresses are
//! physical, as plain `u64`s; the arch layer maps them.

use spin::Mutex;

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
/// marks usable (the x86_64 AP trampoline needs one such page).
#[cfg(target_arch = "x86_64")]
pub fn low_page_usable(phys: u64) -> bool {
    LOW_REGIONS
        .lock()
        .iter()
        .any(|&(start, end)| start <= phys && phys + FRAME_BYTES <= end)
}

/// Records the usable regions of the boot memory map, as `(start, end)`
/// physical addresses.
pub fn init(usable: impl Iterator<Item = (u64, u64)> + Clone) {
    {
        let mut low = LOW_REGIONS.lock();
        let usable_low = usable.clone().filter(|&(start, _)| start < LOW_MEMORY_END);
        for (slot, (start, end)) in low.iter_mut().zip(usable_low) {
            *slot = (start, end.min(LOW_MEMORY_END));
        }
    }
    let mut frames = FRAMES.lock();
    for (region_start, region_end) in usable {
        let start = region_start
            .max(LOW_MEMORY_END)
            .next_multiple_of(FRAME_BYTES);
        let end = region_end & !(FRAME_BYTES - 1);
        if start < end && frames.count < MAX_REGIONS {
            let i = frames.count;
            frames.regions[i] = Region { next: start, end };
            frames.count += 1;
        }
    }
}

impl BumpFrames {
    /// Takes `bytes` (rounded up to frames) of physically contiguous memory
    /// from the first region that still has room; returns its (physical)
    /// start.
    pub fn allocate_contiguous(&mut self, bytes: u64) -> Option<u64> {
        let bytes = bytes.next_multiple_of(FRAME_BYTES);
        let region = self.regions[..self.count]
            .iter_mut()
            .find(|r| r.end - r.next >= bytes)?;
        let start = region.next;
        region.next += bytes;
        Some(start)
    }

    /// The frames [`allocate_contiguous`](Self::allocate_contiguous) would
    /// hand out next for single frames, as `(next, end)`: the free rest
    /// of the first region with room for one (`None`: memory is
    /// exhausted). The x86_64 stack test's poisoning uses it.
    #[cfg(target_arch = "x86_64")]
    pub fn next_free_run(&self) -> Option<(u64, u64)> {
        self.regions[..self.count]
            .iter()
            .find(|r| r.end - r.next >= FRAME_BYTES)
            .map(|r| (r.next, r.end))
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
