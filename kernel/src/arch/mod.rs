//! Everything that touches the CPU or platform devices directly. The rest of
//! the kernel calls these safe wrappers: the crate denies `unsafe_code`, and
//! allows it only here and in the few modules that must (each `mod` line
//! says why): the context switch's callers (`sched::core_sched`,
//! `sched::task`), the heap's and the frame allocator's setup, the debug
//! table's `no_mangle`, and the allocator test.
//!
//! # The surface the kernel above this layer uses
//!
//! One implementation per architecture (`x86_64` on QEMU's `pc`/`q35` and
//! Bochs, `aarch64` on QEMU's `virt`), each providing the same modules
//! with the same items (`idle_platform`, `irq_counts`, `fault_probe` and
//! `fault_injection` are shared, written once over the others); the rest
//! of the kernel names only these:
//!
//! | module | what it provides |
//! |---|---|
//! | `boot` | the entry point (early init, then `start::kernel_main`), [`boot::BootEnv`]: heap size, boot parameters' source and line, image offset |
//! | `bringup` | core discovery (`prepare`), starting every other core (`start_all_aps`), `discovered`, `bringup_us`; each core then enters `sched::core_sched::run_core` |
//! | `tsc` | the time source shared by every core: `now` in ticks, `ticks_per_ms`, `ticks_to_us`, `us_to_ticks`, `spin_us` (x86: the TSC; AArch64: the generic timer's virtual count) |
//! | `percpu` | `current_index`: the running core's dense index |
//! | `idle_platform` | [`idle_platform::CorePlatform`]: the wake crate's `Platform` (sleep, interrupt counts, wake IPI, one-shot, clock); `sleeping(core)` |
//! | `halt` | `enable_interrupts_and_halt` (the sleep that a pending interrupt cannot miss), `halt_forever` |
//! | `interrupts` | `enable`, `disable`, `without` (this core's interrupt mask) |
//! | `interrupt_vectors` | the interrupt numbers Vigil uses (`WAKE_VECTOR`, `PROBE_VECTOR`, `TEST_VECTOR`), the per-core counts `COUNTS`, `set_test_hook`, `MAX_CORES` |
//! | `ipi` | `send(hw_id, vector)` to one core, `is_pending(vector)` on this core, `this_core_id` |
//! | `timer` | this core's one-shot: `arm_oneshot_us`, `cancel` |
//! | `context` | the kernel-thread context switch: `switch`, `prepare_stack` |
//! | `paging` | stacks with guard pages: `map_stack`, `GuardOwner`, `MappedStack`, `describe_guard`, `phys_to_ptr` |
//! | `exceptions` | `breakpoint`, `breakpoint_count` (each arch installs its exception table on every core itself) |
//! | `fault_probe`, `fault_injection` | recoverable probes of unmapped memory; the faults `fault=...` raises (shared, over each arch's `probe_read` and `forced_reset`) |
//! | `fw_cfg` | QEMU's firmware configuration device (`present`, `read_file`) |
//! | `serial` | the console: `write_fmt`, `write_fmt_emergency` |
//! | `power` | how a run ends: `exit_emulator(code)`, then `power_off` |
#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::*;

// Shared by both: the wake crate's platform over each arch's halt, IPI,
// timer and clock, the per-core interrupt counts, the clock's rate, the
// recoverable probe and the faults raised on purpose (over each arch's
// `probe_read`, `forced_reset` and `paging`).
pub mod fault_injection;
pub mod fault_probe;
pub mod guard_pages;
pub mod idle_platform;
pub mod irq_counts;
pub mod param_line;
pub mod tick_rate;
