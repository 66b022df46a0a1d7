//! A small client for QEMU's human monitor (HMP) on a unix socket, used to
//! examine a guest from the host, e.g. `info registers -a` on a hung one.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// The prompt HMP prints when it is ready for a command.
const PROMPT: &[u8] = b"(qemu) ";

/// A connection to QEMU's human monitor.
#[derive(Debug)]
pub struct Monitor {
    stream: UnixStream,
    /// Bytes read past the last prompt.
    pending: Vec<u8>,
}

impl Monitor {
    /// Connects to the monitor socket and waits for the first prompt.
    /// Every read and write gives up after `timeout`.
    pub fn connect(socket: &Path, timeout: Duration) -> io::Result<Self> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let mut monitor = Self {
            stream,
            pending: Vec::new(),
        };
        monitor.read_until_prompt()?;
        Ok(monitor)
    }

    /// Runs one monitor command and returns its output, without the echo
    /// of the command, terminal escapes or carriage returns.
    pub fn command(&mut self, command: &str) -> io::Result<String> {
        if command.contains('\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a monitor command is a single line",
            ));
        }
        self.stream.write_all(command.as_bytes())?;
        self.stream.write_all(b"\n")?;
        let raw = self.read_until_prompt()?;
        Ok(clean_response(&raw))
    }

    /// Reads until the next prompt; returns what came before it.
    fn read_until_prompt(&mut self) -> io::Result<Vec<u8>> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(at) = find(&self.pending, PROMPT) {
                let rest = self.pending.split_off(at + PROMPT.len());
                let mut before = std::mem::replace(&mut self.pending, rest);
                before.truncate(at);
                return Ok(before);
            }
            let read = self.stream.read(&mut chunk)?;
            if read == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "QEMU closed the monitor before its prompt",
                ));
            }
            self.pending.extend_from_slice(&chunk[..read]);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// HMP echoes the command as it is "typed" (with cursor-movement escapes)
/// up to the first CRLF; the output follows. Keeps the output only.
pub fn clean_response(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let output = match text.split_once("\r\n") {
        Some((_echo, output)) => output,
        None => "",
    };
    strip_escapes(output).replace('\r', "")
}

/// Removes ANSI CSI escape sequences (`ESC [ ... final-byte`).
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.next() == Some('[') {
            // Parameters and intermediates, then one final byte in @..=~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What QEMU 7.2 sent back for `info version` (captured on this machine).
    const INFO_VERSION: &[u8] =
        b"i\x1b[K\x1b[Din\x1b[K\x1b[D\x1b[Dinf\x1b[K\x1b[D\x1b[D\x1b[Dinfo\x1b[K\
        \x1b[D\x1b[D\x1b[D\x1b[Dinfo version\x1b[K\r\n7.2.22Debian 1:7.2+dfsg-7+deb12u18+b3\r\n";

    #[test]
    fn echo_and_escapes_are_removed() {
        assert_eq!(
            clean_response(INFO_VERSION),
            "7.2.22Debian 1:7.2+dfsg-7+deb12u18+b3\n"
        );
    }

    #[test]
    fn a_command_without_output_gives_an_empty_string() {
        assert_eq!(clean_response(b"stop\x1b[K\r\n"), "");
        assert_eq!(clean_response(b""), "");
    }

    #[test]
    fn escapes_inside_output_are_stripped() {
        assert_eq!(strip_escapes("a\x1b[1;31mred\x1b[0m b"), "ared b");
    }

    #[test]
    fn monitor_reads_up_to_each_prompt() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            let mut theirs = theirs;
            theirs
                .write_all(b"QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) ")
                .unwrap();
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while byte[0] != b'\n' {
                theirs.read_exact(&mut byte).unwrap();
                line.push(byte[0]);
            }
            assert_eq!(line, b"info version\n");
            theirs.write_all(INFO_VERSION).unwrap();
            theirs.write_all(b"(qemu) ").unwrap();
        });
        ours.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut monitor = Monitor {
            stream: ours,
            pending: Vec::new(),
        };
        monitor.read_until_prompt().unwrap();
        let output = monitor.command("info version").unwrap();
        assert!(output.starts_with("7.2.22"), "{output:?}");
        server.join().unwrap();
    }
}
