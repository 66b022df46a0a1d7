//! CPU time a process has used so far (user + system, all its threads),
//! from `/proc/<pid>/stat`, for measuring what an idle guest costs the host.

use std::fs;
use std::time::Duration;

/// User + system CPU time of process `pid` (every thread of it), or why it
/// could not be read.
pub fn cpu_time(pid: u32) -> Result<Duration, String> {
    let path = format!("/proc/{pid}/stat");
    let stat = fs::read_to_string(&path).map_err(|err| format!("reading {path}: {err}"))?;
    let ticks =
        utime_plus_stime_ticks(&stat).ok_or_else(|| format!("unexpected {path}: {stat}"))?;
    Ok(ticks_to_duration(ticks, clock_ticks_per_second()))
}

/// The kernel's unit for times in `/proc/<pid>/stat` (`sysconf(_SC_CLK_TCK)`).
pub fn clock_ticks_per_second() -> u64 {
    rustix::param::clock_ticks_per_second()
}

/// Fields 14 (utime) and 15 (stime) of a `/proc/<pid>/stat` line, added.
/// The command name (field 2) is in parentheses and may hold spaces and
/// parentheses itself, so fields are counted after its last `)`.
pub fn utime_plus_stime_ticks(stat: &str) -> Option<u64> {
    let (_, after_comm) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn ticks_to_duration(ticks: u64, per_second: u64) -> Duration {
    let per_second = per_second.max(1);
    Duration::from_secs(ticks / per_second)
        + Duration::from_nanos((ticks % per_second) * 1_000_000_000 / per_second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_after_the_command_name() {
        let stat = "4242 (qemu (x) 1) S 1 4242 4242 0 -1 4194560 2000 0 0 0 \
                    150 25 0 0 20 0 9 0 123456 1000000 5000 18446744073709551615";
        assert_eq!(utime_plus_stime_ticks(stat), Some(175));
        assert_eq!(utime_plus_stime_ticks("4242 (qemu) S 1"), None);
    }

    #[test]
    fn ticks_become_durations() {
        assert_eq!(ticks_to_duration(250, 100), Duration::from_millis(2500));
        assert_eq!(ticks_to_duration(1, 3), Duration::from_nanos(333_333_333));
    }

    #[test]
    fn our_own_cpu_time_is_readable() {
        let ours = cpu_time(std::process::id()).unwrap();
        assert!(ours < Duration::from_secs(86_400));
        assert!(clock_ticks_per_second() > 0);
    }
}
