//! The kernel heap: `linked_list_allocator` over one physically contiguous
//! run of usable memory, reached through the arch layer's mapping of
//! physical memory (no page-table work needed). Interrupt handlers must not allocate:
//! the heap lock does not disable interrupts.

use crate::arch::paging;
use crate::memory::frames::FRAMES;
use linked_list_allocator::LockedHeap;

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

/// Upper bound on the heap; the heap takes half of the largest free run.
const MAX_HEAP_BYTES: u64 = 256 * 1024 * 1024;

/// Carves the heap out of physical memory. Returns its size in bytes.
pub fn init() -> u64 {
    let mut frames = FRAMES.lock();
    let heap_bytes = (frames.largest_free_bytes() / 2).min(MAX_HEAP_BYTES) & !0xfff;
    let start = frames
        .allocate_contiguous(heap_bytes)
        .expect("no usable memory for the kernel heap");
    let virt = paging::phys_to_ptr(start);
    // SAFETY: [start, start + heap_bytes) is usable RAM that the frame
    // allocator handed out exactly once, mapped read-write and cacheable at
    // `virt` by the arch layer; nothing else refers to it.
    unsafe { HEAP.lock().init(virt, heap_bytes as usize) };
    heap_bytes
}

/// Bytes currently allocated.
pub fn used_bytes() -> usize {
    HEAP.lock().used()
}
