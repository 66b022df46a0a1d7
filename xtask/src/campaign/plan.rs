//! The order of a campaign's boots, for stress and bench alike: round 1 of
//! every item (a core count, a configuration), then round 2, ..., so drift
//! on the host (another process, thermal throttling) hits every item alike,
//! and a campaign cut short has covered every item equally.

/// A boot's place in a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Its place in the whole plan, 0-based (stress derives its seed from
    /// it, shards keep it).
    pub order: u64,
    /// Its round, 1-based.
    pub round: u32,
    /// Which item of the round, 0-based.
    pub item: usize,
}

/// Every slot of `rounds` rounds over `items` items, in boot order.
pub fn round_robin(rounds: u32, items: usize) -> impl Iterator<Item = Slot> {
    (1..=rounds)
        .flat_map(move |round| (0..items).map(move |item| (round, item)))
        .zip(0u64..)
        .map(|((round, item), order)| Slot { order, round, item })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_cover_every_item_before_the_next_round() {
        let slots: Vec<(u64, u32, usize)> = round_robin(3, 2)
            .map(|slot| (slot.order, slot.round, slot.item))
            .collect();
        assert_eq!(
            slots,
            [
                (0, 1, 0),
                (1, 1, 1),
                (2, 2, 0),
                (3, 2, 1),
                (4, 3, 0),
                (5, 3, 1)
            ]
        );
        assert_eq!(round_robin(0, 5).count(), 0);
        assert_eq!(round_robin(4, 0).count(), 0);
    }
}
