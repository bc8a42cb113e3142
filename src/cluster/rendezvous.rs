//! Rendezvous (highest random weight) hashing: every instance computes, for
//! each endpoint, the same preferred owner among the live instances, without
//! talking to the others. A join moves only the endpoints the newcomer now
//! wins (about 1/N); a death moves only the dead instance's endpoints.
//! Stable across builds and platforms: FNV-1a, then a SplitMix64 finaliser.

/// The weight of `endpoint` on `instance`; the highest weight wins.
pub fn weight(instance: &str, endpoint: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in instance
        .as_bytes()
        .iter()
        .chain(std::iter::once(&0xffu8))
        .chain(endpoint.as_bytes())
    {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix(h)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The instance among `candidates` that should own `endpoint` (ties, which
/// need a 64-bit collision, go to the smaller id).
pub fn preferred<'a>(candidates: &'a [String], endpoint: &str) -> Option<&'a str> {
    candidates
        .iter()
        .max_by(|a, b| {
            weight(a, endpoint)
                .cmp(&weight(b, endpoint))
                .then_with(|| b.cmp(a))
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("ins_{i:04}")).collect()
    }

    fn endpoints() -> Vec<String> {
        (0..3000).map(|i| format!("ep_{i}")).collect()
    }

    #[test]
    fn every_instance_agrees_whatever_order_it_lists_the_others_in() {
        let forward = ids(5);
        let mut backward = forward.clone();
        backward.reverse();
        for e in endpoints() {
            assert_eq!(preferred(&forward, &e), preferred(&backward, &e));
        }
    }

    #[test]
    fn endpoints_spread_evenly_over_three_instances() {
        let live = ids(3);
        let mut counts = [0usize; 3];
        for e in endpoints() {
            let owner = preferred(&live, &e).unwrap();
            counts[live.iter().position(|i| i == owner).unwrap()] += 1;
        }
        for c in counts {
            assert!((850..=1150).contains(&c), "an uneven share: {counts:?}");
        }
    }

    #[test]
    fn a_join_moves_only_endpoints_to_the_newcomer() {
        let before = ids(3);
        let after = ids(4);
        let mut moved = 0;
        for e in endpoints() {
            let (old, new) = (
                preferred(&before, &e).unwrap(),
                preferred(&after, &e).unwrap(),
            );
            if old != new {
                assert_eq!(new, "ins_0003", "{e} moved between two old instances");
                moved += 1;
            }
        }
        assert!(
            (600..=900).contains(&moved),
            "a quarter should move, {moved} did"
        );
    }

    #[test]
    fn a_death_moves_only_the_dead_instances_endpoints() {
        let before = ids(3);
        let after: Vec<String> = before
            .iter()
            .filter(|i| *i != "ins_0001")
            .cloned()
            .collect();
        for e in endpoints() {
            let old = preferred(&before, &e).unwrap();
            if old != "ins_0001" {
                assert_eq!(
                    preferred(&after, &e).unwrap(),
                    old,
                    "{e} moved off a live instance"
                );
            }
        }
    }

    #[test]
    fn no_candidates_means_no_owner() {
        assert_eq!(preferred(&[], "ep_1"), None);
    }
}
