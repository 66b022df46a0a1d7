//! The QEMU command line for one boot: of Vigil (its disk image on x86_64,
//! its ELF on AArch64), or of the Linux peer's kernel and initramfs (the
//! same machine, CPU, core count, memory and exit device either way).

use std::ffi::OsString;
use std::path::Path;

use crate::guest::settings::kernel_cmdline;

use crate::guest::verdict::DEBUG_EXIT_IOBASE;
use crate::runner::platform::{Apic, Arch, Machine};

/// fw_cfg file through which the kernel reads its boot parameters.
pub use vigil_proto::boot_params::FW_CFG_FILE as CMDLINE_FW_CFG_NAME;
/// Port on which `-s` makes QEMU's gdb stub listen.
pub const GDB_PORT: u16 = 1234;

/// Guest memory for `smp` cores: 128 MiB plus 4 MiB per core.
pub fn memory_mib(smp: u32) -> u32 {
    128 + 4 * smp
}

/// What the machine boots.
#[derive(Debug, Clone, Copy)]
pub enum BootMedia<'a> {
    /// Vigil: on x86_64 its disk image (BIOS or UEFI flavour), on AArch64
    /// its ELF (`-kernel`); its parameters go in fw_cfg.
    Disk(&'a Path),
    /// A Linux kernel and initramfs through QEMU's own loader (`-kernel`,
    /// `-initrd`, `-append`): the Linux peer (x86_64 only).
    LinuxKernel {
        /// The `vmlinuz`.
        kernel: &'a Path,
        /// The initramfs.
        initrd: &'a Path,
        /// Linux's command line.
        cmdline: &'a str,
    },
}

/// Everything that varies between boots.
#[derive(Debug, Clone, Copy)]
pub struct QemuArgs<'a> {
    /// The architecture: x86_64 boots `boot` on `machine`; AArch64 boots
    /// the kernel's ELF on `virt` with a GICv3.
    pub arch: Arch,
    /// Number of vCPUs.
    pub smp: u32,
    /// Machine model.
    pub machine: Machine,
    /// The CPU's local APIC interface (`-cpu`: `qemu64`, TCG's plain
    /// baseline with NX, and `+x2apic` for x2APIC).
    pub apic: Apic,
    /// What to boot.
    pub boot: BootMedia<'a>,
    /// OVMF firmware for a UEFI boot; `None` boots SeaBIOS.
    pub ovmf: Option<&'a Path>,
    /// Where the human monitor listens.
    pub monitor_socket: &'a Path,
    /// Vigil's boot parameters (already validated `key=value` tokens; a
    /// disk boot's, in fw_cfg).
    pub params: &'a [String],
    /// Start the gdb stub and wait for gdb before running (`-s -S`).
    pub gdb: bool,
    /// Trace the LAPIC's register writes to this file with this QEMU trace
    /// event (the IPI oracle).
    pub ipi_trace: Option<(&'a Path, &'a str)>,
}

/// QEMU's option parser splits on `,`; a literal comma is written `,,`.
pub fn escape_option_value(value: &str) -> String {
    value.replace(',', ",,")
}

/// QEMU's AArch64 machine: `virt` with a GICv3 (the GICv2 it defaults to
/// takes at most 8 CPUs; above 123 the GICv3's redistributors need a
/// second region, which `virt` places above 4 GiB: `highmem`, on by
/// default).
pub const AARCH64_MACHINE: &str = "virt,gic-version=3";
/// QEMU's AArch64 CPU: an Armv8.0 core (no LSE atomics: every atomic is a
/// load/store-exclusive pair, the weakest the kernel must work with).
pub const AARCH64_CPU: &str = "cortex-a57";

/// The argument list (without the program name).
pub fn qemu_args(args: &QemuArgs<'_>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut push = |items: &[&str]| out.extend(items.iter().map(OsString::from));
    match args.arch {
        Arch::X86_64 => push(&["-machine", args.machine.qemu_name()]),
        Arch::Aarch64 => push(&["-machine", AARCH64_MACHINE]),
    }
    push(&["-accel", "tcg,thread=multi"]);
    match args.arch {
        Arch::X86_64 => push(&["-cpu", args.apic.qemu_cpu()]),
        Arch::Aarch64 => push(&["-cpu", AARCH64_CPU]),
    }
    push(&["-smp", &args.smp.to_string()]);
    push(&["-m", &format!("{}M", memory_mib(args.smp))]);
    push(&["-serial", "stdio"]);
    push(&["-display", "none"]);
    push(&["-nic", "none"]);
    push(&["-no-reboot"]);
    match args.arch {
        Arch::X86_64 => push(&[
            "-device",
            &format!("isa-debug-exit,iobase={DEBUG_EXIT_IOBASE:#x},iosize=0x04"),
        ]),
        // The exit code: semihosting's SYS_EXIT, whose status the kernel
        // encodes as isa-debug-exit's `(code << 1) | 1`.
        Arch::Aarch64 => push(&["-semihosting-config", "enable=on,target=native"]),
    }
    match (args.arch, args.boot) {
        (Arch::X86_64, BootMedia::Disk(image)) => push(&[
            "-drive",
            &format!(
                "format=raw,file={}",
                escape_option_value(&image.to_string_lossy())
            ),
        ]),
        (Arch::Aarch64, BootMedia::Disk(elf)) => push(&["-kernel", &elf.to_string_lossy()]),
        // QEMU reads these paths as plain arguments (no option parsing).
        (
            _,
            BootMedia::LinuxKernel {
                kernel,
                initrd,
                cmdline,
            },
        ) => push(&[
            "-kernel",
            &kernel.to_string_lossy(),
            "-initrd",
            &initrd.to_string_lossy(),
            "-append",
            cmdline,
        ]),
    }
    push(&[
        "-monitor",
        &format!(
            "unix:{},server=on,wait=off",
            escape_option_value(&args.monitor_socket.to_string_lossy())
        ),
    ]);
    // QEMU refuses an empty fw_cfg string: no parameters, no fw_cfg file.
    if !args.params.is_empty() && matches!(args.boot, BootMedia::Disk(_)) {
        push(&[
            "-fw_cfg",
            &format!(
                "name={CMDLINE_FW_CFG_NAME},string={}",
                escape_option_value(&kernel_cmdline(args.params))
            ),
        ]);
    }
    if let Some(ovmf) = args.ovmf {
        push(&["-bios", &ovmf.to_string_lossy()]);
    }
    if args.gdb {
        push(&["-s", "-S"]);
    }
    if let Some((trace, event)) = args.ipi_trace {
        push(&["-trace", &format!("enable={event}")]);
        push(&["-D", &trace.to_string_lossy()]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(args: &QemuArgs<'_>) -> String {
        qemu_args(args)
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn base<'a>(params: &'a [String]) -> QemuArgs<'a> {
        QemuArgs {
            arch: Arch::X86_64,
            smp: 4,
            machine: Machine::Pc,
            apic: Apic::Xapic,
            boot: BootMedia::Disk(Path::new("/tmp/run/disk.img")),
            ovmf: None,
            monitor_socket: Path::new("/tmp/run/monitor.sock"),
            params,
            gdb: false,
            ipi_trace: None,
        }
    }

    #[test]
    fn bios_boot_has_the_contract_options() {
        let params = vec!["mode=test".to_string(), "seed=7".to_string()];
        let line = render(&base(&params));
        assert_eq!(
            line,
            "-machine pc -accel tcg,thread=multi -cpu qemu64 -smp 4 -m 144M -serial stdio \
             -display none -nic none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
             -drive format=raw,file=/tmp/run/disk.img \
             -monitor unix:/tmp/run/monitor.sock,server=on,wait=off \
             -fw_cfg name=opt/vigil/cmdline,string=mode=test seed=7"
        );
    }

    #[test]
    fn cmdline_is_one_argument() {
        let params = vec!["mode=test".to_string(), "seed=7".to_string()];
        let args = qemu_args(&base(&params));
        assert!(args.contains(&OsString::from(
            "name=opt/vigil/cmdline,string=mode=test seed=7"
        )));
    }

    #[test]
    fn x2apic_is_a_cpu_flag() {
        let mut args = base(&[]);
        args.apic = Apic::X2apic;
        assert!(render(&args).contains(" -cpu qemu64,+x2apic -smp 4 "));
    }

    #[test]
    fn no_params_means_no_fw_cfg_item() {
        assert!(!render(&base(&[])).contains("-fw_cfg"));
    }

    #[test]
    fn commas_are_doubled_for_qemu() {
        let params = vec!["test=a,b".to_string()];
        assert!(render(&base(&params)).contains("string=test=a,,b"));
        assert_eq!(escape_option_value("/a,b/c"), "/a,,b/c");
    }

    #[test]
    fn uefi_q35_and_gdb_options() {
        let mut args = base(&[]);
        args.machine = Machine::Q35;
        args.ovmf = Some(Path::new("/usr/share/ovmf/OVMF.fd"));
        args.gdb = true;
        args.smp = 32;
        let line = render(&args);
        assert!(line.starts_with("-machine q35 "));
        assert!(line.contains(" -smp 32 -m 256M "));
        assert!(
            line.ends_with("-bios /usr/share/ovmf/OVMF.fd -s -S"),
            "{line}"
        );
    }

    #[test]
    fn aarch64_boots_the_elf_on_virt_with_semihosting() {
        let params = vec!["mode=test".to_string()];
        let mut args = base(&params);
        args.arch = Arch::Aarch64;
        args.boot = BootMedia::Disk(Path::new("/k/vigil-kernel"));
        let line = render(&args);
        assert!(
            line.starts_with(
                "-machine virt,gic-version=3 -accel tcg,thread=multi -cpu cortex-a57 -smp 4 "
            ),
            "{line}"
        );
        assert!(
            line.contains(" -semihosting-config enable=on,target=native -kernel /k/vigil-kernel ")
        );
        assert!(!line.contains("isa-debug-exit") && !line.contains("-drive"));
        assert!(line.ends_with("-fw_cfg name=opt/vigil/cmdline,string=mode=test"));
    }

    #[test]
    fn the_linux_peer_boots_the_same_machine_from_its_kernel() {
        let params = vec!["size=16".to_string()];
        let mut args = base(&params);
        args.boot = BootMedia::LinuxKernel {
            kernel: Path::new("/k/vmlinuz"),
            initrd: Path::new("/k/initramfs.cpio"),
            cmdline: "console=ttyS0 -- size=16",
        };
        let rendered = render(&args);
        assert_eq!(
            rendered,
            "-machine pc -accel tcg,thread=multi -cpu qemu64 -smp 4 -m 144M -serial stdio \
             -display none -nic none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
             -kernel /k/vmlinuz -initrd /k/initramfs.cpio -append console=ttyS0 -- size=16 \
             -monitor unix:/tmp/run/monitor.sock,server=on,wait=off"
        );
    }

    #[test]
    fn memory_grows_with_cores() {
        assert_eq!(memory_mib(1), 132);
        assert_eq!(memory_mib(64), 384);
    }
}
