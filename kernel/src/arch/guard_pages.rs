//! The registry of guard pages (the unmapped page below each stack the
//! arch layer maps), shared by every architecture: a fault on one is
//! reported with what it guards.

use crate::memory::frames::FRAME_BYTES;
use alloc::vec::Vec;
use core::fmt;
use spin::Mutex;

/// A guard page and what it guards.
#[derive(Debug, Clone)]
struct Guard {
    page_start: u64,
    owner: GuardOwner,
}

/// What a guard page protects, e.g. ("core", 3) for core 3's stack.
#[derive(Debug, Clone, Copy)]
pub struct GuardOwner {
    /// Kind of stack ("core stack", "task stack", "test stack").
    pub what: &'static str,
    /// Core index or task id.
    pub index: usize,
}

static GUARDS: Mutex<Vec<Guard>> = Mutex::new(Vec::new());

/// Records the page at `page_start` as the guard page of `owner`.
pub fn register(page_start: u64, owner: GuardOwner) {
    GUARDS.lock().push(Guard { page_start, owner });
}

/// Describes `address` if it lies in a registered guard page (for fault
/// reports); empty otherwise. Never blocks and never allocates: a fault taken
/// while the registry is locked just reports nothing extra.
pub fn describe_guard(address: u64) -> GuardDescription {
    let page = address & !(FRAME_BYTES - 1);
    let label = GUARDS.try_lock().and_then(|guards| {
        guards
            .iter()
            .find(|g| g.page_start == page)
            .map(|g| g.owner)
    });
    GuardDescription(label)
}

/// Display form of [`describe_guard`].
#[derive(Debug)]
pub struct GuardDescription(Option<GuardOwner>);

impl GuardDescription {
    /// Whether the address was in a registered guard page.
    pub fn is_guard(&self) -> bool {
        self.0.is_some()
    }
}

impl fmt::Display for GuardDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(owner) => write!(f, ": guard page of {} {}", owner.what, owner.index),
            None => Ok(()),
        }
    }
}
