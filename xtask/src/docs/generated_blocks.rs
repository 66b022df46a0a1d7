//! Blocks of a Markdown file that a generator owns: the text between
//! `<!-- generated: NAME -->` and `<!-- end generated: NAME -->`.

/// The opening marker of block `name`.
pub fn opening(name: &str) -> String {
    format!("<!-- generated: {name} (cargo xtask docs) -->")
}

/// The closing marker of block `name`.
pub fn closing(name: &str) -> String {
    format!("<!-- end generated: {name} -->")
}

/// `text` with the body of every block named in `blocks` replaced by its
/// new body. A block named there but missing from `text`, or opened and not
/// closed, is an error naming it.
pub fn replace_blocks(text: &str, blocks: &[(String, String)]) -> Result<String, String> {
    let mut out = text.to_string();
    for (name, body) in blocks {
        let open = opening(name);
        let close = closing(name);
        let start = out
            .find(&open)
            .ok_or_else(|| format!("no `{open}` marker for block {name}"))?;
        let body_start = start + open.len();
        let end = out[body_start..]
            .find(&close)
            .map(|offset| body_start + offset)
            .ok_or_else(|| format!("block {name} is opened but has no `{close}`"))?;
        out.replace_range(body_start..end, &format!("\n{}\n", body.trim_end()));
    }
    Ok(out)
}

/// The names of the blocks `text` has, in order.
pub fn block_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("<!-- generated: "))
        .filter_map(|rest| rest.split(" (cargo xtask docs)").next())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_body_is_replaced_and_the_rest_kept() {
        let text = format!(
            "intro\n{}\nold\nlines\n{}\noutro\n",
            opening("a"),
            closing("a")
        );
        let new = replace_blocks(&text, &[("a".into(), "new".into())]).unwrap();
        assert_eq!(
            new,
            format!("intro\n{}\nnew\n{}\noutro\n", opening("a"), closing("a"))
        );
        assert_eq!(block_names(&new), vec!["a".to_string()]);
        // Idempotent.
        assert_eq!(
            replace_blocks(&new, &[("a".into(), "new".into())]).unwrap(),
            new
        );
    }

    #[test]
    fn a_missing_or_unclosed_block_is_an_error() {
        assert!(
            replace_blocks("x", &[("a".into(), "b".into())])
                .unwrap_err()
                .contains("block a")
        );
        let unclosed = format!("{}\nbody\n", opening("a"));
        assert!(
            replace_blocks(&unclosed, &[("a".into(), "b".into())])
                .unwrap_err()
                .contains("no `<!-- end generated: a -->`")
        );
    }
}
