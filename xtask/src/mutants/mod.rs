//! `cargo xtask mutants`: the wake crate's mutation run. The mutants are
//! data ([`catalogue`]); each is applied to a scratch copy of the crate
//! ([`scratch`]), its loom model built and run under a timeout and the
//! outcome classified ([`verdict`]); [`report`] formats the lines and
//! counts them.

pub mod catalogue;
pub mod report;
pub mod run;
pub mod scratch;
pub mod verdict;
