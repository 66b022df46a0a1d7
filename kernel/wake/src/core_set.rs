//! [`CoreSet`]: a set of core indices as a bitmap (one bit per core), for
//! the stealable pool's idle cores.

use alloc::vec::Vec;

/// A set of core indices below a fixed count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreSet {
    words: Vec<u64>,
    len: usize,
    cores: usize,
}

impl CoreSet {
    /// An empty set of cores `0..cores`.
    pub fn new(cores: usize) -> Self {
        Self {
            words: alloc::vec![0; cores.div_ceil(64)],
            len: 0,
            cores,
        }
    }

    /// How many cores are in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `core` is one of the cores the set is for (`0..cores`).
    pub fn covers(&self, core: usize) -> bool {
        core < self.cores
    }

    /// Whether `core` is in the set.
    pub fn contains(&self, core: usize) -> bool {
        core < self.cores && self.words[core / 64] & (1 << (core % 64)) != 0
    }

    /// Adds `core`; `false` if it was there already.
    pub fn insert(&mut self, core: usize) -> bool {
        assert!(core < self.cores, "core {core} of {}", self.cores);
        if self.contains(core) {
            return false;
        }
        self.words[core / 64] |= 1 << (core % 64);
        self.len += 1;
        true
    }

    /// Removes `core`; `false` if it was not there.
    pub fn remove(&mut self, core: usize) -> bool {
        if !self.contains(core) {
            return false;
        }
        self.words[core / 64] &= !(1 << (core % 64));
        self.len -= 1;
        true
    }

    /// Removes and returns the lowest core in the set.
    pub fn take_lowest(&mut self) -> Option<usize> {
        self.take_lowest_except(usize::MAX)
    }

    /// Removes and returns the lowest core in the set other than `except`.
    pub fn take_lowest_except(&mut self, except: usize) -> Option<usize> {
        let core = self.lowest(except, None, None)?;
        self.remove(core);
        Some(core)
    }

    /// Removes and returns the lowest core in the set other than `except`,
    /// preferring cores not in `avoid`: one in `avoid` only if no other is
    /// left.
    pub fn take_lowest_preferring(&mut self, except: usize, avoid: &CoreSet) -> Option<usize> {
        self.take_lowest_preferring_excluding(except, avoid, None)
    }

    /// [`take_lowest_preferring`](Self::take_lowest_preferring), never
    /// taking a core in `exclude`.
    pub fn take_lowest_preferring_excluding(
        &mut self,
        except: usize,
        avoid: &CoreSet,
        exclude: Option<&CoreSet>,
    ) -> Option<usize> {
        let core = self
            .lowest(except, Some(avoid), exclude)
            .or_else(|| self.lowest(except, None, exclude))?;
        self.remove(core);
        Some(core)
    }

    /// Removes and returns the lowest core in the set other than `except`
    /// that is also in `within` (`within(w)`: the bits of word `w`, bit `i`
    /// for core `64 * w + i`) and not in `exclude`.
    pub fn take_lowest_within_excluding(
        &mut self,
        except: usize,
        within: impl Fn(usize) -> u64,
        exclude: &CoreSet,
    ) -> Option<usize> {
        let core = self.lowest_within(except, within, None, Some(exclude))?;
        self.remove(core);
        Some(core)
    }

    /// The lowest core in the set, if any.
    pub fn first(&self) -> Option<usize> {
        self.lowest(usize::MAX, None, None)
    }

    /// The lowest core in the set, other than `except` and not in `avoid`
    /// or `exclude`.
    fn lowest(
        &self,
        except: usize,
        avoid: Option<&CoreSet>,
        exclude: Option<&CoreSet>,
    ) -> Option<usize> {
        self.lowest_within(except, |_| u64::MAX, avoid, exclude)
    }

    /// The lowest core in the set that is also in `within` (`within(w)`:
    /// the bits of word `w`), other than `except` and not in `avoid` or
    /// `exclude`.
    fn lowest_within(
        &self,
        except: usize,
        within: impl Fn(usize) -> u64,
        avoid: Option<&CoreSet>,
        exclude: Option<&CoreSet>,
    ) -> Option<usize> {
        let (word, bits) = self.words.iter().enumerate().find_map(|(word, &bits)| {
            let mut bits = bits & within(word);
            if except / 64 == word {
                bits &= !(1 << (except % 64));
            }
            for set in [avoid, exclude].into_iter().flatten() {
                bits &= !set.words.get(word).copied().unwrap_or(0);
            }
            (bits != 0).then_some((word, bits))
        })?;
        Some(word * 64 + bits.trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::CoreSet;

    #[test]
    fn inserts_removes_and_takes_the_lowest_across_words() {
        let mut set = CoreSet::new(130);
        assert!(set.is_empty());
        assert!(set.insert(129));
        assert!(set.insert(64));
        assert!(!set.insert(64));
        assert!(set.insert(3));
        assert_eq!(set.len(), 3);
        assert!(set.contains(129) && set.contains(64) && !set.contains(65));
        assert_eq!(set.take_lowest_except(3), Some(64));
        assert!(set.insert(64));
        assert_eq!(set.take_lowest(), Some(3));
        assert!(set.remove(129));
        assert!(!set.remove(129));
        assert_eq!(set.take_lowest(), Some(64));
        assert_eq!(set.take_lowest(), None);
        assert!(set.is_empty());
    }

    #[test]
    fn the_preferred_core_is_the_lowest_not_avoided_else_the_lowest() {
        let mut set = CoreSet::new(130);
        let mut avoid = CoreSet::new(130);
        for core in [0, 1, 70] {
            assert!(set.insert(core));
        }
        assert!(avoid.insert(0));
        assert!(avoid.insert(70));
        assert_eq!(set.take_lowest_preferring(1, &avoid), Some(0));
        assert!(set.insert(0));
        assert_eq!(set.take_lowest_preferring(5, &avoid), Some(1));
        assert_eq!(set.take_lowest_preferring(5, &avoid), Some(0));
        assert_eq!(set.take_lowest_preferring(70, &avoid), None);
        assert_eq!(set.take_lowest_preferring(5, &avoid), Some(70));
    }

    #[test]
    fn the_lowest_within_is_taken_past_except_and_excluded() {
        let mut set = CoreSet::new(130);
        for core in [1, 2, 3, 66, 129] {
            assert!(set.insert(core));
        }
        let mut exclude = CoreSet::new(130);
        assert!(exclude.insert(2));
        // Within: cores 1, 2, 3 (word 0) and 129 (word 2).
        let within = |word: usize| match word {
            0 => 0b1110,
            2 => 1 << 1,
            _ => 0,
        };
        assert_eq!(
            set.take_lowest_within_excluding(1, within, &exclude),
            Some(3)
        );
        assert_eq!(
            set.take_lowest_within_excluding(1, within, &exclude),
            Some(129)
        );
        assert_eq!(set.take_lowest_within_excluding(1, within, &exclude), None);
        assert_eq!(set.len(), 3);
        assert!(set.contains(1) && set.contains(2) && set.contains(66));
    }
}
