//! `talus::exact_sum::ExactSum`: exactness, independence of order and grouping (the property an
//! MPI run needs for rank-count-independent sums), correct rounding against an independent
//! reference (a port of CPython's `math.fsum`) and against values Python itself computed, and
//! the non-finite rules.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::exact_sum::{ExactSum, LIMBS, WIRE_LEN};
use talus::ranks::Ranks;

/// CPython's `math.fsum` (Shewchuk's partials, then the half-even correction of
/// `Modules/mathmodule.c`): correctly rounded for finite sums whose partials do not overflow.
fn fsum(values: &[f64]) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for &v in values {
        let mut x = v;
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    let mut n = partials.len();
    if n == 0 {
        return 0.0;
    }
    n -= 1;
    let mut hi = partials[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        let yr = x - hi;
        if y == yr {
            hi = x;
        }
    }
    hi
}

/// A finite f64 with a random sign, random mantissa bits and an exponent anywhere from the
/// subnormals to 2^max_exp.
fn wild(rng: &mut Pcg64, max_exp: i32) -> f64 {
    let biased = rng.random_range(0..=(1023 + max_exp) as u64);
    let frac = rng.random::<u64>() & ((1u64 << 52) - 1);
    let sign = (rng.random::<bool>() as u64) << 63;
    f64::from_bits(sign | (biased << 52) | frac)
}

/// Random data with wildly varying exponents and some near-cancelling pairs.
fn wild_set(rng: &mut Pcg64, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n).map(|_| wild(rng, 1000)).collect();
    for _ in 0..n / 4 {
        let x = v[rng.random_range(0..v.len())];
        v.push(-x);
        v.push(-x * (1.0 + f64::EPSILON));
    }
    v.shuffle(rng);
    v
}

/// An elementwise i64 sum of wire forms: what MPI_SUM over the limbs computes.
fn wire_sum(parts: &[ExactSum]) -> ExactSum {
    let mut total = [0i64; WIRE_LEN];
    for p in parts {
        for (t, l) in total.iter_mut().zip(p.to_limbs()) {
            *t += l;
        }
    }
    ExactSum::from_limbs(&total).unwrap()
}

#[test]
fn known_exact_cases() {
    assert_eq!(ExactSum::sum_of([1e300, 1.0, -1e300]).value(), 1.0);
    assert_eq!(ExactSum::sum_of([1e308, 1e308, -1e308, -1e308, 1e-308]).value(), 1e-308);
    assert_eq!(ExactSum::sum_of([0.1; 10]).value(), fsum(&[0.1; 10]));
    assert_eq!(ExactSum::sum_of([0.1; 10]).value(), 1.0); // fsum's documented example
    let naive: f64 = [0.1; 10].iter().sum();
    assert_ne!(naive, 1.0);
    // subnormals: exact integer multiples of 2^-1074
    let tiny = f64::from_bits(1);
    assert_eq!(ExactSum::sum_of([tiny; 3]).value(), f64::from_bits(3));
    assert_eq!(ExactSum::sum_of([f64::MIN_POSITIVE, -tiny]).value(), f64::from_bits(f64::MIN_POSITIVE.to_bits() - 1));
    let subs: Vec<f64> = (1..=1000u64).map(f64::from_bits).collect();
    assert_eq!(ExactSum::sum_of(subs.iter().copied()).value(), f64::from_bits(500_500));
    // cancellation to zero, and the empty sum: +0.0
    assert_eq!(ExactSum::sum_of([1.5, -1.5]).value().to_bits(), 0);
    assert_eq!(ExactSum::new().value().to_bits(), 0);
    assert_eq!(ExactSum::sum_of([-0.0, -0.0]).value().to_bits(), 0);
    // the largest finite values, exactly
    assert_eq!(ExactSum::sum_of([f64::MAX, f64::MAX, -f64::MAX]).value(), f64::MAX);
    assert_eq!(ExactSum::sum_of([f64::MIN, f64::MIN, f64::MAX]).value(), f64::MIN);
    // negative results
    assert_eq!(ExactSum::sum_of([-1e300, -1.0, 1e300]).value(), -1.0);
    assert_eq!(ExactSum::sum_of([-2.5, 1.0]).value(), -1.5);
}

#[test]
fn rounding_ties_to_even_and_sticky_bits() {
    let ulp_half = 2f64.powi(-53);
    // 1 + half an ulp: a tie, to the even 1.0
    assert_eq!(ExactSum::sum_of([1.0, ulp_half]).value(), 1.0);
    // with anything below it, up
    assert_eq!(ExactSum::sum_of([1.0, ulp_half, f64::from_bits(1)]).value(), 1.0 + f64::EPSILON);
    // and anything negative below it, down
    assert_eq!(ExactSum::sum_of([1.0 + f64::EPSILON, ulp_half, -f64::from_bits(1)]).value(), 1.0 + f64::EPSILON);
    // (1 + ε) + half an ulp: a tie, to the even 1 + 2ε
    assert_eq!(ExactSum::sum_of([1.0 + f64::EPSILON, ulp_half]).value(), 1.0 + 2.0 * f64::EPSILON);
    // negative ties, symmetric
    assert_eq!(ExactSum::sum_of([-1.0, -ulp_half]).value(), -1.0);
    assert_eq!(ExactSum::sum_of([-1.0 - f64::EPSILON, -ulp_half]).value(), -1.0 - 2.0 * f64::EPSILON);
    // rounding up across a binade: (2 − ε) + ε/2 + tiny rounds to 2.0
    assert_eq!(ExactSum::sum_of([2.0 - f64::EPSILON, f64::EPSILON / 2.0, f64::from_bits(1)]).value(), 2.0);
    // overflow: the exact sum beyond f64::MAX + half an ulp rounds to infinity (IEEE)
    assert_eq!(ExactSum::sum_of([f64::MAX, f64::MAX]).value(), f64::INFINITY);
    assert_eq!(ExactSum::sum_of([f64::MIN, f64::MIN]).value(), f64::NEG_INFINITY);
    let half_ulp_max = 2f64.powi(970);
    assert_eq!(ExactSum::sum_of([f64::MAX, half_ulp_max]).value(), f64::INFINITY); // a tie, to even (up)
    assert_eq!(ExactSum::sum_of([f64::MAX, half_ulp_max, -f64::from_bits(1)]).value(), f64::MAX);
}

/// Values and sums computed by Python 3's `math.fsum` (random.seed(35): exponents from the
/// subnormals to 2^1000, random signs, near-cancelling partners), as f64 bit patterns.
const FSUM_CASES: &[(&[u64], u64)] = &[
    (&[0x15febcd5ecd3c22e, 0x85e8d5e043bfc2e5, 0xf191c0b780de5e89, 0xf7371e5fb132280e, 0xf89fc2b4947c6374, 0xcacfe9107b20fea8, 0x2f68c620e26574a6, 0x83459a495747290b, 0xf24df59c699bdb90, 0x5e0ce6dc01df8dc8, 0xf15f20286c1c8212, 0xc3602a8a8a2e85bc, 0x9a96636df2fa1a9f, 0x724df59c699bdb90, 0x6de952c17abeab16, 0xf89fc2b4947c636c, 0x1531a7d75089b980, 0xf89fc2b4947c6378, 0x24e502a15cf4a8bc, 0x1e17658c8bbd8dec, 0xfb89468aa55bde73, 0xf15f20286c1c8212, 0x56ad6b8f7685d80e, 0x789fc2b4947c6372, 0x242ba1629262601c, 0x3be28b58c92fbd21, 0x1a158cad5765c5aa, 0x9a158cad5765c5ae, 0x27181596d4c6f70f, 0x5c1c1b0dac32b871, 0x9a158cad5765c5a7, 0x80005c601062fc69, 0x82cf5a633c12204f, 0x3f42a87ee9011ac2, 0x816549d1f566c27b, 0x15f8da02581a2db6, 0x42e776bb4e489ba0, 0x25c3b6249cc4acc8, 0x715f20286c1c820c, 0x0ca0d2f9bf54e44e, 0xf15f20286c1c820c, 0x00000ee8d4abe4aa, 0x7b89468aa55bde76, 0x7191c0b780de5e87, 0x95c826ca2596040c, 0x8c16755ad3093f68, 0x6090b667d367e07a, 0x9dcc9013b304a0c4, 0x17249624fc9e898e, 0x5280dc63008dceac, 0x85e8d5e043bfc2e3, 0x03a372052de5fae9, 0x05e8d5e043bfc2e5], 0xf8af02b4c2b922d5),
    (&[0x8fcdc7381046b7f4, 0xc48cf1a2fc83cc9c, 0x75b6b60b1461ecc4, 0x58c6b418c0b9b697, 0xc817aabddcda459c, 0xc0bf6363e4b46c42, 0x20e6dd4e5da83ff0, 0xe00b242d82406ce4, 0xa0e6dd4e5da83ff0, 0xa49b49014ac7a72c, 0xf8713561a55d3d94, 0xc9a5191cfea1af22, 0x57b46ca123ee5b50, 0x5bcb7a72443a8b22, 0xab5f62992d15ba34, 0xd3dd189549e5f410, 0x40bf6363e4b46c48, 0x1b68e08f8541688d, 0xb8316696003daef6, 0x465852548f13f828, 0x6faa9bb1b5b48d4a, 0xa1dbc3075d461705, 0x2eac34aae44e8a38, 0xc65852548f13f826, 0x767db721fb34abb8, 0xaeac34aae44e8a3a, 0x4cb0516aa8418e68, 0x68f69929d96e8140, 0xd8c6b418c0b9b698, 0xaeac34aae44e8a34, 0x607cac0bde6716ac, 0x3ca927bacd66f539, 0x66d875e6fede445f, 0xe07cac0bde6716ae, 0xfb67769c0d7a0880, 0x87cefdecd64053f8, 0x8dd6a1290b8d9226, 0x448cf1a2fc83cc9e, 0x81d9c217260e46d0, 0x78713561a55d3d93, 0xb2db9fd19e223f4b, 0x4cc20daaf550227c, 0x4817aabddcda45a0, 0xc5c1be3ec88ba34f, 0x600b242d82406ce4, 0x54b2cb5633d32d9c, 0x7a5e2d8e4dfee4ac, 0xe07cac0bde6716a8, 0x86eb5f7436c181bf], 0xfb67768cf6b2e181),
    (&[0x2deb87da804781c0, 0x544fbc39f70d375a, 0x1a33519305a15ef5, 0xa05648eea507580c, 0xf39551af6f90b394, 0x9475ee47b92fc6c4, 0x27a73a352410b26c, 0xdfe1fef20d5fd4f0, 0x40c1f5cc7e086764, 0x1475ee47b92fc6c8, 0x90919a4a83e1a2e0, 0xfd6625439b514ce5, 0xe3416ac903776ba4, 0x10919a4a83e1a2dd, 0x205648eea507580f, 0x64de0643020f86d2, 0xb29ecc88302ae6f0, 0xc08dc4c2d0f0aa3e, 0xa22a35e3dc7912a9, 0x28c87034391cc460, 0xf1104d3d0c48c066, 0x10919a4a83e1a2e1, 0xac704457e2e008ee, 0xa7a73a352410b26f, 0x0d03a937a14b9600, 0xcaf9e211a8fc6674, 0xa05648eea507580c, 0x10972b9d7551b044, 0xe09e6379ffc212f5, 0xea0b874bac80f1cc, 0x69005426b9957e44, 0xc115e2739a25e988, 0x8d03a937a14b9602, 0x249e75cde61d07d0, 0xadeb87da804781be, 0xedf79b1a460074b8, 0xebbb44dd2094e994, 0x2deb87da804781bb, 0x00e17a31b657ec60, 0x50245f45f13db874, 0x7d6625439b514ce5, 0xcb5404d9facb0c80, 0x6bbb44dd2094e98f, 0x048808c96775a810, 0x194d15f3025b0c3e], 0xf39551af6f90c3e1),
    (&[0x629d65778a365aeb, 0x548cd24601a0a6fa, 0x0efd452ddd391c5e, 0xd6fed12c4ed4dfe7, 0xfc43589153358ff8, 0x32a2ffc78c68cc00, 0x0efd452ddd391c5c, 0xbe38923920706687, 0x93c15e4b38f627c0, 0x92a20397ce8076a8, 0xf01d8d6772e8898a, 0xd48cd24601a0a6fc, 0x8efd452ddd391c5c], 0xfc43589153358ff8),
    (&[0x03df50255b53aacc, 0xc8079218e809f06f, 0x4d7097bc06fa91d8, 0x9718473ba39c4948, 0x48079218e809f06f, 0x7a8ba342179d729c, 0x30df5c3f64cacfc0, 0x00000074f3aed43b, 0xc8079218e809f070, 0x8d8e700e0d2c5e82, 0x02e3cb0aed0a5592, 0x000000000000005d, 0x81bd3f6bbdfa2300, 0x7aff8a9f5be2353c, 0x74116f29a3acffa7, 0x746fb6f6495d9c9c, 0x0d8e700e0d2c5e7c, 0x03a67c3b913cf501, 0x83df50255b53aace, 0xa9ee9aa9063c7c04, 0x8a1a93fe328439f8, 0x83a67c3b913cf500], 0x7affc1e5e0117021),
    (&[0xbc40351944b4bb45, 0xa9cd0e46dea74945, 0x57dccaf9df3c8f80, 0xf1eba5d88a895b10, 0xdeb8c711f2b5cfe5, 0x4de8567c043054b0, 0x2f0a67a1532d315b, 0xaf0a67a1532d3158, 0x967c7bb31da2e687, 0xacfcd18a87132146, 0x71eba5d88a895b0d, 0x3c40351944b4bb44, 0x15fa7e62dc773e74], 0xeeb8000000000000),
    (&[0x8558015c2b5abe76, 0x6b5d6bc7b2714916, 0x1ed6f562bf628680, 0xaa5dcc048d26de38, 0xc156a2f6b9618014, 0x23a6654c3086b550, 0xa64eadc2467a5920, 0xa0a79f19d6649c7b, 0x4156a2f6b9618017, 0x0558015c2b5abe7b, 0x04518835f12a4208, 0x23f38f881cd83118, 0x389cf4d1766cf6e0, 0x264eadc2467a591c, 0x9005b696ef35ae30, 0xfacba5d862189c32, 0xf7c1589bd192c3f4, 0x4156a2f6b9618018, 0x54ef2176b15feb5c, 0x2473653de21763e8, 0x786c66e30e1690be, 0x56fb1a73284c059f, 0x20a79f19d6649c7c, 0x2ce10391ba5633d8, 0x8558015c2b5abe7e, 0x81593406ed722d00, 0x6f9a129864b65430, 0x90aa9af6bfe08525, 0x1005b696ef35ae33, 0xc739d540a9dd9975, 0xddc103bcda8ae694, 0x752f247bebb39fdf, 0xbd78e5845b70014c, 0x4739d540a9dd9970, 0xc739d540a9dd9972, 0xc647f1d4e0bf3ad7, 0x0deaf7e25d6aca44, 0x2a5dcc048d26de3e, 0xa126cbf57c18487b, 0x9bde0ec9171e4ac9, 0x73e2202e57f3f43c], 0xfacba5d862182aa8),
    (&[0xd545c537de3b6430, 0x852c3c9652c2a881, 0x4a37452d471509b0, 0xc0405cc2e8e710e0, 0x1ec93574664331a0, 0x5545c537de3b6433], 0x5218000000000000),
];

#[test]
fn matches_python_fsum() {
    for (k, (values, expected)) in FSUM_CASES.iter().enumerate() {
        let v: Vec<f64> = values.iter().map(|&b| f64::from_bits(b)).collect();
        assert_eq!(ExactSum::sum_of(v.iter().copied()).value().to_bits(), *expected, "case {k}");
        assert_eq!(fsum(&v).to_bits(), *expected, "the reference port, case {k}");
    }
}

#[test]
fn matches_fsum_reference_on_random_data() {
    let mut rng = Pcg64::seed_from_u64(35);
    for trial in 0..300 {
        let n = rng.random_range(1..200);
        let max_exp = [1000, 60, 0, -1000][trial % 4];
        let v: Vec<f64> = if max_exp == 1000 { wild_set(&mut rng, n) } else { (0..n).map(|_| wild(&mut rng, max_exp)).collect() };
        let got = ExactSum::sum_of(v.iter().copied()).value();
        assert_eq!(got.to_bits(), fsum(&v).to_bits(), "trial {trial}: {got:e} vs {:e}", fsum(&v));
    }
}

#[test]
fn order_and_grouping_do_not_matter() {
    let mut rng = Pcg64::seed_from_u64(3535);
    for trial in 0..40 {
        let mut v = wild_set(&mut rng, 500);
        let whole = ExactSum::sum_of(v.iter().copied());
        let bits = whole.value().to_bits();
        let wire = whole.to_limbs();
        for ranks in [1usize, 2, 3, 4, 7, 16] {
            v.shuffle(&mut rng);
            // cut into `ranks` parts at random places (parts may be empty)
            let mut cuts: Vec<usize> = (0..ranks - 1).map(|_| rng.random_range(0..=v.len())).collect();
            cuts.sort();
            cuts.insert(0, 0);
            cuts.push(v.len());
            let mut parts: Vec<ExactSum> = cuts.windows(2).map(|w| ExactSum::sum_of(v[w[0]..w[1]].iter().copied())).collect();
            // merged in a random order, as a reduction tree might
            parts.shuffle(&mut rng);
            let mut merged = ExactSum::new();
            for p in &parts {
                merged.merge(p);
            }
            assert_eq!(merged.value().to_bits(), bits, "trial {trial}, {ranks} parts, merged");
            assert_eq!(merged.to_limbs(), wire, "trial {trial}, {ranks} parts: the normalised limbs");
            // pairwise tree merge
            while parts.len() > 1 {
                let b = parts.pop().unwrap();
                let i = rng.random_range(0..parts.len());
                parts[i].merge(&b);
            }
            assert_eq!(parts[0].value().to_bits(), bits, "trial {trial}, {ranks} parts, tree");
            // an elementwise i64 sum of the wire forms (MPI_SUM)
            let per: Vec<ExactSum> = cuts.windows(2).map(|w| ExactSum::sum_of(v[w[0]..w[1]].iter().copied())).collect();
            assert_eq!(wire_sum(&per).value().to_bits(), bits, "trial {trial}, {ranks} parts, wire sum");
        }
    }
}

#[test]
fn non_finite_rules() {
    assert!(ExactSum::sum_of([1.0, f64::NAN]).value().is_nan());
    assert!(ExactSum::sum_of([f64::INFINITY, f64::NEG_INFINITY]).value().is_nan());
    assert!(ExactSum::sum_of([f64::INFINITY, f64::NAN]).value().is_nan());
    assert_eq!(ExactSum::sum_of([f64::INFINITY, -1e308, f64::INFINITY]).value(), f64::INFINITY);
    assert_eq!(ExactSum::sum_of([f64::NEG_INFINITY, 1e308]).value(), f64::NEG_INFINITY);
    assert!(!ExactSum::sum_of([f64::INFINITY]).is_finite());
    assert!(ExactSum::sum_of([1.0, 2.0]).is_finite());
    // the counts travel in the wire form: +inf on one rank and -inf on another give NaN
    let a = ExactSum::sum_of([f64::INFINITY, 1.0]);
    let b = ExactSum::sum_of([f64::NEG_INFINITY]);
    assert!(wire_sum(&[a.clone(), b.clone()]).value().is_nan());
    let mut m = a.clone();
    m.merge(&b);
    assert!(m.value().is_nan());
    assert_eq!(wire_sum(&[a, ExactSum::sum_of([5.0])]).value(), f64::INFINITY);
}

#[test]
fn bad_wire_forms_are_refused() {
    let e = ExactSum::from_limbs(&[0; 5]).unwrap_err();
    assert!(e.contains("70 entries") && e.contains("not 5"), "{e}");
    let mut w = [0i64; WIRE_LEN];
    w[LIMBS] = -1;
    assert!(ExactSum::from_limbs(&w).unwrap_err().contains("negative non-finite counts"));
    let mut w = [0i64; WIRE_LEN];
    w[3] = 1 << 62;
    assert!(ExactSum::from_limbs(&w).unwrap_err().contains("out of range"));
}

#[test]
fn many_additions_keep_their_headroom() {
    // each addition of x = (2^53 − 1)·2^(1043−1075) (biased exponent 1043: the mantissa's low
    // bit at bit 1042 = 32·32 + 18 of the accumulator) puts 2^32 − 1 into limb 33; without
    // renormalisation an i64 limb would overflow after 2^31 of them
    let x = f64::from_bits(1043 << 52 | ((1u64 << 52) - 1));
    let n: u64 = (1 << 31) + (1 << 20);
    let mut s = ExactSum::new();
    for _ in 0..n {
        s.add(std::hint::black_box(x));
    }
    // the exact sum n·x rounded once: the f64 product of n (exact) and x is that rounding
    assert_eq!(s.value(), n as f64 * x);
    assert_eq!(s.to_limbs(), ExactSum::from_limbs(&s.to_limbs()).unwrap().to_limbs());
}

#[test]
fn one_rank_reductions_are_the_identity() {
    // what every reduction gives without MPI (and on one rank with it); tests/mpi.rs runs them
    // under mpirun
    let ranks = Ranks::single();
    assert_eq!((ranks.rank(), ranks.size(), ranks.is_root()), (0, 1, true));
    let s = ExactSum::sum_of([1e300, 1.0, -1e300, f64::from_bits(7)]);
    let total = ranks.sum_exact(&s);
    assert_eq!(total.value().to_bits(), s.value().to_bits());
    assert_eq!(total.to_limbs(), s.to_limbs());
    assert_eq!(ranks.sum_u64(12345), 12345);
    assert_eq!(ranks.max_f64(-2.5), -2.5);
    assert!(ranks.max_f64(f64::NAN).is_nan());
    if !Ranks::mpi_built() {
        assert_eq!(Ranks::init().unwrap().size(), 1);
    }
}
