//! Order statistics of a handful of measurements: median, nearest-rank
//! percentiles, min and max.

use serde::Serialize;

/// Median, p90, min and max of some values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Values summarised.
    pub count: usize,
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Nearest-rank 90th percentile.
    pub p90: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// Summarises `values`; `None` when there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let mut sorted: Vec<f64> = values.into_iter().filter(|v| !v.is_nan()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Self {
            count: n,
            median,
            p90: nearest_rank(&sorted, 90),
            min: sorted[0],
            max: sorted[n - 1],
        })
    }
}

/// The nearest-rank `percent`th percentile of sorted, non-empty `values`.
fn nearest_rank(sorted: &[f64], percent: usize) -> f64 {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_counts() {
        let spread = Spread::of([5.0, 1.0, 3.0]).unwrap();
        assert_eq!(spread.median, 3.0);
        assert_eq!((spread.min, spread.max), (1.0, 5.0));
        assert_eq!(spread.p90, 5.0);
        assert_eq!(Spread::of([4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
    }

    #[test]
    fn p90_is_nearest_rank() {
        let spread = Spread::of((1..=20).map(f64::from)).unwrap();
        assert_eq!(spread.p90, 18.0);
        assert_eq!(Spread::of([7.0]).unwrap().p90, 7.0);
    }

    #[test]
    fn nothing_to_summarise() {
        assert!(Spread::of([]).is_none());
        assert!(Spread::of([f64::NAN]).is_none());
    }
}
