//! Comparing two serial outputs of the same boot byte for byte, and naming
//! the first line where they part (what `cargo xtask replay` reports).

use std::fmt;

/// Where a replayed serial output first differs from its recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstDifference {
    /// 1-based line number of the first differing line.
    pub line: usize,
    /// Byte offset of the first differing byte.
    pub offset: usize,
    /// That line in the recording (`None`: the recording ended before it).
    pub recorded: Option<String>,
    /// That line in the replay (`None`: the replay ended before it).
    pub replayed: Option<String>,
}

impl fmt::Display for FirstDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |line: &Option<String>| match line {
            Some(line) => format!("{line:?}"),
            None => "(output ended)".to_string(),
        };
        write!(
            f,
            "first difference at line {} (byte {}):\n  recorded: {}\n  replayed: {}",
            self.line,
            self.offset,
            show(&self.recorded),
            show(&self.replayed)
        )
    }
}

/// The first difference between `recorded` and `replayed`, or `None` if
/// they are the same bytes.
pub fn first_difference(recorded: &[u8], replayed: &[u8]) -> Option<FirstDifference> {
    let offset = recorded
        .iter()
        .zip(replayed)
        .position(|(a, b)| a != b)
        .or_else(|| {
            (recorded.len() != replayed.len()).then(|| recorded.len().min(replayed.len()))
        })?;
    let start = recorded[..offset]
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |newline| newline + 1);
    let line = recorded[..start]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1;
    let line_at = |bytes: &[u8]| {
        let rest = bytes.get(start..).filter(|rest| !rest.is_empty())?;
        let end = rest
            .iter()
            .position(|&byte| byte == b'\n')
            .unwrap_or(rest.len());
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    Some(FirstDifference {
        line,
        offset,
        recorded: line_at(recorded),
        replayed: line_at(replayed),
    })
}

/// For a boot the host cut short at a wall-clock limit (its output's end
/// depends on how fast the host ran it): the first difference within the
/// shorter of the two outputs, or `None` if one is a prefix of the other.
pub fn first_difference_in_common_prefix(
    recorded: &[u8],
    replayed: &[u8],
) -> Option<FirstDifference> {
    let common = recorded.len().min(replayed.len());
    first_difference(&recorded[..common], &replayed[..common])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_outputs_have_no_difference() {
        assert_eq!(first_difference(b"a\nb\n", b"a\nb\n"), None);
        assert_eq!(first_difference(b"", b""), None);
    }

    #[test]
    fn a_changed_byte_names_its_line_in_both() {
        let diff = first_difference(
            b"[c0] boot\n[c1] seed=7\n[c0] end\n",
            b"[c0] boot\n[c1] seed=8\n[c0] end\n",
        )
        .unwrap();
        assert_eq!(diff.line, 2);
        assert_eq!(diff.offset, 20);
        assert_eq!(diff.recorded.as_deref(), Some("[c1] seed=7"));
        assert_eq!(diff.replayed.as_deref(), Some("[c1] seed=8"));
        let text = diff.to_string();
        assert!(
            text.starts_with("first difference at line 2 (byte 20):"),
            "{text}"
        );
        assert!(text.contains("recorded: \"[c1] seed=7\""), "{text}");
    }

    #[test]
    fn a_shorter_or_longer_replay_differs_where_one_ends() {
        let diff = first_difference(b"a\nb\nc\n", b"a\nb\n").unwrap();
        assert_eq!((diff.line, diff.offset), (3, 4));
        assert_eq!(diff.recorded.as_deref(), Some("c"));
        assert_eq!(diff.replayed, None);
        assert!(diff.to_string().contains("replayed: (output ended)"));
        let diff = first_difference(b"a\n", b"a\nextra\n").unwrap();
        assert_eq!(
            (diff.line, diff.recorded, diff.replayed.as_deref()),
            (2, None, Some("extra"))
        );
        // A line cut mid-way: the same line, both versions.
        let diff = first_difference(b"a\nbc", b"a\nb").unwrap();
        assert_eq!(diff.line, 2);
        assert_eq!(
            (diff.recorded.as_deref(), diff.replayed.as_deref()),
            (Some("bc"), Some("b"))
        );
    }

    #[test]
    fn a_difference_in_line_endings_or_invisible_bytes_counts() {
        let diff = first_difference(b"a\r\nb\n", b"a\nb\n").unwrap();
        assert_eq!(diff.line, 1);
        assert!(diff.to_string().contains("\"a\\r\""), "{diff}");
    }

    #[test]
    fn a_boot_cut_short_is_compared_up_to_the_shorter_end() {
        assert_eq!(first_difference_in_common_prefix(b"a\nb\nc", b"a\nb"), None);
        let diff = first_difference_in_common_prefix(b"a\nx\nc", b"a\nb").unwrap();
        assert_eq!(diff.line, 2);
    }
}
