//! Links the AArch64 kernel with its own layout (`arch/aarch64/link.ld`):
//! QEMU's `virt` loads the ELF at its physical addresses. The x86_64
//! kernel is linked by the bootloader's rules and needs nothing here.

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let script = format!("{manifest_dir}/src/arch/aarch64/link.ld");
    println!("cargo:rerun-if-changed={script}");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("aarch64") {
        println!("cargo:rustc-link-arg-bins=-T{script}");
    }
}
