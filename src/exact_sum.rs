//! Exact sums of f64 values, independent of order and grouping (issue 35, "Exact global sums").
//!
//! [`ExactSum`] is an integer superaccumulator: every finite f64 is an integer multiple of
//! 2^-1074 (the smallest subnormal), so a sum of them is one big integer in those units. It is
//! held as [`LIMBS`] signed 64-bit limbs of radix 2^32 ([`LIMB_BITS`]): the value is
//! Σ limb[i] · 2^(32 i − 1074), a *linear* representation, so
//!
//! * adding a value adds its (at most 85-bit) integer mantissa, shifted, to three limbs — no
//!   rounding, so the result does not depend on the order of the additions;
//! * merging two accumulators ([`ExactSum::merge`]) is a limb-by-limb integer sum, which is
//!   what an MPI_SUM over the limbs ([`ExactSum::to_limbs`], [`ExactSum::from_limbs`]) does, so
//!   the grouping of the values among ranks or threads does not matter either;
//! * [`ExactSum::value`] rounds the exact integer once, to nearest with ties to even, which
//!   is the correctly rounded f64 of the exact sum (what Python's `math.fsum` returns).
//!
//! Headroom: a normalised accumulator has limbs 0..LIMBS−1 in [0, 2^32) and the sign in the top
//! limb. Each addition changes a limb by less than 2^32, so an i64 limb absorbs 2^30 additions
//! before the accumulator normalises itself again (carries propagated), and an elementwise sum
//! of P normalised accumulators (an MPI_SUM over P ranks) stays below P · 2^32: no overflow for
//! any P < 2^30 (what [`ExactSum::from_limbs`] accepts). The top limb has weight 2^1070 and holds magnitudes up to 2^1133, far beyond
//! any sum of fewer than 2^100 finite values.
//!
//! Non-finite values are counted, not added: the value is NaN when any NaN was added or both
//! +∞ and −∞ were; otherwise ±∞ when only that infinity was added; otherwise the rounded
//! finite sum, which is ±∞ when its magnitude rounds beyond f64::MAX (IEEE overflow; Python's
//! `math.fsum` raises OverflowError there instead). The counts travel with the limbs (the last
//! three entries of [`ExactSum::to_limbs`]), so the same rule holds after an MPI_SUM. The sum of
//! no values, or of values that cancel exactly, is +0.0 (fsum's is +0.0 too, except for a
//! sum of only −0.0 values, which it gives as −0.0).
//!
//! Cost: an addition is a decomposition of the f64 and three integer adds (a few ns); the
//! conversion back reads the 67 limbs. Fine for per-output energy sums over millions of
//! particles; not meant for the inner force loop.

/// Bits per limb in the normalised form (the radix is 2^32).
pub const LIMB_BITS: u32 = 32;
/// Limbs of the magnitude: bit 0 has weight 2^-1074; the largest finite f64's top bit sits at
/// bit 2097, in limb 65; limb 66 holds the carries and the sign.
pub const LIMBS: usize = 67;
/// Entries of [`ExactSum::to_limbs`]: the limbs, then the counts of NaN, +∞ and −∞.
pub const WIRE_LEN: usize = LIMBS + 3;

/// Weight exponent of limb 0: value = Σ limb[i] · 2^(32 i + LOW_EXP).
const LOW_EXP: i32 = -1074;
/// Additions (or merged accumulators) after which the limbs are normalised again.
const PENDING_MAX: u32 = 1 << 30;
const MASK: i64 = (1i64 << LIMB_BITS) - 1;

/// An exact, order-independent sum of f64 values (see the module docs).
#[derive(Clone, PartialEq, Eq)]
pub struct ExactSum {
    limbs: [i64; LIMBS],
    /// additions since the last normalisation (each limb is below (pending + 1) · 2^32 in
    /// magnitude)
    pending: u32,
    nan: i64,
    pos_inf: i64,
    neg_inf: i64,
}

impl Default for ExactSum {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ExactSum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExactSum({:e})", self.value())
    }
}

impl ExactSum {
    /// The empty sum (value +0.0).
    pub const fn new() -> Self {
        Self { limbs: [0; LIMBS], pending: 0, nan: 0, pos_inf: 0, neg_inf: 0 }
    }

    /// Adds `x` exactly.
    #[inline]
    pub fn add(&mut self, x: f64) {
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let negative = bits >> 63 == 1;
        if biased == 0x7ff {
            if frac != 0 {
                self.nan += 1;
            } else if negative {
                self.neg_inf += 1;
            } else {
                self.pos_inf += 1;
            }
            return;
        }
        // x = mantissa · 2^(exp), exp ≥ −1074
        let (mantissa, exp) = if biased == 0 { (frac, LOW_EXP) } else { (frac | (1u64 << 52), biased - 1075) };
        if mantissa == 0 {
            return;
        }
        if self.pending >= PENDING_MAX {
            self.normalise();
        }
        self.pending += 1;
        let bit = (exp - LOW_EXP) as u32; // 0 ..= 2045
        let index = (bit / LIMB_BITS) as usize;
        let shifted = (mantissa as u128) << (bit % LIMB_BITS); // below 2^85
        let parts = [(shifted as u64 & MASK as u64) as i64, ((shifted >> 32) as u64 & MASK as u64) as i64, (shifted >> 64) as i64];
        if negative {
            for (k, p) in parts.into_iter().enumerate() {
                self.limbs[index + k] -= p;
            }
        } else {
            for (k, p) in parts.into_iter().enumerate() {
                self.limbs[index + k] += p;
            }
        }
    }

    /// The exact sum of `values`.
    pub fn sum_of<I: IntoIterator<Item = f64>>(values: I) -> Self {
        let mut s = Self::new();
        for x in values {
            s.add(x);
        }
        s
    }

    /// Adds every value of `other` (the sum of the union of both sets of values).
    pub fn merge(&mut self, other: &ExactSum) {
        // each side's limbs are below (pending + 1) · 2^32, so the sum is below
        // (pending_a + pending_b + 2) · 2^32
        let mut other_pending = other.pending;
        let mut copy;
        let mut rhs = other;
        if self.pending as u64 + other_pending as u64 + 1 >= PENDING_MAX as u64 {
            self.normalise();
            if other_pending as u64 + 1 >= PENDING_MAX as u64 {
                copy = other.clone();
                copy.normalise();
                other_pending = 0;
                rhs = &copy;
            }
        }
        for (a, b) in self.limbs.iter_mut().zip(rhs.limbs.iter()) {
            *a += *b;
        }
        self.pending += other_pending + 1;
        self.nan += rhs.nan;
        self.pos_inf += rhs.pos_inf;
        self.neg_inf += rhs.neg_inf;
    }

    /// Propagates carries: limbs 0..LIMBS−1 into [0, 2^32), the sign into the top limb. The
    /// value is unchanged.
    pub fn normalise(&mut self) {
        normalise_limbs(&mut self.limbs);
        self.pending = 0;
    }

    /// The wire form for an MPI_SUM (or any elementwise integer sum) across processes: the
    /// normalised limbs, then the counts of NaN, +∞ and −∞. The elementwise sum of the wire
    /// forms of P accumulators, P < 2^30, read back with [`ExactSum::from_limbs`], is their
    /// merge.
    pub fn to_limbs(&self) -> [i64; WIRE_LEN] {
        let mut limbs = self.limbs;
        if self.pending > 0 {
            normalise_limbs(&mut limbs);
        }
        let mut wire = [0i64; WIRE_LEN];
        wire[..LIMBS].copy_from_slice(&limbs);
        wire[LIMBS] = self.nan;
        wire[LIMBS + 1] = self.pos_inf;
        wire[LIMBS + 2] = self.neg_inf;
        wire
    }

    /// The accumulator of a wire form (one from [`ExactSum::to_limbs`] or an elementwise sum of
    /// fewer than 2^30 of them). Errs on a slice of the wrong length, negative counts or a limb
    /// beyond what such a sum can hold.
    pub fn from_limbs(wire: &[i64]) -> Result<Self, String> {
        if wire.len() != WIRE_LEN {
            return Err(format!("exact sum: a wire form has {WIRE_LEN} entries ({LIMBS} limbs and 3 counts), not {}", wire.len()));
        }
        let (nan, pos_inf, neg_inf) = (wire[LIMBS], wire[LIMBS + 1], wire[LIMBS + 2]);
        if nan < 0 || pos_inf < 0 || neg_inf < 0 {
            return Err(format!("exact sum: negative non-finite counts in a wire form (NaN {nan}, +inf {pos_inf}, -inf {neg_inf})"));
        }
        if let Some(l) = wire[..LIMBS].iter().find(|l| l.unsigned_abs() >= 1 << 62) {
            return Err(format!("exact sum: limb {l} is out of range for a sum of fewer than 2^30 wire forms"));
        }
        let mut s = Self { limbs: [0; LIMBS], pending: 0, nan, pos_inf, neg_inf };
        s.limbs.copy_from_slice(&wire[..LIMBS]);
        s.normalise();
        Ok(s)
    }

    /// Whether every value added was finite (no NaN or infinity counted).
    pub fn is_finite(&self) -> bool {
        self.nan == 0 && self.pos_inf == 0 && self.neg_inf == 0
    }

    /// The exact sum rounded to the nearest f64, ties to even (non-finite rules in the module
    /// docs).
    pub fn value(&self) -> f64 {
        if self.nan > 0 || (self.pos_inf > 0 && self.neg_inf > 0) {
            return f64::NAN;
        }
        if self.pos_inf > 0 {
            return f64::INFINITY;
        }
        if self.neg_inf > 0 {
            return f64::NEG_INFINITY;
        }
        let mut limbs = self.limbs;
        normalise_limbs(&mut limbs);
        let negative = limbs[LIMBS - 1] < 0;
        if negative {
            for l in limbs.iter_mut() {
                *l = -*l;
            }
            normalise_limbs(&mut limbs);
        }
        // the magnitude as base-2^32 digits; the top limb is now non-negative and below 2^63
        let magnitude = Magnitude(limbs);
        let len = magnitude.bit_length();
        if len == 0 {
            return 0.0;
        }
        // the result's unit in the last place is 2^shift units of 2^-1074
        let shift = len.saturating_sub(53);
        let mut q = magnitude.bits(shift, 53.min(len));
        if shift > 0 {
            let half = magnitude.bit(shift - 1);
            let sticky = magnitude.any_below(shift - 1);
            if half && (sticky || q & 1 == 1) {
                q += 1; // 2^53 carries into the exponent field below
            }
        }
        // q · 2^(shift − 1074): with q < 2^52 and shift 0 the subnormal encoding is q itself;
        // with q in [2^52, 2^53) the biased exponent is shift + 1, so the encoding is
        // (shift << 52) + q in both cases (and q = 2^53 is the next binade's 2^52)
        let bits = ((shift as u64) << 52) + q;
        let magnitude = if bits >= 0x7ff0_0000_0000_0000 { f64::INFINITY } else { f64::from_bits(bits) };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

impl std::ops::AddAssign<f64> for ExactSum {
    fn add_assign(&mut self, x: f64) {
        self.add(x);
    }
}

impl Extend<f64> for ExactSum {
    fn extend<I: IntoIterator<Item = f64>>(&mut self, values: I) {
        for x in values {
            self.add(x);
        }
    }
}

impl FromIterator<f64> for ExactSum {
    fn from_iter<I: IntoIterator<Item = f64>>(values: I) -> Self {
        Self::sum_of(values)
    }
}

/// Carries propagated: limbs 0..LIMBS−1 into [0, 2^32), the rest (and the sign) into the top.
/// Each carry is below 2^31 + 1 in magnitude, so no step overflows.
fn normalise_limbs(limbs: &mut [i64; LIMBS]) {
    let mut carry = 0i64;
    for l in limbs[..LIMBS - 1].iter_mut() {
        let v = *l + carry;
        carry = v >> LIMB_BITS; // floor division by 2^32 (arithmetic shift)
        *l = v & MASK;
    }
    limbs[LIMBS - 1] += carry;
}

/// A non-negative normalised integer in base 2^32 (in units of 2^-1074).
struct Magnitude([i64; LIMBS]);

impl Magnitude {
    fn bit_length(&self) -> u32 {
        for i in (0..LIMBS).rev() {
            let l = self.0[i] as u64;
            if l != 0 {
                return i as u32 * LIMB_BITS + (64 - l.leading_zeros());
            }
        }
        0
    }

    fn bit(&self, k: u32) -> bool {
        let (i, b) = ((k / LIMB_BITS) as usize, k % LIMB_BITS);
        (self.0[i] as u64 >> b) & 1 == 1
    }

    /// Bits [lo, lo + count) as an integer, count ≤ 53 (the top limb may hold more than 32
    /// bits: it is read whole).
    fn bits(&self, lo: u32, count: u32) -> u64 {
        let mut out = 0u128;
        let first = (lo / LIMB_BITS) as usize;
        let last = (((lo + count - 1) / LIMB_BITS) as usize).min(LIMBS - 1);
        for i in (first..=last).rev() {
            out = (out << LIMB_BITS) | self.0[i] as u64 as u128;
        }
        ((out >> (lo % LIMB_BITS)) as u64) & ((1u64 << count) - 1)
    }

    /// Whether any bit below `k` is set.
    fn any_below(&self, k: u32) -> bool {
        let (i, b) = ((k / LIMB_BITS) as usize, k % LIMB_BITS);
        self.0[..i].iter().any(|&l| l != 0) || (self.0[i] as u64 & ((1u64 << b) - 1)) != 0
    }
}
