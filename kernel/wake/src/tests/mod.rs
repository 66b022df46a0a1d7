//! Unit tests: deterministic ones (no threads, both sides stepped by hand)
//! and stress tests on host threads.

mod driver;
mod explore;
mod host_threads;
mod interleavings;
mod parker;
mod scenarios;
mod units;
