//! Page popularity distributions: uniform and zipf, sampled in O(1).

use crate::rng::SimRng;

/// Picks page indices in `0..n` with a fixed popularity distribution.
#[derive(Clone, Debug)]
pub enum Sampler {
    /// Every page equally likely.
    Uniform(u32),
    /// Zipf(alpha) over ranks, ranks scattered over pages by a seeded permutation;
    /// sampled with Walker/Vose alias tables.
    Zipf(AliasTable),
}

/// Alias table: for a uniform column `i`, take `keep[i]` with probability
/// `threshold[i] / 2^32`, else `alias[i]`.
#[derive(Clone, Debug)]
pub struct AliasTable {
    threshold: Vec<u32>,
    keep: Vec<u32>,
    alias: Vec<u32>,
}

impl Sampler {
    /// Zipf over `n` pages with exponent `alpha`; `rng` scatters the ranks.
    pub fn zipf(n: u32, alpha: f64, rng: &mut SimRng) -> Sampler {
        assert!(n > 0);
        // Fisher-Yates permutation: rank -> page.
        let mut perm: Vec<u32> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.below(i + 1);
            perm.swap(i as usize, j as usize);
        }
        Sampler::zipf_ranked(alpha, perm)
    }

    /// Zipf over `n` pages with exponent `alpha`, page `i` being rank `i`: the
    /// popular pages are contiguous (e.g. hot code grouped by a linker order file).
    pub fn zipf_in_order(n: u32, alpha: f64) -> Sampler {
        assert!(n > 0);
        Sampler::zipf_ranked(alpha, (0..n).collect())
    }

    /// Zipf over `perm.len()` pages where rank `r` is page `perm[r]`.
    fn zipf_ranked(alpha: f64, perm: Vec<u32>) -> Sampler {
        let n = perm.len() as u32;
        // Floats are used to build the table only; sampling is integer.
        let weights: Vec<f64> = (0..n).map(|i| 1.0 / ((i + 1) as f64).powf(alpha)).collect();
        let sum: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights.iter().map(|w| w * n as f64 / sum).collect();
        let mut threshold = vec![u32::MAX; n as usize];
        let mut alias: Vec<u32> = (0..n).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) = (0..n).partition(|&i| prob[i as usize] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            threshold[s as usize] = (prob[s as usize] * 4_294_967_296.0).min(u32::MAX as f64) as u32;
            alias[s as usize] = l;
            prob[l as usize] -= 1.0 - prob[s as usize];
            if prob[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        let keep = perm.clone();
        let alias = alias.iter().map(|&a| perm[a as usize]).collect();
        Sampler::Zipf(AliasTable { threshold, keep, alias })
    }

    /// Number of pages.
    pub fn len(&self) -> u32 {
        match self {
            Sampler::Uniform(n) => *n,
            Sampler::Zipf(t) => t.keep.len() as u32,
        }
    }

    /// True if there are no pages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One sample.
    #[inline]
    pub fn sample(&self, rng: &mut SimRng) -> u32 {
        match self {
            Sampler::Uniform(n) => rng.below(*n),
            Sampler::Zipf(t) => {
                let r = rng.next_u64();
                let col = (((r >> 32) * t.keep.len() as u64) >> 32) as usize;
                if (r as u32) < t.threshold[col] {
                    t.keep[col]
                } else {
                    t.alias[col]
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most popular page of zipf(1.3) over 1000 pages has probability
    /// 1 / H(1000, 1.3) ~ 0.31; uniform would give 0.001.
    #[test]
    fn zipf_is_skewed_and_in_range() {
        let mut rng = SimRng::new(1, 0);
        let s = Sampler::zipf(1000, 1.3, &mut rng);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[s.sample(&mut rng) as usize] += 1;
        }
        let max = *counts.iter().max().unwrap() as f64 / 100_000.0;
        assert!((0.28..0.34).contains(&max), "top page share {max}");
    }

    #[test]
    fn zipf_zero_alpha_is_uniform() {
        let mut rng = SimRng::new(2, 0);
        let s = Sampler::zipf(10, 0.0, &mut rng);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[s.sample(&mut rng) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
    }

    #[test]
    fn zipf_in_order_puts_the_popular_pages_first() {
        let mut rng = SimRng::new(3, 0);
        let s = Sampler::zipf_in_order(1000, 1.0);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[s.sample(&mut rng) as usize] += 1;
        }
        // Weights 1/(i+1) over H(1000) = 7.485: page 0 gets 13.4%, pages 0..64 get 63.4%.
        let first: u32 = counts[..64].iter().sum();
        assert!((12_400..14_400).contains(&counts[0]), "page 0: {}", counts[0]);
        assert!((62_000..65_500).contains(&first), "first 64 pages: {first}");
        assert!(counts[0] > counts[1] && counts[1] > counts[3]);
    }
}
