//! One module per `cargo xtask` subcommand.

pub mod bench;
pub mod build;
pub mod docs;
pub mod mutants;
pub mod peer_bench;
pub mod replay;
pub mod run;
pub mod stress;
pub mod test;
