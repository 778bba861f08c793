//! The extension's only `unsafe` code: waiting the way Ruby waits for I/O,
//! leaving and re-entering Ruby's global VM lock (GVL), and running Ruby's
//! pending interrupts.
//!
//! A thread watching the compiler's output waits with [`wait_readable`]:
//! Ruby's own wait for file descriptors (the core hands out the descriptors
//! to wait on). Ruby releases the GVL meanwhile, so other threads run; the
//! wait takes part in signal handling (a thread waiting this way handles
//! `SIGINT`/`SIGTERM` at once, even when every thread is waiting, which a
//! custom GVL-free wait does not on Ruby 3.1) and is woken by `Thread#raise`,
//! `Thread#kill` and `Timeout` through Ruby's own unblocking function (no
//! helper thread, even on the main thread). (How fibers and parked callers
//! wait is [`crate::waiting`]'s, in plain Ruby calls.) Whatever an interrupt
//! raises or throws during the wait comes back as an ordinary
//! `magnus::Error` that unwinds Rust normally.
//!
//! The core's waitables are Ruby's descriptors on Unix; on Windows they are
//! sockets, which a wait hands to Ruby as C runtime descriptors of its own
//! for the wait's duration ([`RubyFds`]).
//!
//! Short blocking work that never touches Ruby (starting a compiler) runs
//! with [`without_gvl`]; a lone watcher's spin before it sleeps, with
//! [`spin_readable`].
//!
//! Before a compile's native path takes anything another caller could wait
//! for, [`ensure_stack`] makes sure the machine stack it needs is there.
//!
//! The host's Ruby calls made while it carries a caught `throw` or kill to
//! the caller run through [`beside_held_jump`].
//!
//! Panics never cross the C boundary: a panic in the GVL-free function is
//! caught there and handed back to the caller, which resumes it once it holds
//! the GVL again (the extension's panic guard then turns it into a Ruby
//! error).

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use magnus::Ruby;
use sass_embedded_core::wait::{spin, Fds, Waitable};

/// The machine stack a compile's native path may use below its entry, Ruby
/// calls excepted (each is Ruby's, checked by Ruby): its frames are few and
/// small, and nothing in it recurses (the compiler's messages are decoded
/// without recursion: `sass_embedded_core::protocol::decode_outbound`).
pub const NATIVE_PATH_STACK: usize = 64 * 1024;

/// Makes sure [`NATIVE_PATH_STACK`] bytes of machine stack are left below
/// the caller, or raises `SystemStackError` before anything is taken.
///
/// Why: a Rust frame that meets the end of the stack faults, and Ruby turns
/// that fault into a `SystemStackError` by longjmp over every Rust frame in
/// between: had one of them held the compiler's output (the reader's turn)
/// or a lock, every other caller would wait for ever. Ruby itself checks
/// only that 16 KiB are left when it calls a C method (a fiber has 512 KiB
/// in all), so near the end of a fiber's stack the native path could run
/// out. A frame of [`NATIVE_PATH_STACK`] bytes is entered here, touching
/// each page of it as it is entered: where the stack is too short, the fault
/// happens here, where nothing is held yet (the longjmp then skips only
/// frames with nothing to drop, as a raise from Rust does); where Ruby's own
/// measure says the rest is too short, it is an ordinary error.
pub fn ensure_stack(ruby: &Ruby) -> Result<(), magnus::Error> {
    #[inline(never)]
    fn probe() -> bool {
        let reserve = [std::mem::MaybeUninit::<u8>::uninit(); NATIVE_PATH_STACK];
        std::hint::black_box(&reserve);
        // SAFETY: ruby_stack_check only compares the stack pointer with the
        // current execution context's stack bounds; the GVL is held.
        unsafe { rb_sys::ruby_stack_check() != 0 }
    }
    if probe() {
        Err(magnus::Error::new(
            ruby.exception_sys_stack_error(),
            "stack level too deep (a compile needs more machine stack than is left)",
        ))
    } else {
        Ok(())
    }
}

/// A copy of the bytes of `string`.
pub fn bytes(string: magnus::RString) -> Vec<u8> {
    // SAFETY: the slice is copied at once, before any Ruby code can run (so
    // before the string can be changed or collected); the GVL is held.
    unsafe { string.as_slice() }.to_vec()
}

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
    // SAFETY: `data` is the `Call<F, R>` that `call_without_gvl` (or
    // `beside_held_jump`) put on its stack and passed to
    // `rb_thread_call_without_gvl2` (or `rb_ensure`), which calls this
    // function at most once, synchronously, while its caller is still
    // running, so the pointer is valid, correctly typed, and not aliased.
    let call = unsafe { &mut *data.cast::<Call<F, R>>() };
    if let Some(func) = call.func.take() {
        call.outcome = Some(catch_unwind(AssertUnwindSafe(func)));
    }
    ptr::null_mut()
}

/// Runs `func` without the GVL, on this thread, with no unblocking
/// function: for short, bounded work that never touches Ruby (starting a
/// compiler, reaping one), which nothing needs to interrupt.
///
/// Returns `None` if `func` did not run because an interrupt was already
/// pending: the caller should [`check_interrupts`] and try again.
pub fn without_gvl<F, R>(func: F) -> Option<Outcome<R>>
where
    F: FnOnce() -> R,
{
    call_without_gvl(func, None)
}

/// Spins on `fds` for up to `budget` without the GVL (see
/// [`sass_embedded_core::wait::spin`]): whether one became readable. Ruby's
/// unblocking function stops the spin at once, so an interrupt (a signal,
/// `Thread#raise`, `Timeout`) waits for nothing; the caller's wait that
/// follows then runs it.
///
/// Except on the only thread of a program: there, Ruby would start a Ruby
/// thread to call an unblocking function should a signal come, and kill it
/// when the call returns, around every spin (about 20 µs a compile,
/// measured); and declared async-signal-safe instead, the function would be
/// called from signal handlers on any thread, which may still hold it as
/// the spin returns. Only a signal can interrupt that thread (no other Ruby
/// thread can raise in it or time it out), so it spins without one, and a
/// signal waits for the spin's end: its budget at most.
pub fn spin_readable(fds: Fds, budget: Duration) -> bool {
    let stop = AtomicBool::new(false);
    // SAFETY: called with the GVL held (from a Ruby method, on a Ruby
    // thread); it only reads how many threads are alive.
    let alone = unsafe { rb_sys::rb_thread_alone() } != 0;
    let spun = call_without_gvl(
        || spin::until_readable(fds, budget, &stop),
        (!alone).then_some(&stop),
    );
    matches!(spun, Some(Ok(true)))
}

/// Runs `func` without the GVL. With `stop`, Ruby's unblocking function
/// sets it when the thread is interrupted (`func` must then end soon);
/// without, there is no unblocking function.
fn call_without_gvl<F, R>(func: F, stop: Option<&AtomicBool>) -> Option<Outcome<R>>
where
    F: FnOnce() -> R,
{
    let mut call = Call {
        func: Some(func),
        outcome: None,
    };
    let (unblock, unblock_data) = match stop {
        Some(stop) => (
            Some(stop_spin as unsafe extern "C" fn(*mut c_void)),
            ptr::from_ref(stop).cast_mut().cast(),
        ),
        None => (None, ptr::null_mut()),
    };
    // SAFETY: `run_call` is an `extern "C"` function that never unwinds (it
    // catches panics) and whose data pointer outlives this call, as argued
    // there. `rb_thread_call_without_gvl2` is called with the GVL held: every
    // caller is a Ruby method running on a Ruby thread. It does not run
    // pending interrupts itself (unlike the non-2 variant), so it never
    // longjmps over this Rust frame. `stop_spin`, the unblocking function,
    // only stores to `stop`, an atomic the caller keeps alive across this
    // call (Ruby calls it, from another thread, only while
    // `rb_thread_call_without_gvl2` runs, under the thread's interrupt lock,
    // which the call's end takes too; never from a signal handler, since it
    // is not declared async-signal-safe).
    unsafe {
        rb_sys::rb_thread_call_without_gvl2(
            Some(run_call::<F, R>),
            ptr::addr_of_mut!(call).cast(),
            unblock,
            unblock_data,
        );
    }
    call.outcome
}

extern "C" fn stop_spin(stop: *mut c_void) {
    // SAFETY: `stop` is the `AtomicBool` that `call_without_gvl` passed,
    // alive while Ruby may call this (see there); only shared access is made.
    let stop = unsafe { &*stop.cast_const().cast::<AtomicBool>() };
    stop.store(true, Ordering::Relaxed);
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

/// Runs `func` with `$!` set aside while it holds a jump's data, and puts
/// that data back after: for the host's Ruby calls made while it carries a
/// `throw`, `Thread#kill` or other non-local exit it caught earlier on the
/// way to the caller (waking the other parked callers after one wake threw).
///
/// Why: a caught jump leaves `$!` holding data that is no exception (a
/// throw's, or a kill's tag), which the jump needs when it goes on. magnus's
/// `protect`, catching a raise, puts `$!` back as it found it with
/// `rb_set_errinfo`, which refuses a non-exception by raising `TypeError`
/// ("assigning non-exception to $!") where no `rb_protect` catches it: past
/// every Rust frame, stranding the callers being woken. Ruby's own
/// `rb_ensure` does what is needed around its ensure function: it clears a
/// `$!` that is no exception object, runs the function, and stores the old
/// value back directly. So `func` runs as that ensure function, of a body
/// that does nothing.
///
/// The held jump stays the one that goes on: should `func` jump too, that
/// jump's data is replaced, so its error must not be propagated (the caller
/// keeps the first). `func` must return rather than jump (every Ruby call in
/// it protected); a panic is caught and resumed here.
pub fn beside_held_jump<F, R>(func: F) -> R
where
    F: FnOnce() -> R,
{
    extern "C" fn nothing(_: rb_sys::VALUE) -> rb_sys::VALUE {
        rb_sys::Qnil as rb_sys::VALUE
    }
    extern "C" fn ensure<F, R>(data: rb_sys::VALUE) -> rb_sys::VALUE
    where
        F: FnOnce() -> R,
    {
        run_call::<F, R>(data as *mut c_void);
        rb_sys::Qnil as rb_sys::VALUE
    }
    // SAFETY: reads the current execution context's `$!` and its type; the
    // GVL is held. (An exception, or nil, is what `rb_set_errinfo` takes.)
    let held = unsafe {
        let errinfo = rb_sys::rb_errinfo();
        !rb_sys::NIL_P(errinfo)
            && !rb_sys::RB_TYPE_P(errinfo, rb_sys::ruby_value_type::RUBY_T_OBJECT)
    };
    if !held {
        return func();
    }
    let mut call = Call {
        func: Some(func),
        outcome: None,
    };
    // SAFETY: the GVL is held. `rb_ensure` calls `nothing`, which cannot
    // jump, then `ensure` once, synchronously, with the pointer to `call`
    // on this frame (valid and unaliased for the call); `ensure` catches any
    // panic and makes only protected Ruby calls, so no jump leaves it, and
    // with no jump in the body `rb_ensure` returns normally.
    unsafe {
        rb_sys::rb_ensure(
            Some(nothing),
            rb_sys::Qnil as rb_sys::VALUE,
            Some(ensure::<F, R>),
            ptr::addr_of_mut!(call) as rb_sys::VALUE,
        );
    }
    match call.outcome.expect("rb_ensure runs its ensure function") {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Whether the calling fiber runs under a fiber scheduler (a non-blocking
/// fiber of a thread that has one).
pub fn in_scheduled_fiber() -> bool {
    // SAFETY: called with the GVL held, on a Ruby thread (every caller is a
    // Ruby method); the function only reads the current fiber's scheduler.
    unsafe { rb_sys::rb_fiber_scheduler_current() != rb_sys::Qnil as rb_sys::VALUE }
}

/// Waits until one of `fds` (one or two of Ruby's descriptors, see
/// [`RubyFds`]) is readable or
/// `timeout` passes, as Ruby waits for I/O (see the module docs), with the
/// GVL released. For a thread, not a fiber under a scheduler (see
/// [`crate::waiting`]). An interrupt that raises or throws during the wait is
/// returned as the error.
pub fn wait_readable(
    ruby: &Ruby,
    fds: &[c_int],
    timeout: Option<Duration>,
) -> Result<(), magnus::Error> {
    let mut tv = timeout.map(|timeout| rb_sys::timeval {
        tv_sec: timeout.as_secs() as _,
        tv_usec: timeout.subsec_micros() as _,
    });
    let tv_ptr = tv
        .as_mut()
        .map_or(ptr::null_mut(), |tv| tv as *mut rb_sys::timeval);
    let mut result = 0;
    if let [fd] = fds {
        magnus::rb_sys::protect(|| {
            // SAFETY: called with the GVL held, inside `rb_protect`, which
            // catches the non-local exit an interrupt causes before it reaches
            // a Rust frame with pending drops (this closure holds only plain
            // data). `tv_ptr` is null or points to `tv`, alive across the
            // call; `fd` is a descriptor the caller keeps open until the wait
            // returns. Ruby points to `rb_io_wait`, which takes an `IO`
            // object; this takes the descriptor itself, so a wait allocates
            // nothing. Every Ruby this gem supports has it.
            #[allow(deprecated)]
            let ready =
                unsafe { rb_sys::rb_wait_for_single_fd(*fd, rb_sys::RB_WAITFD_IN as _, tv_ptr) };
            result = ready;
            rb_sys::Qnil as rb_sys::VALUE
        })?;
    } else {
        // SAFETY: an all-zero `rb_fdset_t` is what `rb_fd_init` expects to
        // initialise (a count and a null set pointer).
        let mut set: rb_sys::rb_fdset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, exclusively borrowed fdset; init
        // allocates its storage, which `rb_fd_term` below frees whatever the
        // wait did (it runs after `protect` returns, also when an interrupt
        // left the wait by a non-local exit).
        unsafe {
            rb_sys::rb_fd_init(&mut set);
            for fd in fds {
                rb_sys::rb_fd_set(*fd, &mut set);
            }
        }
        let max = fds.iter().max().map_or(0, |fd| fd + 1);
        let waited = magnus::rb_sys::protect(|| {
            // SAFETY: as for the single descriptor above; `set` lives on this
            // stack across the call and holds descriptors the caller keeps
            // open. `rb_thread_fd_select` is Ruby's own `IO.select` wait.
            result = unsafe {
                rb_sys::rb_thread_fd_select(max, &mut set, ptr::null_mut(), ptr::null_mut(), tv_ptr)
            };
            rb_sys::Qnil as rb_sys::VALUE
        });
        // SAFETY: `set` was initialised above and is not used after this.
        unsafe { rb_sys::rb_fd_term(&mut set) };
        waited?;
    }
    if result < 0 {
        let error = std::io::Error::last_os_error();
        return Err(magnus::Error::new(
            ruby.exception_io_error(),
            format!("waiting for the Sass compiler failed: {error}"),
        ));
    }
    Ok(())
}

/// The errno Ruby names a system error by: on Unix the OS's code itself; on
/// Windows, where the OS's codes are Windows error codes (3: path not found),
/// the errno Ruby maps that code to (`rb_w32_map_errno`: ENOENT), as Ruby's
/// own calls do.
#[cfg(unix)]
pub fn ruby_errno(code: i32) -> i32 {
    code
}

#[cfg(windows)]
pub fn ruby_errno(code: i32) -> i32 {
    // SAFETY: a pure lookup in Ruby's table of Windows error codes; it sets
    // the C runtime's errno as well, which nothing reads after this.
    unsafe { rb_sys::rb_w32_map_errno(code as u32) }
}

/// The core's waitables as Ruby's descriptors, valid while this lives: on
/// Unix the descriptors themselves; on Windows, where the core waits on
/// sockets and Ruby on C runtime descriptors, each socket wrapped in a
/// descriptor Ruby knows as a socket (`rb_w32_wrap_io_handle`, as Ruby's
/// `Socket.for_fd` does), unwrapped again (the socket left open: the core
/// owns it) when this is dropped.
pub struct RubyFds {
    fds: [c_int; 2],
    len: usize,
}

impl RubyFds {
    /// Ruby's descriptors for `waitables` (one or two), which the caller
    /// keeps open while this lives.
    pub fn new(ruby: &Ruby, waitables: &[Waitable]) -> Result<Self, magnus::Error> {
        let mut fds = Self {
            fds: [-1; 2],
            len: 0,
        };
        for (slot, waitable) in fds.fds.iter_mut().zip(waitables) {
            *slot = acquire_fd(ruby, *waitable)?;
            fds.len += 1;
        }
        Ok(fds)
    }

    pub fn as_slice(&self) -> &[c_int] {
        &self.fds[..self.len]
    }
}

/// Ruby's descriptor for `waitable`, which the caller keeps open until it
/// hands the descriptor to [`release_fd`] (see [`RubyFds`]).
pub fn acquire_fd(ruby: &Ruby, waitable: Waitable) -> Result<c_int, magnus::Error> {
    ruby_fd(waitable).map_err(|error| {
        magnus::Error::new(
            ruby.exception_io_error(),
            format!("waiting for the Sass compiler failed: {error}"),
        )
    })
}

#[cfg(unix)]
fn ruby_fd(waitable: Waitable) -> std::io::Result<c_int> {
    Ok(waitable)
}

/// Gives back a descriptor from [`acquire_fd`] (on Unix, the waitable
/// itself: nothing to do).
#[cfg(unix)]
pub fn release_fd(_fd: c_int) {}

#[cfg(windows)]
fn ruby_fd(waitable: Waitable) -> std::io::Result<c_int> {
    // SAFETY: `waitable` is an open socket the caller keeps open while the
    // descriptor lives (see `RubyFds::new`); Ruby records it in its socket
    // list and gives it a C runtime descriptor, which `Drop` below unwraps
    // before the socket can close. The GVL is held (Ruby's socket list is
    // guarded by it).
    let fd = unsafe { rb_sys::rb_w32_wrap_io_handle(waitable as rb_sys::HANDLE, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Gives back a descriptor from [`acquire_fd`]: Ruby forgets the socket
/// without closing it (the core owns it).
#[cfg(windows)]
pub fn release_fd(fd: c_int) {
    // SAFETY: `fd` was made by `rb_w32_wrap_io_handle` (its callers hand
    // back only descriptors `acquire_fd` made, once, with nothing using them
    // after); unwrapping drops Ruby's record of the socket and the C
    // runtime's descriptor, not the socket. The GVL is held.
    unsafe { rb_sys::rb_w32_unwrap_io_handle(fd) };
}

#[cfg(windows)]
impl Drop for RubyFds {
    fn drop(&mut self) {
        // Dropped with the GVL held, on the thread that waited.
        for fd in self.as_slice() {
            release_fd(*fd);
        }
    }
}
