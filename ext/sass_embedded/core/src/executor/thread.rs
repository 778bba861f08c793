//! The built-in executor: one thread that runs tasks, fires timers and
//! waits for descriptors with `poll(2)`. It has no dependency and does only
//! what the host needs (a handful of tasks, fewer timers and watches), so it
//! scans lists instead of keeping heaps and maps.
//!
//! Its locks are never held while a task, future or waker is dropped or
//! woken: a dropped future may drop the last reference to a connection,
//! whose drop wakes another task, which takes the run queue's lock (and a
//! dropped watch takes the interests' lock). So whatever leaves a list is
//! taken out under the lock and woken or dropped after it is released.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use super::{Executor, Interest, Sleep, Task, TaskCount, Watch};
use crate::sys::{self, BorrowedWaitable, OwnedWaitable, Waitable};
use crate::wait::Bell;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A spawned task: its future, and whether it is queued to run.
struct TaskCell {
    future: Mutex<Option<Task>>,
    queued: AtomicBool,
    shared: Weak<Shared>,
}

impl Wake for TaskCell {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(shared) = self.shared.upgrade() {
            let mut ready = lock(&shared.ready);
            // A stopped executor runs nothing more: the task stays with
            // whoever holds its waker, and goes with it.
            if ready.closed {
                return;
            }
            ready.tasks.push_back(self.clone());
            drop(ready);
            shared.notify.ring();
        }
    }
}

/// The tasks queued to run; closed once the executor stops.
#[derive(Default)]
struct Ready {
    tasks: VecDeque<Arc<TaskCell>>,
    closed: bool,
}

/// One registered interest: wake `waker` once `fd` is ready.
struct Interested {
    fd: Waitable,
    interest: Interest,
    fired: Arc<AtomicBool>,
    waker: Waker,
}

struct Shared {
    ready: Mutex<Ready>,
    timers: Mutex<Vec<(Instant, Waker)>>,
    interests: Mutex<Vec<Interested>>,
    /// Wakes the thread out of `poll`.
    notify: Bell,
    stopped: AtomicBool,
}

/// The executor's handle.
#[derive(Debug)]
pub struct ThreadExecutor {
    shared: Arc<Shared>,
    tasks: TaskCount,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl ThreadExecutor {
    /// Starts the executor's thread.
    pub fn start() -> io::Result<Self> {
        let shared = Arc::new(Shared {
            ready: Mutex::new(Ready::default()),
            timers: Mutex::new(Vec::new()),
            interests: Mutex::new(Vec::new()),
            notify: Bell::new()?,
            stopped: AtomicBool::new(false),
        });
        let run = shared.clone();
        std::thread::Builder::new()
            .name("sass-embedded-io".into())
            // Deeply nested values decode recursively.
            .stack_size(8 << 20)
            .spawn(move || run.run())?;
        Ok(Self {
            shared,
            tasks: TaskCount::default(),
        })
    }
}

impl Shared {
    fn run(self: Arc<Self>) {
        let mut fds: Vec<sys::PollFd> = Vec::new();
        let mut asked: Vec<(Waitable, Interest)> = Vec::new();
        while !self.stopped.load(Ordering::Acquire) {
            // Run what is ready; tasks woken meanwhile run in this round too.
            loop {
                let Some(task) = lock(&self.ready).tasks.pop_front() else {
                    break;
                };
                task.queued.store(false, Ordering::Release);
                let waker = Waker::from(task.clone());
                let mut future = lock(&task.future);
                let finished = match future.as_mut() {
                    Some(running) => running
                        .as_mut()
                        .poll(&mut Context::from_waker(&waker))
                        .is_ready(),
                    None => false,
                };
                let finished = if finished { future.take() } else { None };
                drop(future);
                drop(finished);
            }
            if self.stopped.load(Ordering::Acquire) {
                break;
            }

            let now = Instant::now();
            let timeout = lock(&self.timers)
                .iter()
                .map(|(deadline, _)| deadline.saturating_duration_since(now))
                .min();
            fds.clear();
            asked.clear();
            asked.extend(
                lock(&self.interests)
                    .iter()
                    .map(|interest| (interest.fd, interest.interest)),
            );
            fds.push(sys::poll_fd(self.notify.fd(), Interest::Read));
            fds.extend(
                asked
                    .iter()
                    .map(|&(fd, interest)| sys::poll_fd(fd, interest)),
            );
            // A poll failure (EINVAL for a closed descriptor, say) wakes
            // every watcher, which then finds out for itself.
            let failed = crate::sys::poll(&mut fds, timeout).is_err();
            self.notify.drain();

            let ready: Vec<(Waitable, Interest)> = fds[1..]
                .iter()
                .zip(&asked)
                .filter(|(fd, _)| failed || sys::is_ready(fd))
                .map(|(_, asked)| *asked)
                .collect();
            let fired = take_where(&self.interests, |interest| {
                ready.contains(&(interest.fd, interest.interest))
            });
            for interest in fired {
                interest.fired.store(true, Ordering::Release);
                interest.waker.wake();
            }
            let now = Instant::now();
            for (_, waker) in take_where(&self.timers, |(deadline, _)| *deadline <= now) {
                waker.wake();
            }
        }
        self.close();
    }

    /// Stopped: drops every task (their futures may hold descriptors), and
    /// every waker that would keep one. Dropping one may wake or drop
    /// others, so it goes on until nothing is left.
    fn close(&self) {
        loop {
            let tasks = {
                let mut ready = lock(&self.ready);
                ready.closed = true;
                std::mem::take(&mut ready.tasks)
            };
            let timers = std::mem::take(&mut *lock(&self.timers));
            let interests = std::mem::take(&mut *lock(&self.interests));
            if tasks.is_empty() && timers.is_empty() && interests.is_empty() {
                return;
            }
            drop(tasks);
            drop(timers);
            drop(interests);
        }
    }
}

/// Takes out of `list` the entries `take` picks, keeping the others: what
/// is taken is dropped or woken by the caller, after the lock is released.
fn take_where<T>(list: &Mutex<Vec<T>>, mut take: impl FnMut(&T) -> bool) -> Vec<T> {
    let mut list = lock(list);
    let (taken, kept) = std::mem::take(&mut *list)
        .into_iter()
        .partition(|entry| take(entry));
    *list = kept;
    taken
}

impl Executor for ThreadExecutor {
    fn spawn(&self, task: Task) {
        let cell = Arc::new(TaskCell {
            future: Mutex::new(Some(self.tasks.count(task))),
            queued: AtomicBool::new(false),
            shared: Arc::downgrade(&self.shared),
        });
        cell.wake_by_ref();
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        let deadline = Instant::now() + duration;
        let shared = self.shared.clone();
        Box::pin(std::future::poll_fn(move |cx| {
            if Instant::now() >= deadline {
                return Poll::Ready(());
            }
            // Polled on the executor's thread, which recomputes its timeout
            // before it next sleeps.
            lock(&shared.timers).push((deadline, cx.waker().clone()));
            Poll::Pending
        }))
    }

    fn watch(&self, fd: BorrowedWaitable<'_>, interest: Interest) -> io::Result<Box<dyn Watch>> {
        Ok(Box::new(ThreadWatch {
            fd: crate::fork::ForkLocal::new(fd.try_clone_to_owned()?),
            interest,
            fired: Arc::new(AtomicBool::new(false)),
            shared: self.shared.clone(),
        }))
    }

    fn shutdown(&self) {
        self.shared.stopped.store(true, Ordering::Release);
        self.shared.notify.ring();
    }

    fn live_tasks(&self) -> usize {
        self.tasks.get()
    }
}

struct ThreadWatch {
    /// A duplicate of the watched descriptor, open as long as the watch.
    fd: crate::fork::ForkLocal<OwnedWaitable>,
    interest: Interest,
    fired: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

impl Watch for ThreadWatch {
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.fired.swap(false, Ordering::AcqRel) {
            return Poll::Ready(Ok(()));
        }
        let interested = Interested {
            fd: sys::raw(&self.fd),
            interest: self.interest,
            fired: self.fired.clone(),
            waker: cx.waker().clone(),
        };
        // One interest per watch: a repeated poll only updates the waker
        // (the one it replaces is dropped after the lock is released).
        let replaced = {
            let mut interests = lock(&self.shared.interests);
            let replaced = interests
                .iter()
                .position(|interest| Arc::ptr_eq(&interest.fired, &self.fired))
                .map(|at| interests.swap_remove(at));
            interests.push(interested);
            replaced
        };
        drop(replaced);
        Poll::Pending
    }
}

impl Drop for ThreadWatch {
    fn drop(&mut self) {
        let forgotten = take_where(&self.shared.interests, |interest| {
            Arc::ptr_eq(&interest.fired, &self.fired)
        });
        drop(forgotten);
    }
}
