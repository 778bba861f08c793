//! The waiting seam: what a caller waiting for the compiler sleeps on, and
//! how it is woken. The [`crate::dispatcher`] decides who waits how; this
//! module owns the mechanisms.
//!
//! Of the callers waiting on one compiler, one is the *watcher*: it sleeps on
//! the connection's [`Selector`], descriptors that become readable when the
//! compiler writes or when the selector's [`Kick`] is rung (another caller
//! routed the watcher's message, or the connection failed). Every other
//! caller *parks* without a descriptor of its own and is woken through its
//! [`Waker`] (see [`park`]). So a host holds a fixed handful of descriptors
//! per compiler, however many threads and fibers wait.
//!
//! Three mechanisms implement the descriptors, chosen here and nowhere else:
//!
//! - **epoll** (Linux): an epoll instance holds the compiler's stdout and an
//!   eventfd kick, so the watcher waits on one descriptor, readable exactly
//!   while one of the two is.
//! - **poll** (every other Unix, and Linux built with the `portable-wait`
//!   feature, which `rake test:portable` uses to run every test through it):
//!   the watcher waits with `poll(2)` semantics on two descriptors, the
//!   compiler's stdout and the read end of a pipe kick. Nothing is consumed
//!   by waiting, so only the watcher ever silences the kick: no other reader
//!   can take a wake-up meant for it.
//! - **reader** (Linux built with the `reader-wait` feature, which `rake
//!   test:reader` uses to run every test through it; Windows's, where a
//!   Ruby thread cannot wait on a pipe): a thread of the connection reads
//!   the output and routes it, and the watcher sleeps on the kick alone
//!   (`reader.rs`). The connection asks the mechanism for that thread's
//!   output (`thread_output`; the other mechanisms have none).
//!
//! Either way a [`Bell`] is the descriptor a kick is made of (also the
//! built-in executor's wake-up and the wait_for baton), and [`Fds`] names
//! the descriptors one wait is for.

pub mod park;
pub mod spin;

// Linux's default mechanism; the others are every other Unix's (and
// Linux's with `portable-wait`), and Windows's (and Linux's with
// `reader-wait`, which wins).
#[cfg(all(
    target_os = "linux",
    not(feature = "portable-wait"),
    not(feature = "reader-wait")
))]
#[path = "epoll.rs"]
mod mechanism;
#[cfg(all(
    unix,
    not(all(target_os = "linux", not(feature = "portable-wait"))),
    not(feature = "reader-wait")
))]
#[path = "poll.rs"]
mod mechanism;
#[cfg(any(feature = "reader-wait", windows))]
#[path = "reader.rs"]
mod mechanism;

// The bells of the poll and reader mechanisms: pipes on Unix, loopback
// socket pairs on Windows (epoll's are eventfds, in epoll.rs).
#[cfg(all(
    unix,
    not(all(
        target_os = "linux",
        not(feature = "portable-wait"),
        not(feature = "reader-wait")
    ))
))]
#[path = "pipe.rs"]
mod bell;
#[cfg(windows)]
#[path = "socket.rs"]
mod bell;

pub(crate) use mechanism::{thread_output, Selector};
pub use mechanism::{Bell, MECHANISM};
pub use park::{Parker, Waker};

/// What a wait is on: a file descriptor, a socket on Windows.
pub use crate::sys::Waitable;
use crate::sys::{self, Interest};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The name of a connection's reader thread, under the reader-thread
/// mechanism (short enough for Linux's 15-byte thread names).
pub const READER_THREAD_NAME: &str = "sass-reader";

/// How a caller waits before it asks again for its next event: however its
/// runtime waits (Ruby's own waits, or [`Wait::block`] for a Rust thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Until one of these descriptors is readable, or this long at most.
    Fds(Fds, Option<Duration>),
    /// As `Fds` (the descriptors, then the timeout), but the answer is
    /// probably a moment away and this caller is alone: a thread first
    /// spins on them for up to the middle duration (see [`spin`]). A fiber
    /// under a scheduler waits as for `Fds`.
    Spin(Fds, Duration, Option<Duration>),
    /// Parked until its [`Waker`] is woken, or this long at most.
    Park(Option<Duration>),
}

impl Wait {
    /// Waits so on this thread, for at most `limit` (`None`: no limit of
    /// its own). A caller whose waker is not [`Waker::Native`] cannot park
    /// here: it looks again after a millisecond instead.
    pub fn block(self, waker: &Waker, limit: Option<Duration>) {
        let within = |timeout: Option<Duration>| match (timeout, limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match self {
            Self::Fds(fds, timeout) => {
                let _ = wait_readable(fds, within(timeout));
            }
            Self::Spin(fds, budget, timeout) => {
                let budget = limit.map_or(budget, |limit| budget.min(limit));
                if !spin::until_readable(fds, budget, &AtomicBool::new(false)) {
                    let _ = wait_readable(fds, within(timeout));
                }
            }
            Self::Park(timeout) => match waker {
                Waker::Native(parker) => parker.park(within(timeout)),
                Waker::Thread(_) | Waker::Fiber(_) => {
                    std::thread::sleep(within(Some(Duration::from_millis(1))).unwrap_or_default())
                }
            },
        }
    }
}

/// The descriptors one wait is for: it ends when any of them is readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fds {
    fds: [Waitable; 2],
    len: usize,
}

impl Fds {
    /// One descriptor.
    pub fn one(fd: Waitable) -> Self {
        Self {
            fds: [fd, sys::NO_WAITABLE],
            len: 1,
        }
    }

    /// Two descriptors.
    pub fn two(first: Waitable, second: Waitable) -> Self {
        Self {
            fds: [first, second],
            len: 2,
        }
    }

    /// The descriptors.
    pub fn as_slice(&self) -> &[Waitable] {
        &self.fds[..self.len]
    }
}

/// The bell that wakes the watcher, and whether it was rung since the
/// watcher last silenced it (so the watcher, usually woken by the compiler's
/// output, silences it only when it has something to silence).
#[derive(Debug)]
pub(crate) struct Kick {
    bell: Bell,
    pending: AtomicBool,
}

impl Kick {
    pub(crate) fn new() -> std::io::Result<Self> {
        Ok(Self {
            bell: Bell::new()?,
            pending: AtomicBool::new(false),
        })
    }

    /// Wakes the watcher (from any thread).
    pub(crate) fn ring(&self) {
        // Rung before marked: a watcher that sees the mark silences a ring
        // that is there; one that misses it wakes again and sees it then.
        self.bell.ring();
        self.pending.store(true, Ordering::Release);
    }

    /// The watcher, awake: silences the kick if it was rung.
    pub(crate) fn silence(&self) {
        if self.pending.swap(false, Ordering::AcqRel) {
            self.bell.drain();
        }
    }

    /// What to wait on for the kick alone (once the output ended).
    pub(crate) fn fds(&self) -> Fds {
        Fds::one(self.bell.fd())
    }

    pub(crate) fn bell(&self) -> &Bell {
        &self.bell
    }

    /// Whether the kick was rung and not silenced yet (for tests).
    #[cfg(test)]
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }
}

/// Reads a non-blocking bell's read end until it is empty; whether anything
/// was there (the pipe and socket bells' `take`).
#[cfg_attr(
    all(
        target_os = "linux",
        not(feature = "portable-wait"),
        not(feature = "reader-wait")
    ),
    allow(dead_code)
)]
fn consume(mut bell: impl std::io::Read) -> bool {
    let mut buf = [0u8; 64];
    let mut rung = false;
    while let Ok(n) = bell.read(&mut buf) {
        if n == 0 {
            break;
        }
        rung = true;
    }
    rung
}

/// Whether any of `fds` is readable within `timeout` (`None`: no limit):
/// how a thread without Ruby waits (the tests, the raw benchmark).
pub fn wait_readable(fds: Fds, timeout: Option<Duration>) -> std::io::Result<bool> {
    let [first, second] = fds.fds;
    let mut polled = [
        sys::poll_fd(first, Interest::Read),
        sys::poll_fd(second, Interest::Read),
    ];
    Ok(sys::poll(&mut polled[..fds.len], timeout)? > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn rung(bell: &Bell) -> bool {
        wait_readable(Fds::one(bell.fd()), Some(Duration::ZERO)).unwrap()
    }

    #[test]
    fn a_bell_is_readable_from_ring_to_drain() {
        let bell = Bell::new().unwrap();
        assert!(!rung(&bell));
        bell.ring();
        bell.ring();
        assert!(rung(&bell));
        bell.drain();
        assert!(!rung(&bell));
    }

    #[test]
    fn a_bell_taken_once_is_silent_until_rung_again() {
        let bell = Bell::new().unwrap();
        assert!(!bell.take());
        bell.ring();
        assert!(bell.take());
        assert!(!bell.take());
        assert!(!rung(&bell));
    }

    #[test]
    fn a_ring_from_another_thread_wakes_a_waiter() {
        let bell = Arc::new(Bell::new().unwrap());
        let ringer = {
            let bell = bell.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                bell.ring();
            })
        };
        assert!(wait_readable(Fds::one(bell.fd()), Some(Duration::from_secs(10))).unwrap());
        ringer.join().unwrap();
    }

    #[test]
    fn a_kick_is_silenced_only_when_it_was_rung() {
        let kick = Kick::new().unwrap();
        kick.silence();
        assert!(!rung(kick.bell()));
        kick.ring();
        assert!(kick.is_pending() && rung(kick.bell()));
        kick.silence();
        assert!(!kick.is_pending() && !rung(kick.bell()));
    }

    // The compiler's output is a pipe the watcher can wait on only on Unix
    // (on Windows the reader thread reads it).
    #[cfg(unix)]
    #[test]
    fn the_selector_wakes_for_output_and_for_the_kick_and_only_the_watcher_silences_it() {
        // Under the reader-thread mechanism the thread reads the output, and
        // the watcher sleeps on the kick alone.
        let output_wakes = MECHANISM != "reader";
        let (read, write) = crate::sys::pipe().unwrap();
        let stdout = std::fs::File::from(read);
        let mut compiler = std::fs::File::from(write);
        let kick = Arc::new(Kick::new().unwrap());
        let selector = Selector::new(&stdout, &kick).unwrap();
        let ready = || wait_readable(selector.fds(), Some(Duration::ZERO)).unwrap();
        assert!(!ready());

        // Output wakes it, and reading it all makes it quiet again.
        std::io::Write::write_all(&mut compiler, b"x").unwrap();
        assert_eq!(ready(), output_wakes);
        let mut buf = [0u8; 8];
        assert_eq!(std::io::Read::read(&mut &stdout, &mut buf).unwrap(), 1);
        assert!(!ready());

        // A kick wakes it until the watcher silences it. Another reader, who
        // reads the output, leaves it rung: nothing it does takes the kick.
        kick.ring();
        std::io::Write::write_all(&mut compiler, b"y").unwrap();
        assert_eq!(std::io::Read::read(&mut &stdout, &mut buf).unwrap(), 1);
        assert!(
            ready(),
            "a reader of the output took the kick meant for the watcher"
        );
        kick.silence();
        assert!(!ready());
    }
}
