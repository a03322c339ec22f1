//! Means, standard deviations and Welch's t-test for `compare --runs`: is a
//! difference between two kernels' means larger than their runs' spread
//! explains? (mmtests' compare-kernels marks such a change `*x%*`.)

/// Sample mean and standard deviation (n - 1; 0 for a single value).
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Two-sided p-value of Welch's t-test for equal means of `a` and `b`;
/// `None` when either has fewer than 2 values. Two groups without spread
/// differ certainly (p = 0) when their means differ, and not at all (p = 1) when equal.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, sa), (mb, sb)) = (mean_sd(a), mean_sd(b));
    let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
    if va + vb == 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / (va + vb).sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = (va + vb).powi(2) / (va * va / (a.len() as f64 - 1.0) + vb * vb / (b.len() as f64 - 1.0));
    // P(|T| > t) for Student's t with df degrees of freedom = I_x(df/2, 1/2), x = df / (df + t^2).
    Some(incomplete_beta(df / (df + t * t), df / 2.0, 0.5))
}

/// The regularized incomplete beta function I_x(a, b), by its continued
/// fraction (Lentz's method), using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a)
/// where the fraction converges slowly.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < TINY { TINY } else { c };
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-12 {
            break;
        }
    }
    h
}

/// ln Γ(z) for z > 0 (Lanczos approximation, g = 7, 9 terms).
fn ln_gamma(z: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if z < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * z).sin()).ln() - ln_gamma(1.0 - z);
    }
    let z = z - 1.0;
    let t = z + 7.5;
    let series = C[1..].iter().enumerate().fold(C[0], |s, (i, c)| s + c / (z + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (z + 0.5) * t.ln() - t + series.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_deviation() {
        assert_eq!(mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).0, 5.0);
        assert!((mean_sd(&[1.0, 2.0, 3.0]).1 - 1.0).abs() < 1e-12);
        assert_eq!(mean_sd(&[3.0]), (3.0, 0.0));
    }

    #[test]
    fn welch_matches_published_values() {
        // Two-sided p of t = 2.0 with 10 degrees of freedom is 0.0734 (t tables).
        let p = incomplete_beta(10.0 / (10.0 + 4.0), 5.0, 0.5);
        assert!((p - 0.07339).abs() < 1e-4, "{p}");
        // Clearly separated groups are significant, overlapping ones are not.
        assert!(welch_p(&[10.0, 11.0, 10.5, 10.2], &[20.0, 21.0, 20.4, 19.8]).unwrap() < 0.001);
        assert!(welch_p(&[10.0, 12.0, 11.0], &[10.5, 11.5, 12.5]).unwrap() > 0.3);
        assert_eq!(welch_p(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch_p(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
    }
}
