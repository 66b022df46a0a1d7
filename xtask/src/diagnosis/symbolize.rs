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
    let output = run_binutils(
        ADDR2LINE,
        &with_addresses(&["-f", "-C", "-e"], elf, elf_addresses),
    )
    .map_err(|why| {
        if why.ends_with("(Debian package binutils)") {
            format!("{why}: RIPs are not symbolized")
        } else {
            why
        }
    })?;
    Ok(parse_function_lines(&output, elf_addresses.len()))
}

/// Runs the binutils `tool` with `args` (found on `$PATH`) and returns its
/// stdout; `Err` says why not (tool missing, could not run, failed).
fn run_binutils(tool: &str, args: &[std::ffi::OsString]) -> Result<String, String> {
    let path = find_in_path(tool)
        .ok_or_else(|| format!("{tool} not found on PATH (Debian package binutils)"))?;
    let output = Command::new(path)
        .args(args)
        .output()
        .map_err(|err| format!("could not run {tool}: {err}"))?;
    if !output.status.success() {
        return Err(format!(
            "{tool} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `args` followed by each address in hex.
fn with_addresses(args: &[&str], elf: &Path, elf_addresses: &[u64]) -> Vec<std::ffi::OsString> {
    args.iter()
        .map(std::ffi::OsString::from)
        .chain([elf.as_os_str().to_owned()])
        .chain(
            elf_addresses
                .iter()
                .map(|address| format!("{address:#x}").into()),
        )
        .collect()
}

/// The binutils tool that lists an ELF's symbols.
pub const NM: &str = "nm";

/// The address (in the ELF's own layout) of the one function whose
/// demangled name is `name` (`nm -C --defined-only`): for a breakpoint.
pub fn function_address(elf: &Path, name: &str) -> Result<u64, String> {
    let output = run_binutils(
        NM,
        &[
            "-C".into(),
            "--defined-only".into(),
            elf.as_os_str().to_owned(),
        ],
    )?;
    find_function(&output, name).ok_or_else(|| format!("{} has no function {name}", elf.display()))
}

/// Every defined symbol of `elf` with its size (`nm -C -S
/// --defined-only`): `address size kind name` lines.
pub fn symbol_table_with_sizes(elf: &Path) -> Result<String, String> {
    run_binutils(
        NM,
        &[
            "-C".into(),
            "-S".into(),
            "--defined-only".into(),
            elf.as_os_str().to_owned(),
        ],
    )
}

/// The address of the text symbol named `name` in `nm -C` output.
fn find_function(nm_output: &str, name: &str) -> Option<u64> {
    find_text_symbol::<1>(nm_output, name).map(|[address]| address)
}

/// The first text symbol named `name` in `nm -C` output whose lines hold
/// `N` hex columns before the kind and the (demangled, possibly spaced)
/// name: the address, and with `-S` the size. Those columns.
pub fn find_text_symbol<const N: usize>(nm_output: &str, name: &str) -> Option<[u64; N]> {
    nm_output.lines().find_map(|line| {
        let mut words = line.splitn(N + 2, ' ');
        let mut columns = [0; N];
        for column in &mut columns {
            *column = u64::from_str_radix(words.next()?, 16).ok()?;
        }
        let kind = words.next()?;
        let symbol = words.next()?;
        (symbol == name && kind.eq_ignore_ascii_case("t")).then_some(columns)
    })
}

/// One inlined frame: its demangled function and `file:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The demangled function.
    pub function: String,
    /// `file:line` (`??:0` unknown).
    pub location: String,
}

/// Each address's chain of inlined frames, innermost first (`addr2line
/// -a -f -C -i`): an atomic's load inlined into the protocol code comes
/// with the function it was written in.
pub fn inline_chains(elf: &Path, elf_addresses: &[u64]) -> Result<Vec<Vec<Frame>>, String> {
    if elf_addresses.is_empty() {
        return Ok(Vec::new());
    }
    let output = run_binutils(
        ADDR2LINE,
        &with_addresses(&["-a", "-f", "-C", "-i", "-e"], elf, elf_addresses),
    )?;
    let mut chains = parse_inline_chains(&output);
    chains.resize(elf_addresses.len(), Vec::new());
    Ok(chains)
}

/// `addr2line -a -f -i` output: an `0x...` line per address, then
/// function / location pairs.
fn parse_inline_chains(output: &str) -> Vec<Vec<Frame>> {
    let mut chains: Vec<Vec<Frame>> = Vec::new();
    let mut lines = output.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("0x") {
            chains.push(Vec::new());
            continue;
        }
        let location = lines.next().unwrap_or("??:0").to_string();
        if let Some(chain) = chains.last_mut()
            && line != "??"
        {
            chain.push(Frame {
                function: line.to_string(),
                location,
            });
        }
    }
    chains
}

/// `Type::method` for a demangled path: generic arguments dropped, the
/// last two segments kept (`<vigil_wake::inbox::Inbox<T>>::push` is
/// `Inbox::push`).
pub fn short_function_name(name: &str) -> String {
    let mut plain = String::new();
    let mut depth = 0usize;
    // `<Type<Args>>::method`: the outer angle brackets qualify, the inner
    // ones are arguments.
    let name = match name.strip_prefix('<') {
        Some(rest) => rest.replacen(">::", "::", 1),
        None => name.to_string(),
    };
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let segments: Vec<&str> = plain.split("::").filter(|s| !s.is_empty()).collect();
    segments[segments.len().saturating_sub(2)..].join("::")
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
    fn a_function_is_found_by_its_whole_demangled_name() {
        let nm = "000000000004efd8 B VIGIL_DEBUG\n\
                  0000000000015bb0 t vigil_kernel::smp::bringup::start_all_aps\n\
                  0000000000015c00 t vigil_kernel::smp::bringup::start_all_aps_slowly\n";
        assert_eq!(
            find_function(nm, "vigil_kernel::smp::bringup::start_all_aps"),
            Some(0x15bb0)
        );
        assert_eq!(find_function(nm, "VIGIL_DEBUG"), None);
        assert_eq!(find_function(nm, "start_all_aps"), None);
    }

    #[test]
    fn inline_chains_and_short_names() {
        let output = "0x000000000001e541\n\
                      core::sync::atomic::atomic_load::<usize, false>\n\
                      /rust/library/core/src/sync/atomic.rs:4319\n\
                      <vigil_wake::inbox::Inbox<vigil_kernel::sched::inbound::Inbound>>::drain_into\n\
                      /work/main/kernel/wake/src/inbox.rs:119\n\
                      0x0000000000000001\n\
                      ??\n\
                      ??:0\n";
        let chains = parse_inline_chains(output);
        assert_eq!(chains.len(), 2);
        assert_eq!(chains[0].len(), 2);
        assert_eq!(
            chains[0][1].location,
            "/work/main/kernel/wake/src/inbox.rs:119"
        );
        assert!(chains[1].is_empty());
        assert_eq!(
            short_function_name(&chains[0][1].function),
            "Inbox::drain_into"
        );
        assert_eq!(
            short_function_name(
                "vigil_wake::waker::wake_core::<vigil_kernel::sched::inbound::Inbound, X>"
            ),
            "waker::wake_core"
        );
        assert_eq!(
            short_function_name("core::sync::atomic::atomic_load::<usize, false>"),
            "atomic::atomic_load"
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
