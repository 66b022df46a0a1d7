//! A campaign's JSON file (stress and bench write theirs the same way).

use std::fs;
use std::path::Path;

use serde::Serialize;

use crate::error::{Result, XtaskError};

/// Writes `json` to `path` (pretty-printed).
pub fn write_json(path: &Path, json: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(json)
        .map_err(|err| XtaskError::failed(format!("serializing results: {err}")))?;
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        fs::create_dir_all(parent)
            .map_err(|err| XtaskError::failed(format!("creating {}: {err}", parent.display())))?;
    }
    fs::write(path, text + "\n")
        .map_err(|err| XtaskError::failed(format!("writing {}: {err}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::write_json;

    #[test]
    fn json_is_written_with_its_directories() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/stress.json");
        write_json(&path, &serde_json::json!({"a": 1})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"a\": 1"));
    }
}
