//! Function names for kernel addresses, by shelling out to binutils'
//! `addr2line -f -C -e ELF` (one process for all addresses). Without
//! `addr2line` on `$PATH` every address stays unnamed and the caller is
//! told why.

use std::path::Path;
use std::process::Command;

use crate::runner::install::find_in_path;

/// The binutils tool we shell out to.
pub const ADDR2LINE: &str = "addr2line";

/// Names `elf_addresses` (addresses in the ELF's own layout, i.e. RIP minus
/// the kernel image offset). One entry per address: the demangled
/// function, or `None` where addr2line knows none (`??`). `Err` says why
/// nothing could be named (tool missing, tool failed).
pub fn function_names(elf: &Path, elf_addresses: &[u64]) -> Result<Vec<Option<String>>, String> {
    if elf_addresses.is_empty() {
        return Ok(Vec::new());
    }
    let tool = find_in_path(ADDR2LINE).ok_or_else(|| {
        format!("{ADDR2LINE} not found on PATH (Debian package binutils): RIPs are not symbolized")
    })?;
    let mut command = Command::new(tool);
    command.args(["-f", "-C", "-e"]).arg(elf);
    command.args(elf_addresses.iter().map(|address| format!("{address:#x}")));
    let output = command
        .output()
        .map_err(|err| format!("could not run {ADDR2LINE}: {err}"))?;
    if !output.status.success() {
        return Err(format!(
            "{ADDR2LINE} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(parse_function_lines(
        &String::from_utf8_lossy(&output.stdout),
        elf_addresses.len(),
    ))
}

/// `addr2line -f` prints two lines per address: the function, then
/// `file:line`. Keeps the functions; `??` becomes `None`.
pub fn parse_function_lines(output: &str, count: usize) -> Vec<Option<String>> {
    let mut names: Vec<Option<String>> = output
        .lines()
        .step_by(2)
        .map(|name| {
            let name = name.trim();
            (!name.is_empty() && name != "??").then(|| name.to_string())
        })
        .collect();
    names.resize(count, None);
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_lines_per_address() {
        let output = "vigil_kernel::arch::x86_64::halt::enable_interrupts_and_halt\n\
                      /work/main/kernel/src/arch/x86_64/halt.rs:21\n\
                      ??\n\
                      ??:0\n";
        assert_eq!(
            parse_function_lines(output, 3),
            vec![
                Some("vigil_kernel::arch::x86_64::halt::enable_interrupts_and_halt".to_string()),
                None,
                None
            ]
        );
    }

    #[test]
    fn no_addresses_no_process() {
        assert_eq!(
            function_names(Path::new("/nonexistent"), &[]).unwrap(),
            Vec::<Option<String>>::new()
        );
    }
}
