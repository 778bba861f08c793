//! Parking: how a caller that is not the watcher waits, without a descriptor
//! of its own, and how it is woken.
//!
//! Each caller brings a [`Waker`]. A Rust thread brings a [`Parker`], which
//! whoever routes its message unparks directly, from any thread. A caller
//! whose runtime must do the waking itself (Ruby, where only a thread holding
//! the interpreter may wake a thread or fiber waiting in Ruby's own waits)
//! brings an id instead: waking it *queues* the id here, and the runtime
//! [`take`]s the queued ids and wakes them, on whichever of its threads
//! returns from the host next. The host makes sure one comes: a caller that
//! routes messages returns to its runtime right after, and a wake queued by
//! the host's own executor thread also rings the connection's kick, whose
//! watcher then returns to its runtime and takes the queue.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// How a parked caller is woken.
#[derive(Clone, Debug)]
pub enum Waker {
    /// A Rust thread blocked in [`Parker::park`].
    Native(Arc<Parker>),
    /// A thread of the caller's runtime, woken through the queue; it may
    /// park with a timeout.
    Thread(u64),
    /// A fiber of the caller's runtime, woken through the queue. It parks
    /// without a timeout (a timer racing a wake-up could resume it at the
    /// wrong place under some fiber schedulers), and is not made the deputy
    /// that looks at the output when the watcher is slow.
    Fiber(u64),
}

impl Waker {
    /// A waker for the calling Rust thread.
    pub fn native() -> Self {
        Self::Native(Arc::new(Parker::default()))
    }

    /// Wakes the caller. `by_caller` says the waking thread is a caller that
    /// returns to its runtime soon (which then takes the queue); if it is
    /// not, the caller was queued and `kick` is rung so that the watcher
    /// does.
    pub(crate) fn wake(&self, by_caller: bool, kick: &super::Kick) {
        match self {
            Self::Native(parker) => parker.unpark(),
            Self::Thread(id) | Self::Fiber(id) => {
                queue(*id);
                if !by_caller {
                    kick.ring();
                }
            }
        }
    }

    /// Whether the caller may park with a timeout.
    pub(crate) fn may_time_out(&self) -> bool {
        !matches!(self, Self::Fiber(_))
    }
}

/// What a Rust thread parks on: a flag and a condition variable.
#[derive(Debug, Default)]
pub struct Parker {
    woken: Mutex<bool>,
    condvar: Condvar,
}

impl Parker {
    /// Blocks until [`unpark`](Self::unpark)ed (since the last park) or
    /// `timeout` passes.
    pub fn park(&self, timeout: Option<Duration>) {
        let woken = self.woken.lock().unwrap_or_else(PoisonError::into_inner);
        let mut woken = match timeout {
            Some(timeout) => {
                self.condvar
                    .wait_timeout_while(woken, timeout, |woken| !*woken)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => self
                .condvar
                .wait_while(woken, |woken| !*woken)
                .unwrap_or_else(PoisonError::into_inner),
        };
        *woken = false;
    }

    /// Whether it was unparked since it last parked (for tests).
    #[cfg(test)]
    pub(crate) fn is_unparked(&self) -> bool {
        *self.woken.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the parked thread, or lets its next park return at once.
    pub fn unpark(&self) {
        *self.woken.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.condvar.notify_one();
    }
}

/// The ids of runtime callers woken since the runtime last took them, and
/// the fork generation they belong to (a forked child does not wake its
/// parent's callers).
static QUEUE: Mutex<(u64, Vec<u64>)> = Mutex::new((0, Vec::new()));
/// Whether the queue may hold something: the runtime checks this after
/// every call into the host, so the common case takes no lock.
static QUEUED: AtomicBool = AtomicBool::new(false);
/// Where runtime callers' ids come from.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a runtime caller, never given out before in this process.
pub fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

fn queue(id: u64) {
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    let generation = crate::fork::generation();
    if queue.0 != generation {
        *queue = (generation, Vec::new());
    }
    queue.1.push(id);
    QUEUED.store(true, Ordering::Release);
}

/// Takes the ids of the runtime callers to wake (in the order they were
/// woken), or `None` if there are none (one atomic load).
pub fn take() -> Option<Vec<u64>> {
    if !QUEUED.load(Ordering::Acquire) {
        return None;
    }
    let mut queue = QUEUE.lock().unwrap_or_else(PoisonError::into_inner);
    QUEUED.store(false, Ordering::Release);
    let generation = crate::fork::generation();
    if queue.0 != generation {
        *queue = (generation, Vec::new());
        return None;
    }
    Some(std::mem::take(&mut queue.1)).filter(|ids| !ids.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn an_unpark_before_the_park_is_not_lost() {
        let parker = Parker::default();
        parker.unpark();
        let started = Instant::now();
        parker.park(Some(Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(5));
        // ... and counts once.
        let started = Instant::now();
        parker.park(Some(Duration::from_millis(20)));
        assert!(started.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn an_unpark_from_another_thread_wakes_the_parked_thread() {
        let parker = Arc::new(Parker::default());
        let unparker = {
            let parker = parker.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                parker.unpark();
            })
        };
        parker.park(None);
        unparker.join().unwrap();
    }

    #[test]
    fn queued_wakes_are_taken_once_and_kick_only_when_no_caller_woke_them() {
        let kick = super::super::Kick::new().unwrap();
        let (a, b) = (next_id(), next_id());
        Waker::Thread(a).wake(true, &kick);
        assert!(!kick.is_pending(), "a caller takes the queue itself");
        Waker::Fiber(b).wake(false, &kick);
        assert!(kick.is_pending(), "the executor's wakes ring the kick");
        // Other tests may queue ids of their own meanwhile.
        let taken = take().unwrap_or_default();
        assert!(taken.contains(&a) && taken.contains(&b), "{taken:?}");
        assert!(take().is_none_or(|ids| !ids.contains(&a)));
    }
}
