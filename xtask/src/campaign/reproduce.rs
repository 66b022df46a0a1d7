//! The `cargo xtask run ...` command that replays one boot exactly: same
//! core count, build (profile and features), kernel parameters
//! (including the seed) and, under Bochs, every emulator setting that
//! moves the interleaving.

use crate::runner::bochs::BochsSettings;
use crate::runner::kernel_build::BuildConfig;
use crate::runner::platform::{Apic, Arch};

/// `cargo xtask run [--emulator bochs --bochs-ips I --bochs-quantum Q
/// --bochs-time0 T] [--arch aarch64] --smp N [--apic x2apic] [--release] [--features F]
/// [--timeout-s S] key=value ...`.
pub fn reproduce_command(
    build: &BuildConfig,
    smp: u32,
    apic: Apic,
    timeout_s: Option<u64>,
    params: &[String],
    bochs: Option<&BochsSettings>,
) -> String {
    let mut words = vec!["cargo".to_string(), "xtask".to_string(), "run".to_string()];
    if let Some(settings) = bochs {
        words.push("--emulator".to_string());
        words.push("bochs".to_string());
        words.extend(settings.options());
    }
    if build.arch != Arch::default() {
        words.push("--arch".to_string());
        words.push(build.arch.to_string());
    }
    words.push("--smp".to_string());
    words.push(smp.to_string());
    if apic != Apic::default() {
        words.push("--apic".to_string());
        words.push(apic.to_string());
    }
    if build.release {
        words.push("--release".to_string());
    }
    let features = build.feature_names();
    if !features.is_empty() {
        words.push("--features".to_string());
        words.push(features.join(","));
    }
    if let Some(timeout_s) = timeout_s {
        words.push("--timeout-s".to_string());
        words.push(timeout_s.to_string());
    }
    words.extend(params.iter().cloned());
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::settings::Feature;

    #[test]
    fn every_setting_is_in_the_command() {
        let build = BuildConfig {
            release: true,
            features: vec![Feature::IdlePoll],
            ..BuildConfig::default()
        };
        let params = vec!["seed=7".to_string(), "chaos=on".to_string()];
        assert_eq!(
            reproduce_command(&build, 16, Apic::Xapic, Some(600), &params, None),
            "cargo xtask run --smp 16 --release --features idle-poll --timeout-s 600 seed=7 chaos=on"
        );
        assert_eq!(
            reproduce_command(&BuildConfig::default(), 4, Apic::Xapic, None, &[], None),
            "cargo xtask run --smp 4"
        );
        assert_eq!(
            reproduce_command(
                &BuildConfig::default(),
                4,
                Apic::Xapic,
                None,
                &params,
                Some(&BochsSettings::default())
            ),
            "cargo xtask run --emulator bochs --bochs-ips 50000000 --bochs-quantum 16 --bochs-turn 1 --bochs-time0 946684800 --smp 4 seed=7 chaos=on"
        );
    }
}
