//! The pool tests' own panics, kept off stderr: shared by the test binaries
//! that panic on purpose (`pool_panics.rs`, `pool_join.rs`), each its own
//! binary because the panic hook is process-wide.

use std::panic;
use std::sync::Once;

/// The payload of a test's own panic, with a name for the test to tell
/// which one came back.
pub struct DeliberatePanic(
    #[allow(
        dead_code,
        reason = "pool_panics only checks the payload's type; pool_join reads the name"
    )]
    pub &'static str,
);

/// Keeps the deliberate panics off stderr (a test may raise a thousand);
/// any other panic goes to the hook that was there before.
pub fn quiet_deliberate_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<DeliberatePanic>() {
                previous(info);
            }
        }));
    });
}
