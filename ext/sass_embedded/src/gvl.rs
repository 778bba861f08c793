//! The extension's only `unsafe` code: leaving and re-entering Ruby's global
//! VM lock (GVL), and running Ruby's pending interrupts.
//!
//! A compile waits for the compiler with the GVL released so other Ruby
//! threads run meanwhile. Ruby wakes the wait through an *unblocking
//! function* when the thread is interrupted (`Thread#raise`, `Thread#kill`,
//! `Timeout`, a signal); the caller then runs the interrupt with
//! [`check_interrupts`], which turns whatever it raises or throws into an
//! ordinary `magnus::Error` that unwinds Rust normally.
//!
//! Panics never cross the C boundary: a panic in the GVL-free function is
//! caught there and handed back to the caller, which resumes it once it holds
//! the GVL again (the extension's panic guard then turns it into a Ruby
//! error); a panic in the unblocking function is caught and dropped.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// What [`without_gvl`] hands back: the function's result or its panic.
pub type Outcome<R> = std::thread::Result<R>;

struct Call<F, R> {
    func: Option<F>,
    outcome: Option<Outcome<R>>,
}

extern "C" fn run_call<F, R>(data: *mut c_void) -> *mut c_void
where
    F: FnOnce() -> R,
{
    // SAFETY: `data` is the `Call<F, R>` that `without_gvl` put on its stack
    // and passed to `rb_thread_call_without_gvl2`, which calls this function at
    // most once, synchronously, while `without_gvl` is still running, so the
    // pointer is valid, correctly typed, and not aliased.
    let call = unsafe { &mut *data.cast::<Call<F, R>>() };
    if let Some(func) = call.func.take() {
        call.outcome = Some(catch_unwind(AssertUnwindSafe(func)));
    }
    ptr::null_mut()
}

extern "C" fn run_unblock<U>(data: *mut c_void)
where
    U: Fn(),
{
    // SAFETY: `data` is the `&U` that `without_gvl` passed; Ruby calls the
    // unblocking function only between entering and leaving the blocking
    // region (it clears it under the thread's interrupt lock before
    // `rb_thread_call_without_gvl2` returns), so the reference is alive. `U`
    // is `Sync`, so calling it from Ruby's interrupting thread is sound.
    let unblock = unsafe { &*data.cast::<U>() };
    // Unwinding into Ruby's C code would abort; a failed wake-up only means the
    // waiter wakes at its next message instead.
    let _ = catch_unwind(AssertUnwindSafe(unblock));
}

/// Runs `func` without the GVL, on this thread. `unblock` must make `func`
/// return soon; Ruby calls it (from another thread) to interrupt the wait.
///
/// Returns `None` if `func` did not run because an interrupt was already
/// pending: the caller should [`check_interrupts`] and try again.
pub fn without_gvl<F, R, U>(func: F, unblock: U) -> Option<Outcome<R>>
where
    F: FnOnce() -> R,
    U: Fn() + Sync,
{
    let mut call = Call {
        func: Some(func),
        outcome: None,
    };
    // SAFETY: both callbacks are `extern "C"` functions that never unwind
    // (they catch panics) and whose data pointers outlive this call, as
    // argued at each of them. `rb_thread_call_without_gvl2` is called with the
    // GVL held: every caller is a Ruby method running on a Ruby thread. It
    // does not run pending interrupts itself (unlike the non-2 variant), so it
    // never longjmps over this Rust frame.
    unsafe {
        rb_sys::rb_thread_call_without_gvl2(
            Some(run_call::<F, R>),
            ptr::addr_of_mut!(call).cast(),
            Some(run_unblock::<U>),
            ptr::addr_of!(unblock).cast_mut().cast(),
        );
    }
    call.outcome
}

/// Runs Ruby's pending interrupts for this thread (thread switches, signal
/// handlers, `Thread#raise`, `Thread#kill`). Whatever they raise or throw is
/// returned as an error, to be propagated to Ruby unchanged.
pub fn check_interrupts() -> Result<(), magnus::Error> {
    magnus::rb_sys::protect(|| {
        // SAFETY: called with the GVL held (from a Ruby method), inside
        // `rb_protect`, which catches the non-local exit an interrupt causes
        // before it reaches any Rust frame with pending drops.
        unsafe { rb_sys::rb_thread_check_ints() };
        rb_sys::Qnil as rb_sys::VALUE
    })
    .map(|_| ())
}
