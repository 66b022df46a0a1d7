//! What a core's inbox carries: pinned tasks, and search wakes (the
//! stealable pool's "look for work", which carries none).

use super::task::TaskRef;

/// One inbox item.
#[derive(Debug, Clone)]
pub enum Inbound {
    /// A task made runnable on this core by another core.
    Task(TaskRef),
    /// This core was chosen to search the stealable pool. The pool already
    /// counts it as the searcher; the item only ends its halt (it is
    /// dropped when drained).
    Search,
}
