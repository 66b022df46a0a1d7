//! The `cargo xtask` command line: clap definitions and dispatch. Every
//! argument is validated here, before anything is built; clap's own errors
//! and ours both exit with status 2.

use std::process::ExitCode;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::guest::settings::{Feature, WakePolicy, Watchdog};

use crate::commands;
use crate::error::XtaskError;
use crate::runner::kernel_build::BuildConfig;
use crate::runner::platform::{Apic, Arch, Emulator, Machine};
use crate::stress::runner::{DEFAULT_RUN_TIMEOUT_S, DEFAULT_STALL_S};

/// Vigil's host tasks.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands. Each lives in its own module under `commands/`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the kernel and its BIOS and UEFI images; print their paths.
    /// With KEY=VALUE parameters, images that carry them (for machines
    /// without QEMU's fw_cfg: Bochs, real hardware).
    Build(BuildCommandArgs),
    /// Build, then boot the kernel under QEMU with the serial port on stdout.
    Run(RunArgs),
    /// Run every test: host crates, loom models, the in-kernel suite, QEMU tests.
    Test(TestArgs),
    /// Boot the Laplace workload many times per core count, hunting lost
    /// wakeups and stuck cores.
    Stress(StressArgs),
    /// Compare the wake policies: Laplace time, IPIs, wake latency, idle cost.
    Bench(BenchArgs),
    /// Run the wake crate's pool against rayon and tokio
    /// (kernel/wake/examples/peer_bench.rs, no QEMU) several times, and
    /// write the tables (each run's medians) and the plots from every
    /// run's samples.
    PeerBench(PeerBenchArgs),
    /// The wake crate's mutation run: every mutant killed by the loom
    /// model's own assertion, after a baseline of the unmutated models.
    Mutants(MutantsArgs),
    /// Regenerate the parts of docs/harness.md taken from the code (every
    /// subcommand's help, the kernel-parameter and fault tables).
    Docs(DocsArgs),
    /// Boot a recorded Bochs boot again (from a `stress --emulator bochs
    /// --json` file) and fail if its serial output differs in any byte.
    Replay(ReplayArgs),
}

/// The Bochs settings a boot is determined by, besides the image and the
/// core count (`--emulator bochs` only; defaults in
/// [`crate::runner::bochs::BochsSettings`]).
#[derive(Debug, Clone, Default, Args)]
pub struct BochsArgs {
    /// Under Bochs: emulated instructions per emulated second (`cpu:
    /// ips=`; default 50000000).
    #[arg(long, value_name = "IPS", value_parser = crate::runner::bochs::parse_ips)]
    pub bochs_ips: Option<u64>,
    /// Under Bochs: `cpu: quantum=` (1..=32; default 16), read only by a
    /// Bochs built without its debugger (Debian's has it, and there it
    /// changes nothing: see --bochs-turn).
    #[arg(long, value_name = "Q", value_parser = crate::runner::bochs::parse_quantum)]
    pub bochs_quantum: Option<u32>,
    /// Under Bochs: instructions each CPU runs per turn, 1 (the
    /// debugger's `s all`, default: `replay --explain` then watches the
    /// recorded execution itself) or 5 (its `continue`); it moves the
    /// interleaving.
    #[arg(long, value_name = "N", value_parser = crate::runner::bochs::parse_turn)]
    pub bochs_turn: Option<u32>,
    /// Under Bochs: the CMOS clock's start, seconds since 1970 (`clock:
    /// time0=`; default 946684800, 2000-01-01).
    #[arg(long, value_name = "SECONDS", value_parser = crate::runner::bochs::parse_time0)]
    pub bochs_time0: Option<u64>,
}

impl BochsArgs {
    /// The settings asked for, defaults for the rest.
    pub fn settings(&self) -> crate::runner::bochs::BochsSettings {
        let defaults = crate::runner::bochs::BochsSettings::default();
        crate::runner::bochs::BochsSettings {
            ips: self.bochs_ips.unwrap_or(defaults.ips),
            quantum: self.bochs_quantum.unwrap_or(defaults.quantum),
            turn: self.bochs_turn.unwrap_or(defaults.turn),
            time0: self.bochs_time0.unwrap_or(defaults.time0),
        }
    }

    /// A usage error when a Bochs setting is given for another emulator.
    pub fn check_emulator(&self, emulator: Emulator) -> crate::error::Result<()> {
        let given = self.bochs_ips.is_some()
            || self.bochs_quantum.is_some()
            || self.bochs_turn.is_some()
            || self.bochs_time0.is_some();
        if given && emulator != Emulator::Bochs {
            return Err(XtaskError::usage(
                "--bochs-ips, --bochs-quantum, --bochs-turn and --bochs-time0 are Bochs settings: they need --emulator bochs",
            ));
        }
        Ok(())
    }
}

/// Options of `cargo xtask replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// A `cargo xtask stress --emulator bochs --json` file.
    #[arg(value_name = "FILE.json")]
    pub file: PathBuf,
    /// Which boot: its `order` in the file (its place in the campaign, as
    /// a failure's `replay:` line names it). Default: the first boot that
    /// did not pass, or the only one.
    #[arg(long, value_name = "N")]
    pub run: Option<u64>,
    /// Print the replayed serial output as it comes.
    #[arg(long)]
    pub echo: bool,
    /// For a boot whose guest reported a lost wakeup: boot it again under
    /// Bochs's debugger (watchpoints on the victim core's wake state and
    /// inbox count, no change to the guest) and print every access to
    /// them, with cores and functions, up to the lost halt.
    #[arg(long)]
    pub explain: bool,
    /// Replay the boot this many times (1..=1000, default 1), each
    /// compared with the recording byte for byte; the command fails if any
    /// one differs (not with --explain).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::stress::replay::parse_times, conflicts_with = "explain")]
    pub times: u32,
}

/// A kernel other than Vigil booted on the same emulated machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Peer {
    /// Debian's own Linux kernel (`linux-image-*-cloud-amd64`, fetched with
    /// apt and unpacked under target/), with an initramfs whose `/init`
    /// runs the same Laplace.
    Linux,
}

/// Parses one of `--variants`: a Vigil variant's name as the bench's
/// tables show it.
pub fn parse_bench_variant(text: &str) -> Result<crate::bench::plan::Variant, String> {
    use crate::bench::plan::Variant;
    Variant::ALL
        .into_iter()
        .find(|variant| variant.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = Variant::ALL.iter().map(|variant| variant.name()).collect();
            format!("`{text}`: expected one of {}", names.join(", "))
        })
}

/// Parses `--linux-idle`: `default` or `poll`.
pub fn parse_linux_idle(text: &str) -> Result<vigil_proto::linux_peer::LinuxIdle, String> {
    use vigil_proto::linux_peer::LinuxIdle;
    LinuxIdle::ALL
        .into_iter()
        .find(|idle| idle.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = LinuxIdle::ALL.iter().map(|idle| idle.name()).collect();
            format!("`{text}`: expected one of {}", names.join(", "))
        })
}

/// Options shared by everything that builds the kernel.
#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    /// Build the kernel with optimisations.
    #[arg(long)]
    pub release: bool,
    /// Kernel cargo features (comma-separated or repeated).
    #[arg(long, value_name = "F", value_delimiter = ',', value_enum)]
    pub features: Vec<Feature>,
    /// The architecture: `x86_64` (QEMU's pc/q35, Bochs) or `aarch64`
    /// (QEMU's virt with a GICv3, the kernel's ELF booted at EL1).
    #[arg(long, value_enum, default_value_t = Arch::X86_64)]
    pub arch: Arch,
}

impl BuildArgs {
    /// The kernel build these options ask for.
    pub fn build_config(&self) -> BuildConfig {
        BuildConfig {
            release: self.release,
            features: self.features.clone(),
            arch: self.arch,
        }
    }
}

/// Options of `cargo xtask build`.
#[derive(Debug, Clone, Args)]
pub struct BuildCommandArgs {
    /// The kernel build.
    #[command(flatten)]
    pub build: BuildArgs,
    /// Boot parameters to write into the images (the kernel reads them when
    /// there is no fw_cfg; fw_cfg wins when both exist).
    #[arg(value_name = "KEY=VALUE", value_parser = crate::guest::settings::parse_param)]
    pub params: Vec<String>,
}

/// Options of `cargo xtask run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Kernel build options.
    #[command(flatten)]
    pub build: BuildArgs,
    /// Number of cores (1..=256; above 64 with --apic x2apic, above 255
    /// with --machine q35).
    #[arg(long, value_name = "N", default_value_t = crate::runner::qemu::DEFAULT_SMP, value_parser = crate::runner::platform::parse_smp)]
    pub smp: u32,
    /// Boot the UEFI image under OVMF instead of the BIOS image.
    #[arg(long)]
    pub uefi: bool,
    /// QEMU machine model.
    #[arg(long, value_enum, default_value_t = Machine::Pc)]
    pub machine: Machine,
    /// What boots the image: `qemu`, or `bochs` (BIOS, xAPIC, pc only; the
    /// parameters go into the image).
    #[arg(long, value_enum, default_value_t = Emulator::Qemu)]
    pub emulator: Emulator,
    /// Bochs's settings (with `--emulator bochs`).
    #[command(flatten)]
    pub bochs: BochsArgs,
    /// The CPU's local APIC interface: `xapic` (MMIO, TCG's baseline) or
    /// `x2apic` (`-cpu qemu64,+x2apic`, QEMU 10 or later); the kernel uses
    /// x2APIC when the CPU offers it and says which in its boot line.
    #[arg(long, value_enum, default_value_t = Apic::Xapic)]
    pub apic: Apic,
    /// Kill QEMU and fail after this many seconds.
    #[arg(long, value_name = "S", default_value_t = crate::runner::qemu::DEFAULT_TIMEOUT_S, value_parser = crate::runner::platform::parse_timeout_s)]
    pub timeout_s: u64,
    /// Wait for gdb on :1234 before running (disables the timeout).
    #[arg(long)]
    pub gdb: bool,
    /// Count the wake IPIs QEMU delivers (its trace of LAPIC writes) and
    /// fail the run if the guest's own count differs.
    #[arg(long)]
    pub ipi_oracle: bool,
    /// Confine QEMU to the first N host cores xtask may use (`taskset`;
    /// 1..=1024, at most what the host gives xtask): the guest's vCPUs
    /// share those N cores.
    #[arg(long, value_name = "N", value_parser = crate::runner::host_cores::parse_host_cores)]
    pub host_cores: Option<u32>,
    /// Boot a peer instead of Vigil on the same machine: `linux` (Debian's
    /// kernel; its `/init` runs Laplace with the parameters `workload`,
    /// `size`, `iterations`, `pool`, `seed`).
    #[arg(long, value_enum)]
    pub peer: Option<Peer>,
    /// With --peer linux: Linux's idle choice, `default` (its own) or
    /// `poll` (`idle=poll` on its command line).
    #[arg(long, value_name = "IDLE", value_parser = parse_linux_idle, requires = "peer")]
    pub linux_idle: Option<vigil_proto::linux_peer::LinuxIdle>,
    /// Kernel boot parameters, `key=value` each (e.g. `workload=laplace size=64`).
    #[arg(value_name = "KEY=VALUE", value_parser = crate::guest::settings::parse_param)]
    pub params: Vec<String>,
}

/// Options of `cargo xtask stress`.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct StressArgs {
    /// `stress merge`: join shards' JSON files instead of booting.
    #[command(subcommand)]
    pub action: Option<StressAction>,
    /// Kernel build options.
    #[command(flatten)]
    pub build: BuildArgs,
    /// Core counts, comma-separated (each 1..=256; above 64 with --apic
    /// x2apic).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', default_values_t = [4, 8, 16, 32], value_parser = crate::runner::platform::parse_smp)]
    pub smp: Vec<u32>,
    /// Boots per core count (1..=100000).
    #[arg(long, value_name = "R", default_value_t = 10, value_parser = crate::campaign::scope::parse_runs)]
    pub runs: u32,
    /// Wake policy (default state-machine; leave out with --features idle-poll).
    #[arg(long, value_enum)]
    pub policy: Option<WakePolicy>,
    /// Seeded random delays and holds at the protocol's critical points (`chaos=on`).
    #[arg(long)]
    pub chaos: bool,
    /// In-guest watchdog scan period in ms (1..=60000), or `off` (default
    /// 20).
    #[arg(long, value_name = "MS|off", value_parser = crate::guest::settings::parse_watchdog)]
    pub watchdog_ms: Option<Watchdog>,
    /// Inject a fault into every boot (`fault=`; the IPI faults at a seeded
    /// round, stranded-steal and stalled-waker from round 10 on): every
    /// boot must then be caught, as a lost wakeup, stranded stealable work
    /// or a stuck core.
    #[arg(long, value_enum)]
    pub fault: Option<crate::guest::settings::IpiFault>,
    /// Count the wake IPIs QEMU delivers (its trace of LAPIC writes) and
    /// fail a boot whose own count differs.
    #[arg(long)]
    pub ipi_oracle: bool,
    /// Fork-join pool (`pool=`; kernel default: the round plan's choice,
    /// pinned only where every core has a host core and its round is
    /// cheaper).
    #[arg(long, value_enum)]
    pub pool: Option<crate::guest::settings::Pool>,
    /// Stealable chunks per round (`chunks=`, 1..=4096; kernel default: the
    /// round plan's, from the host parallelism and the round's measured
    /// work; with --fault and the stealing pool, one per core, so that
    /// every round wakes cores on any host). Fixing it makes a campaign's
    /// rounds the same on every host.
    #[arg(long, value_name = "N", value_parser = crate::guest::settings::parse_chunks)]
    pub chunks: Option<u32>,
    /// Laplace grid side (4..=4096; kernel default 64).
    #[arg(long, value_name = "N", value_parser = crate::guest::settings::parse_grid_size)]
    pub size: Option<u32>,
    /// Laplace iterations (1..=10000000; kernel default 1000).
    #[arg(long, value_name = "I", value_parser = crate::guest::settings::parse_iterations)]
    pub iterations: Option<u32>,
    /// Write every run (settings, class, result, statistics, serial) here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seconds without serial output after which a boot is stuck (at least
    /// 120 before its first line: firmware and bootloader print nothing).
    #[arg(long, value_name = "S", default_value_t = DEFAULT_STALL_S, value_parser = crate::runner::platform::parse_stall_s)]
    pub stall_s: u64,
    /// QEMUs at once (1..=64; default: host cores).
    #[arg(long, value_name = "J", value_parser = crate::campaign::scope::parse_jobs)]
    pub jobs: Option<usize>,
    /// Base seed every run's seed derives from (default: from the clock).
    #[arg(long, value_name = "SEED", value_parser = crate::guest::settings::parse_seed)]
    pub seed: Option<u64>,
    /// Kill a boot that runs longer than this, output or not.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_RUN_TIMEOUT_S, value_parser = crate::runner::platform::parse_timeout_s)]
    pub timeout_s: u64,
    /// Boot only the K-th of N disjoint slices of the campaign (same base
    /// seed, same per-boot seeds as the whole campaign); join the slices'
    /// `--json` files with `stress merge`.
    #[arg(long, value_name = "K/N", value_parser = crate::stress::shard::parse_shard)]
    pub shard: Option<crate::stress::shard::Shard>,
    /// What boots the images: `qemu`, or `bochs` (deterministic: every
    /// boot is recorded for `cargo xtask replay`; xAPIC, at most 64 cores,
    /// no --ipi-oracle).
    #[arg(long, value_enum, default_value_t = Emulator::Qemu)]
    pub emulator: Emulator,
    /// Bochs's settings (with `--emulator bochs`).
    #[command(flatten)]
    pub bochs: BochsArgs,
    /// The CPU's local APIC interface: `xapic` (MMIO, TCG's baseline) or
    /// `x2apic` (`-cpu qemu64,+x2apic`, QEMU 10 or later); the kernel uses
    /// x2APIC when the CPU offers it and says which in its boot line.
    #[arg(long, value_enum, default_value_t = Apic::Xapic)]
    pub apic: Apic,
}

/// What `cargo xtask stress` does besides booting.
#[derive(Debug, Clone, Subcommand)]
pub enum StressAction {
    /// Join the `--json` files of a campaign's shards into the whole
    /// campaign's table (and JSON).
    Merge(MergeArgs),
}

/// Options of `cargo xtask stress merge`.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The shards' `--json` files, one per shard.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged campaign here (same format as `stress --json`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Options of `cargo xtask bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Core counts, comma-separated (each 1..=256; above 64 with --apic
    /// x2apic).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16, 32], value_parser = crate::runner::platform::parse_smp, conflicts_with = "quick")]
    pub smp: Vec<u32>,
    /// Boots per configuration (1..=100000).
    #[arg(long, value_name = "R", default_value_t = 5, value_parser = crate::campaign::scope::parse_runs, conflicts_with = "quick")]
    pub runs: u32,
    /// Sections to run, comma-separated (default: all).
    #[arg(
        long,
        value_name = "S,S,...",
        value_delimiter = ',',
        value_enum,
        conflicts_with = "quick"
    )]
    pub sections: Vec<crate::bench::plan::Section>,
    /// Vigil's variants to run, comma-separated (default: all; each section
    /// runs those of its own that are listed).
    #[arg(
        long,
        value_name = "V,V,...",
        value_delimiter = ',',
        value_parser = parse_bench_variant,
        conflicts_with = "quick"
    )]
    pub variants: Vec<crate::bench::plan::Variant>,
    /// Boot a peer too, interleaved with Vigil's boots: `linux` adds Debian's
    /// kernel with Linux's own idle and with `idle=poll`, each with the
    /// pinned pool and with rayon (grid sections only).
    #[arg(long = "peer", value_name = "PEER", value_enum, value_delimiter = ',')]
    pub peers: Vec<Peer>,
    /// Where to write every boot (default: DIR/bench.json of --plot).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Directory for the SVG plots.
    #[arg(long, value_name = "DIR", default_value = "target/bench")]
    pub plot: PathBuf,
    /// 1 run at 1 and 2 cores, tiny grids, a short idle (a smoke test).
    #[arg(long)]
    pub quick: bool,
    /// A Laplace/floor boot past this many seconds is recorded as timed
    /// out, and its configuration is not booted again.
    #[arg(long, value_name = "S", default_value_t = crate::bench::plan::GRID_TIMEOUT_S, value_parser = crate::runner::platform::parse_timeout_s, conflicts_with = "quick")]
    pub grid_timeout_s: u64,
    /// The CPU's local APIC interface: `xapic` (MMIO, TCG's baseline) or
    /// `x2apic` (`-cpu qemu64,+x2apic`, QEMU 10 or later); the kernel uses
    /// x2APIC when the CPU offers it and says which in its boot line.
    #[arg(long, value_enum, default_value_t = Apic::Xapic, conflicts_with = "quick")]
    pub apic: Apic,
    /// The architecture: `x86_64` or `aarch64` (QEMU's virt, GICv3).
    #[arg(long, value_enum, default_value_t = Arch::X86_64)]
    pub arch: Arch,
    /// Host core counts, comma-separated (each 1..=1024, at most what the
    /// host gives xtask): every configuration runs with QEMU confined to
    /// each (`taskset`), interleaved in one run, so the tables show the
    /// same image on hosts of that many cores and the kernel's parallelism
    /// estimate next to the truth. Default: QEMU on every host core.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = crate::runner::host_cores::parse_host_cores)]
    pub host_cores: Vec<u32>,
}

/// Options of `cargo xtask test` (none yet).
#[derive(Debug, Clone, Args)]
pub struct TestArgs {}

/// Options of `cargo xtask mutants`.
#[derive(Debug, Clone, Args)]
pub struct MutantsArgs {
    /// Run only these mutants (names as the run prints them); with
    /// `--quick`, these and the quick subset.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Run the quick subset `cargo xtask test` runs (one mutant per
    /// assertion and per file, every stealable-pool mutant, in CI's budget).
    #[arg(long)]
    pub quick: bool,
    /// Bound one mutant's build and model run (seconds; default
    /// $MUTANT_TIMEOUT_S, else 600).
    #[arg(long, value_name = "SECONDS")]
    pub timeout_s: Option<u64>,
    /// Mutants built and run at once, each job in its own target
    /// directory (1..=64; default: host cores).
    #[arg(long, value_name = "J", value_parser = crate::campaign::scope::parse_jobs)]
    pub jobs: Option<usize>,
    /// Do not run the unmutated models first: only when they have just
    /// passed on this tree (`cargo xtask test` passes it after its loom
    /// step, which runs every model unmutated).
    #[arg(long)]
    pub skip_baseline: bool,
}

impl MutantsArgs {
    /// The quick subset, with the default timeout and jobs; the baseline
    /// runs unless `baseline_passed`.
    pub fn quick(baseline_passed: bool) -> Self {
        Self {
            names: Vec::new(),
            quick: true,
            timeout_s: None,
            jobs: None,
            skip_baseline: baseline_passed,
        }
    }
}

/// Options of `cargo xtask peer-bench`.
#[derive(Debug, Clone, Args)]
pub struct PeerBenchArgs {
    /// Runs of the whole example, one after another (1..=20); the tables
    /// give each run's median per cell, so the spread between runs shows.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = commands::peer_bench::parse_runs)]
    pub runs: u32,
    /// Repeats of each cell within a run, the pools in a rotating order
    /// (1..=100).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = commands::peer_bench::parse_repeats)]
    pub repeats: u32,
    /// Jobs per throughput repeat (100..=10000000).
    #[arg(long, value_name = "J", default_value_t = 10_000, value_parser = commands::peer_bench::parse_jobs)]
    pub jobs: u32,
    /// Length of each idle repeat, ms (100..=60000).
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = commands::peer_bench::parse_idle_ms)]
    pub idle_ms: u32,
    /// Worker counts (comma-separated, each 1..=256).
    #[arg(long, value_name = "W,...", value_delimiter = ',', default_values_t = [1, 2, 4, 8], value_parser = commands::peer_bench::parse_workers)]
    pub workers: Vec<u32>,
    /// Where the runs' samples (run_N.json), tables.md and the plots go
    /// (relative to the workspace root).
    #[arg(long, value_name = "DIR", default_value = "docs/bench/peers")]
    pub out: PathBuf,
    /// Write the tables and plots from the run files already in --out
    /// (run_1.json to run_N.json, N from --runs) without running anything.
    #[arg(long)]
    pub render_only: bool,
}

/// Options of `cargo xtask docs`.
#[derive(Debug, Clone, Args)]
pub struct DocsArgs {
    /// Only compare: fail if the file differs from what the code generates.
    #[arg(long)]
    pub check: bool,
}

/// Parses the command line and runs the subcommand; returns the exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build(build) => commands::build::run(&build),
        Command::Run(run) => commands::run::run(&run),
        Command::Test(test) => commands::test::run(&test),
        Command::Stress(stress) => commands::stress::run(&stress),
        Command::Bench(bench) => commands::bench::run(&bench),
        Command::PeerBench(peers) => commands::peer_bench::run(&peers),
        Command::Mutants(mutants) => commands::mutants::run(&mutants),
        Command::Docs(docs) => commands::docs::run(&docs),
        Command::Replay(replay) => commands::replay::run(&replay),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            match &err {
                XtaskError::Usage(message) => eprintln!("xtask: error: {message}"),
                XtaskError::Failed(message) => eprintln!("xtask: {message}"),
                XtaskError::Reported => {}
            }
            ExitCode::from(err.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("cargo-xtask").chain(args.iter().copied()))
    }

    #[test]
    fn peer_bench_arguments_are_checked_before_anything_runs() {
        match parse(&["peer-bench"]).unwrap().command {
            Command::PeerBench(peers) => {
                assert_eq!((peers.runs, peers.repeats, peers.jobs), (3, 5, 10_000));
                assert_eq!(peers.workers, [1, 2, 4, 8]);
                assert!(!peers.render_only);
            }
            other => panic!("parsed as {other:?}"),
        }
        for bad in [
            &["peer-bench", "--runs", "0"][..],
            &["peer-bench", "--runs", "21"],
            &["peer-bench", "--repeats", "x"],
            &["peer-bench", "--jobs", "99"],
            &["peer-bench", "--idle-ms", "60001"],
            &["peer-bench", "--workers", "1,0"],
            &["peer-bench", "--workers", "1,257"],
        ] {
            let error = parse(bad).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{bad:?}");
        }
        let missing = PeerBenchArgs {
            runs: 1,
            repeats: 1,
            jobs: 100,
            idle_ms: 100,
            workers: vec![1],
            out: std::env::temp_dir().join("no-such-peer-runs"),
            render_only: true,
        };
        let error = commands::peer_bench::run(&missing).unwrap_err();
        assert_eq!(error.exit_code(), 2, "{error}");
        assert!(error.to_string().contains("run_1.json"), "{error}");
    }

    fn run_args(args: &[&str]) -> RunArgs {
        match parse(args).unwrap().command {
            Command::Run(run) => run,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_defaults() {
        let run = run_args(&["run"]);
        assert_eq!(run.smp, 4);
        assert_eq!(run.machine, Machine::Pc);
        assert_eq!(run.timeout_s, 300);
        assert!(!run.uefi && !run.gdb && !run.build.release);
        assert!(run.build.features.is_empty() && run.params.is_empty());
    }

    #[test]
    fn run_takes_options_and_params_in_any_order() {
        let run = run_args(&[
            "run",
            "workload=laplace",
            "--smp",
            "32",
            "size=64",
            "--machine",
            "q35",
            "--uefi",
            "--release",
            "--features",
            "idle-poll",
            "--timeout-s",
            "60",
        ]);
        assert_eq!(run.smp, 32);
        assert_eq!(run.machine, Machine::Q35);
        assert_eq!(run.timeout_s, 60);
        assert!(run.uefi && run.build.release);
        assert_eq!(run.build.features, vec![Feature::IdlePoll]);
        assert_eq!(run.params, vec!["workload=laplace", "size=64"]);
    }

    #[test]
    fn bad_input_is_a_clap_error_with_exit_status_2() {
        for args in [
            &["run", "--smp", "0"][..],
            &["run", "--smp", "300"],
            &["run", "--machine", "isapc"],
            &["run", "--features", "idle-spin"],
            &["build", "--features", "idle-poll,bogus"],
            &["run", "verbose"],
            &["run", "--timeout-s", "0"],
            &["stress", "--shard", "0/3"],
            &["stress", "--shard", "4/3"],
            &["stress", "merge"],
            &["stress", "--runs", "3", "merge", "a.json"],
            &["frobnicate"],
        ] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?} gave {err}");
        }
    }

    fn stress_args(args: &[&str]) -> StressArgs {
        match parse(args).unwrap().command {
            Command::Stress(stress) => stress,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn stress_shards_and_merge() {
        let stress = stress_args(&["stress", "--shard", "2/3"]);
        assert_eq!(
            stress.shard,
            Some(crate::stress::shard::Shard { index: 2, count: 3 })
        );
        assert!(stress.action.is_none());
        let err = crate::commands::stress::check_shard_seed(&stress).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("needs --seed"), "{err}");
        let seeded = stress_args(&["stress", "--shard", "2/3", "--seed", "9"]);
        assert!(crate::commands::stress::check_shard_seed(&seeded).is_ok());
        let stress = stress_args(&["stress", "merge", "a.json", "b.json", "--json", "all.json"]);
        let Some(StressAction::Merge(merge)) = stress.action else {
            panic!("not a merge: {stress:?}");
        };
        assert_eq!(
            merge.files,
            [PathBuf::from("a.json"), PathBuf::from("b.json")]
        );
        assert_eq!(merge.json, Some(PathBuf::from("all.json")));
    }

    #[test]
    fn stress_defaults_and_options() {
        let stress = stress_args(&["stress"]);
        assert_eq!(stress.smp, vec![4, 8, 16, 32]);
        assert_eq!(stress.runs, 10);
        assert_eq!(stress.stall_s, 60);
        assert_eq!(stress.policy, None);
        let stress = stress_args(&[
            "stress",
            "--smp",
            "16,32",
            "--runs",
            "6",
            "--policy",
            "racy-flag",
            "--chaos",
            "--watchdog-ms",
            "off",
            "--size",
            "32",
            "--iterations",
            "300",
            "--json",
            "out.json",
            "--release",
            "--stall-s",
            "30",
            "--jobs",
            "2",
            "--seed",
            "0x2a",
        ]);
        assert_eq!(stress.smp, vec![16, 32]);
        assert_eq!(stress.policy, Some(WakePolicy::RacyFlag));
        assert_eq!(stress.watchdog_ms, Some(Watchdog::Off));
        assert_eq!((stress.size, stress.iterations), (Some(32), Some(300)));
        assert_eq!(stress.seed, Some(42));
        let config = commands::stress::config_from_args(&stress);
        config.validate().unwrap();
        assert_eq!(config.jobs, 2);
        assert!(config.build.release);
    }

    #[test]
    fn stress_bad_input_exits_2() {
        for args in [
            &["stress", "--smp", "4,0"][..],
            &["stress", "--smp", "4,257"],
            &["stress", "--runs", "0"],
            &["stress", "--policy", "poll"],
            &["stress", "--watchdog-ms", "0"],
            &["stress", "--watchdog-ms", "sometimes"],
            &["stress", "--size", "2"],
            &["stress", "--jobs", "0"],
            &["stress", "--stall-s", "0"],
        ] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?} gave {err}");
        }
        // Accepted by clap, refused before anything is built.
        let stress = stress_args(&[
            "stress",
            "--features",
            "idle-poll",
            "--policy",
            "always-ipi",
        ]);
        let err = commands::stress::config_from_args(&stress)
            .validate()
            .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let poll = stress_args(&["stress", "--features", "idle-poll"]);
        commands::stress::config_from_args(&poll)
            .validate()
            .unwrap();
    }

    fn bench_args(args: &[&str]) -> BenchArgs {
        match parse(args).unwrap().command {
            Command::Bench(bench) => bench,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn bench_defaults_quick_and_bad_input() {
        let bench = bench_args(&["bench"]);
        assert_eq!(bench.smp, vec![1, 2, 4, 8, 16, 32]);
        assert_eq!(bench.runs, 5);
        assert_eq!(bench.plot, PathBuf::from("target/bench"));
        assert!(!bench.quick && bench.json.is_none());
        let quick = commands::bench::config_from_args(&bench_args(&["bench", "--quick"]));
        assert_eq!((quick.scope.smp, quick.scope.runs), (vec![1, 2], 1));
        let custom = bench_args(&["bench", "--smp", "2,4", "--runs", "3", "--json", "b.json"]);
        assert_eq!(custom.smp, vec![2, 4]);
        for args in [
            &["bench", "--smp", "0"][..],
            &["bench", "--runs", "0"],
            &["bench", "--quick", "--smp", "4"],
            &["bench", "--grid-timeout-s", "0"],
        ] {
            assert_eq!(parse(args).unwrap_err().exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn the_linux_peer_options() {
        use crate::bench::plan::Variant;
        use vigil_proto::linux_peer::LinuxIdle;
        let run = run_args(&["run", "--peer", "linux", "--linux-idle", "poll", "size=16"]);
        assert_eq!(run.peer, Some(Peer::Linux));
        assert_eq!(run.linux_idle, Some(LinuxIdle::Poll));
        for args in [
            &["run", "--linux-idle", "poll"][..],
            &["run", "--peer", "linux", "--linux-idle", "halt"],
            &["run", "--peer", "bsd"],
            &["bench", "--variants", "default,linux-pinned"],
            &["bench", "--variants", "bogus"],
        ] {
            assert_eq!(parse(args).unwrap_err().exit_code(), 2, "{args:?}");
        }
        let config = commands::bench::config_from_args(&bench_args(&[
            "bench",
            "--peer",
            "linux",
            "--variants",
            "default,idle-poll",
        ]));
        assert_eq!(
            config.variants,
            [
                Variant::Default,
                Variant::IdlePoll,
                Variant::LinuxPinned,
                Variant::LinuxSteal,
                Variant::LinuxPollPinned,
                Variant::LinuxPollSteal
            ]
        );
        let quick = commands::bench::config_from_args(&bench_args(&[
            "bench", "--quick", "--peer", "linux",
        ]));
        assert!(quick.variants.contains(&Variant::LinuxPollSteal));
        // What the peer cannot take is refused before anything is built.
        let refused = |config: crate::runner::qemu::RunConfig| {
            config.validate_for_linux_peer().unwrap_err().to_string()
        };
        let policy = crate::runner::qemu::RunConfig::with_params(&["policy=always-ipi"]);
        assert!(refused(policy).contains("`policy=always-ipi` is Vigil's"));
        let uefi = crate::runner::qemu::RunConfig {
            uefi: true,
            ..crate::runner::qemu::RunConfig::default()
        };
        assert!(refused(uefi).contains("--uefi"));
        crate::runner::qemu::RunConfig::with_params(&["size=64", "pool=pinned", "iterations=10"])
            .validate_for_linux_peer()
            .unwrap();
    }

    #[test]
    fn smp_error_names_the_range() {
        let err = parse(&["run", "--smp", "300"]).unwrap_err().to_string();
        assert!(err.contains("1..=256"), "{err}");
    }
}
