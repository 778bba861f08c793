//! How a compile waits on the Ruby thread or fiber that called it: the Ruby
//! side of the core's waiting seam ([`sass_embedded_core::wait`]).
//!
//! - As the *watcher* ([`Wait::Fds`]), a thread waits with Ruby's own wait
//!   for a descriptor ([`gvl::wait_readable`]), after spinning a moment
//!   without the GVL if the core says so ([`Wait::Spin`],
//!   [`gvl::spin_readable`]); a fiber under a fiber
//!   scheduler parks while helper fibers wait in the scheduler's `io_wait`
//!   (`Sass::Embedded::FiberWaker#watch`, which says why).
//! - *Parked* ([`Wait::Park`]), it sleeps on its `Sass::Embedded::Waker` (a
//!   condition variable) or, a fiber, on its `FiberWaker` (a queue): no
//!   descriptor of its own.
//! - After every step into the host, the thread wakes the parked callers
//!   whose messages it routed: the core queues their ids, and
//!   [`wake_queued`] wakes their Wakers. (The host's own executor thread
//!   cannot touch Ruby; when it queues a wake it rings the watcher, which
//!   then does it.)
//!
//! Every one of these waits is Ruby's own, so signals, `Thread#raise`,
//! `Thread#kill`, `Timeout` and a fiber's timeout or stop reach a waiting
//! compile at once, as an ordinary error returned through Rust.

use std::time::Duration;

use magnus::{prelude::*, value::Lazy, Error, RClass, RHash, Ruby, Value};
use sass_embedded_core::wait::park;
use sass_embedded_core::{Wait, Waker};

use crate::classes::sass_class;
use crate::gvl::{self, RubyFds};

/// `Sass::Embedded::Waker`: how a thread parks.
static WAKER: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Embedded::Waker"));
/// `Sass::Embedded::FiberWaker`: how a fiber under a scheduler parks.
static FIBER_WAKER: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Embedded::FiberWaker"));

/// `Sass::Embedded::Waker::PARKED`: wake id => Waker.
static PARKED: Lazy<RHash> = Lazy::new(|ruby| {
    ruby.get_inner(&WAKER)
        .const_get("PARKED")
        .expect("Sass::Embedded::Waker defines PARKED")
});

/// The fiber-locals (`Thread.current[...]`, per fiber) that keep a thread's
/// Waker, or a fiber's FiberWaker, between its compiles.
const WAKER_LOCAL: &str = "__sass_embedded_waker";
const FIBER_WAKER_LOCAL: &str = "__sass_embedded_fiber_waker";

/// Resolves the classes now: a lazy lookup while an interrupt is pending
/// would fail (see `conversion::preload`).
pub fn preload(ruby: &Ruby) {
    Lazy::force(&WAKER, ruby);
    Lazy::force(&FIBER_WAKER, ruby);
    Lazy::force(&PARKED, ruby);
}

/// One caller's way of waiting: its wake id, whether it is a fiber under a
/// scheduler, and its Waker.
pub struct Waiting {
    id: u64,
    fiber: bool,
    /// Registered in PARKED under `id` (kept on this stack frame, where the
    /// garbage collector sees it).
    waker: Value,
}

impl Waiting {
    /// How the calling thread or fiber waits. Its Waker is registered at
    /// once, before anything can queue a wake for it: registered only once
    /// it parks, a wake queued between the host's decision that it parks and
    /// the registration (another thread may run in between) would find no
    /// Waker, and the caller would sleep on.
    pub fn new(ruby: &Ruby) -> Result<Self, Error> {
        let id = park::next_id();
        let fiber = gvl::in_scheduled_fiber();
        let waker = registered_waker(ruby, id, fiber)?;
        Ok(Self { id, fiber, waker })
    }

    /// The core's handle for waking it.
    pub fn core_waker(&self) -> Waker {
        if self.fiber {
            Waker::Fiber(self.id)
        } else {
            Waker::Thread(self.id)
        }
    }

    /// Waits as the core said; an interrupt that raises or throws meanwhile
    /// is returned as the error.
    pub fn wait(&self, ruby: &Ruby, wait: Wait) -> Result<(), Error> {
        match wait {
            Wait::Fds(fds, timeout) if !self.fiber => {
                let fds = RubyFds::new(ruby, fds.as_slice())?;
                gvl::wait_readable(ruby, fds.as_slice(), timeout)
            }
            Wait::Spin(fds, budget, timeout) if !self.fiber => {
                if gvl::spin_readable(fds, budget) {
                    return Ok(());
                }
                let fds = RubyFds::new(ruby, fds.as_slice())?;
                gvl::wait_readable(ruby, fds.as_slice(), timeout)
            }
            // A fiber never spins: the thread's other fibers need it.
            // Its helpers take Ruby's descriptors for the waitables
            // themselves (`Host.waitable_fd`), for as long as each waits: a
            // helper may outlive this wait.
            Wait::Fds(fds, timeout) | Wait::Spin(fds, _, timeout) => {
                let fds = ruby.ary_from_iter(fds.as_slice().iter().copied());
                self.waker
                    .funcall::<_, _, Value>("watch", (fds, seconds(ruby, timeout)))
                    .map(|_| ())
            }
            Wait::Park(timeout) => {
                // A fiber parks without a timeout (see `Waker::Fiber`).
                let timeout = if self.fiber { None } else { timeout };
                self.waker
                    .funcall::<_, _, Value>("park", (seconds(ruby, timeout),))
                    .map(|_| ())
            }
        }
    }

    /// The compile is over: nobody wakes it any more. Wakes those its end
    /// woke (a watcher leaving passes the watch to a parked caller).
    pub fn finish(self, ruby: &Ruby) -> Result<(), Error> {
        let _ = ruby.get_inner(&PARKED).delete::<_, Value>(self.id);
        wake_queued(ruby)
    }
}

/// The calling thread's Waker (or fiber's FiberWaker), made once and kept in
/// a fiber-local, registered in PARKED under `id`.
fn registered_waker(ruby: &Ruby, id: u64, fiber: bool) -> Result<Value, Error> {
    let (local, class) = if fiber {
        (FIBER_WAKER_LOCAL, &FIBER_WAKER)
    } else {
        (WAKER_LOCAL, &WAKER)
    };
    let current = ruby.thread_current();
    let waker = match current.local_aref::<_, Option<Value>>(local)? {
        Some(waker) => waker,
        None => {
            let waker = ruby.get_inner(class).new_instance(())?;
            current.local_aset(local, waker)?;
            waker
        }
    };
    ruby.get_inner(&PARKED).aset(id, waker)?;
    Ok(waker)
}

/// `timeout` in seconds for Ruby (nil: none).
fn seconds(ruby: &Ruby, timeout: Option<Duration>) -> Value {
    match timeout {
        Some(timeout) => ruby.float_from_f64(timeout.as_secs_f64()).as_value(),
        None => ruby.qnil().as_value(),
    }
}

/// Wakes the parked callers this thread's steps into the host woke (see the
/// module docs). A pending interrupt of this thread that fires inside a wake
/// does not cost another caller its wake-up: the wake is tried again, and
/// the interrupt returned once every caller is woken.
///
/// Each wake runs beside a jump held meanwhile ([`gvl::beside_held_jump`]):
/// a throw or kill caught by an earlier wake, or the one that ended this
/// compile (whose error the caller returns first).
pub fn wake_queued(ruby: &Ruby) -> Result<(), Error> {
    let Some(ids) = park::take() else {
        return Ok(());
    };
    let parked = ruby.get_inner(&PARKED);
    let mut interrupt = None;
    for id in ids {
        let Some(waker) = parked.get(id) else {
            // Its compile ended meanwhile.
            continue;
        };
        // Each failed try consumed one pending interrupt; there are few.
        for _ in 0..8 {
            match gvl::beside_held_jump(|| waker.funcall::<_, _, Value>("wake", ())) {
                Ok(_) => break,
                Err(error) => {
                    interrupt.get_or_insert(error);
                }
            }
        }
    }
    interrupt.map_or(Ok(()), Err)
}
