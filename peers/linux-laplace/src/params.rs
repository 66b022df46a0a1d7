//! The program's arguments: Vigil's own `key=value` words (Linux hands
//! `/init` the words after `--` on its command line), parsed with the
//! kernel's parser and limited to the keys the peer honours.

use vigil_proto::boot_params::{self, Key, Pool, Workload};
use vigil_proto::linux_peer::PEER_KEYS;

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerParams {
    /// Grid side.
    pub size: usize,
    /// Iterations.
    pub iterations: usize,
    /// The fork-join shape: `pinned` (one thread per CPU, a barrier per
    /// iteration) or `steal` (rayon); without `pool=`, Vigil's default for
    /// the CPU count.
    pub pool: Option<Pool>,
}

/// Parses the words; `Err` says what is wrong, as the kernel would.
pub fn parse(words: &[String]) -> Result<PeerParams, String> {
    for word in words {
        let key = word.split_once('=').map_or(word.as_str(), |(key, _)| key);
        if let Some(key) = Key::from_name(key)
            && !PEER_KEYS.contains(&key)
        {
            let honoured: Vec<&str> = PEER_KEYS.iter().map(|key| key.name()).collect();
            return Err(format!(
                "`{word}`: the Linux peer takes only {} (Linux has no {} to set)",
                honoured.join(", "),
                key.name()
            ));
        }
    }
    let params = boot_params::parse(&words.join(" ")).map_err(|err| err.to_string())?;
    if params.workload != Workload::Laplace {
        return Err(format!(
            "`{}={}`: the Linux peer runs {} only",
            Key::Workload.name(),
            params.workload.name(),
            Workload::Laplace.name()
        ));
    }
    Ok(PeerParams {
        size: params.size as usize,
        iterations: params.iterations as usize,
        pool: params.pool,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_peers_keys_parse_with_the_kernels_defaults() {
        assert_eq!(
            parse(&words(
                "workload=laplace size=16 iterations=50 pool=steal seed=1"
            )),
            Ok(PeerParams {
                size: 16,
                iterations: 50,
                pool: Some(Pool::Steal),
            })
        );
        assert_eq!(
            parse(&[]),
            Ok(PeerParams {
                size: boot_params::DEFAULT_GRID_SIZE as usize,
                iterations: boot_params::DEFAULT_ITERATIONS as usize,
                pool: None,
            })
        );
    }

    #[test]
    fn vigils_other_keys_and_bad_values_are_refused() {
        let err = parse(&words("policy=always-ipi")).unwrap_err();
        assert!(err.contains("Linux has no policy to set"), "{err}");
        let err = parse(&words("workload=idle")).unwrap_err();
        assert!(err.contains("runs laplace only"), "{err}");
        let err = parse(&words("size=2")).unwrap_err();
        assert!(err.contains("size=2"), "{err}");
        assert!(parse(&words("verbose")).is_err());
    }
}
