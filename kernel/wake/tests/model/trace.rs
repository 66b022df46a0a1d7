//! With `VIGIL_LOOM_TRACE` set (and `--test-threads=1`: the trace is
//! global), each execution records what the core and the wakers saw, and a
//! failing execution prints it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

static TRACE_ON: AtomicBool = AtomicBool::new(false);
static TRACE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Turns tracing on if `VIGIL_LOOM_TRACE` is set.
pub fn configure() {
    TRACE_ON.store(std::env::var_os("VIGIL_LOOM_TRACE").is_some(), SeqCst);
}

/// Clears the trace (a new execution).
pub fn clear() {
    TRACE.lock().unwrap_or_else(|p| p.into_inner()).clear();
}

/// Records `event` if tracing is on.
pub fn trace(event: impl FnOnce() -> String) {
    if TRACE_ON.load(SeqCst) {
        TRACE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event());
    }
}

/// Prints the trace of the failing execution.
pub fn dump_trace() {
    for event in TRACE.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        eprintln!("  {event}");
    }
}
