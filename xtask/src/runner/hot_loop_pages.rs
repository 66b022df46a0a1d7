//! Whether the kernel's hot loops each lie within one 4 KiB page of its
//! ELF. Under QEMU's TCG a direct jump is chained to the next translated
//! block only within a guest page; a loop whose back edge crosses a page
//! goes through QEMU's `helper_lookup_tb_ptr` on every iteration. The
//! Laplace row loop across a page boundary ran its row blocks 3x slower
//! (88-95 µs against 28-31, docs/results.md), and the host-parallelism
//! chunk across one read one vCPU as 0.14 cores: a layout change that no
//! source change asked for moves every figure the bench reports. So the
//! kernel pins them (`#[rustc_align]`), and this reads where they landed
//! in a built ELF (`nm -C -S --defined-only`), for the test suite on the
//! release build the bench boots and for the bench itself.

use std::path::Path;

use crate::diagnosis::symbolize;

/// The guest page size, bytes (x86_64 and AArch64 4 KiB granule).
pub const PAGE_BYTES: u64 = 4096;

/// The kernel's hot loops, by their demangled names: each must lie within
/// one page.
pub const HOT_LOOPS: [&str; 3] = [
    // Every Laplace row block (`workloads/laplace.rs`).
    "vigil_kernel::workloads::laplace::compute_block_untimed",
    // The host parallelism window's and solo runs' work
    // (`sched/host_parallelism.rs`), and the boot's timed rounds'.
    "vigil_kernel::sched::host_parallelism::chunk",
    // The window's and solo runs' look at every core's count after each
    // chunk (`sched/host_parallelism.rs`).
    "vigil_kernel::sched::host_parallelism::counted_chunk",
];

/// Where one function lies in the ELF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Its first byte's address.
    pub address: u64,
    /// Its size, bytes.
    pub size_bytes: u64,
}

impl Extent {
    /// Whether its first and last bytes are on one page.
    pub fn within_one_page(self) -> bool {
        let last = self.address + self.size_bytes.max(1) - 1;
        self.address / PAGE_BYTES == last / PAGE_BYTES
    }
}

/// Reads each of `names` from `elf`'s symbols and says which lie across a
/// page boundary (or are missing): `Err` names each, with its extent.
pub fn check(elf: &Path, names: &[&str]) -> Result<(), String> {
    let output = symbolize::symbol_table_with_sizes(elf)?;
    check_nm_output(&output, names).map_err(|why| format!("{}: {why}", elf.display()))
}

/// [`check`] on `nm -C -S --defined-only` output.
pub fn check_nm_output(nm_output: &str, names: &[&str]) -> Result<(), String> {
    let problems: Vec<String> = names
        .iter()
        .filter_map(|name| match find_extent(nm_output, name) {
            None => Some(format!("no function {name} with a size")),
            Some(extent) if !extent.within_one_page() => Some(format!(
                "{name} lies across a {PAGE_BYTES}-byte page boundary: {:#x}..{:#x} ({} bytes); under TCG a loop across a page runs several times slower",
                extent.address,
                extent.address + extent.size_bytes,
                extent.size_bytes
            )),
            Some(_) => None,
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The extent of the text symbol named `name` in `nm -C -S` output
/// (`address size kind name`).
fn find_extent(nm_output: &str, name: &str) -> Option<Extent> {
    symbolize::find_text_symbol::<2>(nm_output, name).map(|[address, size_bytes]| Extent {
        address,
        size_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = "vigil_kernel::workloads::laplace::compute_block_untimed";
    const CHUNK: &str = "vigil_kernel::sched::host_parallelism::chunk";

    /// The layout of the release kernel at 604fde8 (`nm -C -S`), and the
    /// same with the row loop where the build before its alignment put it.
    const ALIGNED: &str = "\
0000000000046f50 000000000000064c t <vigil_wake::steal::Stealable<vigil_kernel::sched::stealable::Chunk>>::register_and_steal
000000000003b170 0000000000000075 t vigil_kernel::sched::host_parallelism::chunk
0000000000025000 000000000000039f t vigil_kernel::workloads::laplace::compute_block_untimed
";

    #[test]
    fn functions_within_a_page_pass() {
        assert_eq!(check_nm_output(ALIGNED, &[ROW, CHUNK]), Ok(()));
    }

    #[test]
    fn a_function_across_a_page_boundary_is_named_with_its_extent() {
        let across = ALIGNED.replace(
            "0000000000025000 000000000000039f t vigil_kernel::workloads",
            "0000000000024e10 000000000000039f t vigil_kernel::workloads",
        );
        let why = check_nm_output(&across, &[ROW, CHUNK]).unwrap_err();
        assert!(
            why.contains(ROW) && why.contains("0x24e10..0x251af") && !why.contains(CHUNK),
            "{why}"
        );
    }

    #[test]
    fn a_function_ending_on_the_last_byte_of_its_page_is_within_it() {
        let full = Extent {
            address: 0x25000,
            size_bytes: PAGE_BYTES,
        };
        assert!(full.within_one_page());
        let one_over = Extent {
            address: 0x25001,
            size_bytes: PAGE_BYTES,
        };
        assert!(!one_over.within_one_page());
    }

    #[test]
    fn a_missing_function_is_an_error_not_a_pass() {
        let why = check_nm_output(ALIGNED, &["vigil_kernel::renamed"]).unwrap_err();
        assert!(why.contains("no function vigil_kernel::renamed"), "{why}");
    }
}
