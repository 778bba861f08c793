//! The built-in executor: one thread that runs tasks, fires timers and
//! waits for descriptors with `poll(2)`. It has no dependency and does only
//! what the host needs (a handful of tasks, fewer timers and watches), so it
//! scans lists instead of keeping heaps and maps.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use super::{Executor, Interest, Sleep, Task, TaskCount, Watch};
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
            lock(&shared.ready).push_back(self.clone());
            shared.notify.ring();
        }
    }
}

/// One registered interest: wake `waker` once `fd` is ready.
struct Interested {
    fd: RawFd,
    events: libc::c_short,
    fired: Arc<AtomicBool>,
    waker: Waker,
}

struct Shared {
    ready: Mutex<VecDeque<Arc<TaskCell>>>,
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
            ready: Mutex::new(VecDeque::new()),
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
        let mut fds: Vec<libc::pollfd> = Vec::new();
        while !self.stopped.load(Ordering::Acquire) {
            // Run what is ready; tasks woken meanwhile run in this round too.
            loop {
                let Some(task) = lock(&self.ready).pop_front() else {
                    break;
                };
                task.queued.store(false, Ordering::Release);
                let waker = Waker::from(task.clone());
                let mut future = lock(&task.future);
                if let Some(running) = future.as_mut() {
                    if running
                        .as_mut()
                        .poll(&mut Context::from_waker(&waker))
                        .is_ready()
                    {
                        *future = None;
                    }
                }
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
            fds.push(libc::pollfd {
                fd: self.notify.fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            fds.extend(lock(&self.interests).iter().map(|interest| libc::pollfd {
                fd: interest.fd,
                events: interest.events,
                revents: 0,
            }));
            // A poll failure (EINVAL for a closed descriptor, say) wakes
            // every watcher, which then finds out for itself.
            let failed = crate::sys::poll(&mut fds, timeout).is_err();
            self.notify.drain();

            {
                let mut interests = lock(&self.interests);
                let ready: Vec<(RawFd, libc::c_short)> = fds[1..]
                    .iter()
                    .filter(|fd| failed || fd.revents != 0)
                    .map(|fd| (fd.fd, fd.events))
                    .collect();
                interests.retain(|interest| {
                    let fired = ready.contains(&(interest.fd, interest.events));
                    if fired {
                        interest.fired.store(true, Ordering::Release);
                        interest.waker.wake_by_ref();
                    }
                    !fired
                });
            }
            let now = Instant::now();
            lock(&self.timers).retain(|(deadline, waker)| {
                let due = *deadline <= now;
                if due {
                    waker.wake_by_ref();
                }
                !due
            });
        }
        // Stopped: drop every task (their futures may hold descriptors).
        lock(&self.ready).clear();
        lock(&self.timers).clear();
        lock(&self.interests).clear();
    }
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

    fn watch(&self, fd: BorrowedFd<'_>, interest: Interest) -> io::Result<Box<dyn Watch>> {
        Ok(Box::new(ThreadWatch {
            fd: crate::fork::ForkLocal::new(fd.try_clone_to_owned()?),
            events: interest.poll_events(),
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
    fd: crate::fork::ForkLocal<OwnedFd>,
    events: libc::c_short,
    fired: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

impl Watch for ThreadWatch {
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.fired.swap(false, Ordering::AcqRel) {
            return Poll::Ready(Ok(()));
        }
        let mut interests = lock(&self.shared.interests);
        // One interest per watch: a repeated poll only updates the waker.
        interests.retain(|interest| !Arc::ptr_eq(&interest.fired, &self.fired));
        interests.push(Interested {
            fd: self.fd.as_raw_fd(),
            events: self.events,
            fired: self.fired.clone(),
            waker: cx.waker().clone(),
        });
        Poll::Pending
    }
}

impl Drop for ThreadWatch {
    fn drop(&mut self) {
        lock(&self.shared.interests).retain(|interest| !Arc::ptr_eq(&interest.fired, &self.fired));
    }
}
