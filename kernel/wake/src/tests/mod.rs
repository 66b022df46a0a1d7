//! Deterministic tests: no threads, both sides stepped by hand.

mod explore;
mod interleavings;
mod scenarios;
mod units;
