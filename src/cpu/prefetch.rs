//! Software prefetch: a hint that asks the cache for a line the CPU backend will read soon at
//! an address the hardware prefetchers cannot guess (a partner's state, a share found through
//! `in_slot`). It never changes a result, and does nothing on other architectures.

/// Asks the cache for the line(s) holding `x`.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    prefetch_at(x as *const T);
}

/// Asks the cache for the line(s) of a `T` at `at`, which may be any address (a `Vec`'s
/// buffer beyond its length included): a prefetch never reads through it.
#[inline(always)]
pub fn prefetch_at<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = at.cast::<i8>();
        // SAFETY: SSE is part of x86_64, and a prefetch never faults, whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            if std::mem::size_of::<T>() > 8 {
                _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(std::mem::size_of::<T>() - 1));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
