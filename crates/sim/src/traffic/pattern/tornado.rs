//! Tornado (Dally & Towles §3.2; BookSim's `tornado`): in a k-ary ring every
//! node sends ⌈k/2⌉ − 1 positions ahead, the farthest it can go while the
//! shortest way round is still one direction, which loads a ring's links in
//! one direction only. Over an n-dimensional layout the shift is applied in
//! every dimension.
//!
//! Host indices are read as mixed-radix coordinates over `dims` (first
//! dimension fastest, as the mesh generator numbers its switches); without
//! `dims` the hosts form one ring.

use super::DestMap;

/// Registry name.
pub const NAME: &str = "tornado";

/// The map over `hosts` hosts laid out as `dims` (product must be `hosts`).
pub fn map(hosts: u32, dims: Option<&[u32]>) -> Result<DestMap, String> {
    let ring = [hosts];
    let dims = dims.unwrap_or(&ring);
    if dims.is_empty() || dims.contains(&0) {
        return Err(format!("dims must be a non-empty list of radices ≥ 1, got {dims:?}"));
    }
    let product = dims.iter().try_fold(1u32, |a, &k| a.checked_mul(k));
    if product != Some(hosts) {
        return Err(format!("dims {dims:?} describe {} hosts, but the fabric has {hosts}", dims.iter().map(|&k| k as u64).product::<u64>()));
    }
    if dims.iter().all(|&k| k <= 2) {
        return Err(format!("with radices {dims:?} the tornado shift ⌈k/2⌉−1 is 0 in every dimension: no host would send"));
    }
    Ok(DestMap::from_fn(hosts, |s| {
        let (mut rest, mut d, mut stride) = (s, 0, 1);
        for &k in dims {
            let x = rest % k;
            rest /= k;
            d += ((x + k.div_ceil(2) - 1) % k) * stride;
            stride *= k;
        }
        d
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_of_8_sends_3_ahead() {
        let m = map(8, None).unwrap();
        let d: Vec<u32> = (0..8).map(|s| m.get(s).unwrap()).collect();
        assert_eq!(d, vec![3, 4, 5, 6, 7, 0, 1, 2]);
        // Odd radix: k = 5 → shift 2.
        let m = map(5, None).unwrap();
        assert_eq!(m.get(4), Some(1));
    }

    #[test]
    fn four_by_four_shifts_each_dimension_by_one() {
        let m = map(16, Some(&[4, 4])).unwrap();
        // (x, y) = (3, 2) → index 11 → ((3+1)%4, (2+1)%4) = (0, 3) → 12.
        assert_eq!(m.get(11), Some(12));
        assert_eq!(m.get(0), Some(5));
    }

    #[test]
    fn bad_dims_are_explained() {
        assert!(map(16, Some(&[4, 3])).unwrap_err().contains("describe 12 hosts"));
        assert!(map(4, Some(&[2, 2])).unwrap_err().contains("no host would send"));
        assert!(map(4, Some(&[])).is_err());
    }
}
