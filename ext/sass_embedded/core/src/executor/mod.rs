//! Where the host's background work runs. The callers themselves read and
//! write the compiler's pipes (see [`crate::connection`]); what is left for
//! an executor is the work nobody waits for: keeping the tail of a
//! compiler's stderr, the startup and idle timers, finishing a compiler that
//! ended (reaping it, telling its callers how it ended), writing what a
//! full pipe could not take at once, and reading for compilations whose
//! callers went away.
//!
//! The core spawns that work through the small [`Executor`] trait, so the
//! embedder picks the runtime:
//!
//! - [`tokio`] (cargo feature `tokio`, on by default): a current-thread tokio
//!   runtime on a thread of its own;
//! - [`thread`]: a minimal executor on one thread, built on `poll(2)`, with
//!   no dependency at all.
//!
//! Every executor runs its tasks on one thread that lives as long as the
//! host: compilers are started from it, so that on Linux the kernel kills
//! them when it ends (see [`crate::sys::die_with_parent`]).

pub mod thread;
#[cfg(feature = "tokio")]
pub mod tokio;

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

pub use crate::sys::Interest;

/// A unit of background work.
pub type Task = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A future that completes after a delay.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Readiness of one descriptor for one [`Interest`], as the executor's
/// reactor sees it.
pub trait Watch: Send + Sync {
    /// Ready when the descriptor may be ready: the caller then reads or
    /// writes until `WouldBlock`, and polls again (a spurious readiness is
    /// allowed, a lost one is not).
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

/// Waits until `watch` says its descriptor may be ready.
pub async fn ready(watch: &dyn Watch) -> io::Result<()> {
    std::future::poll_fn(|cx| watch.poll_ready(cx)).await
}

/// Runs the host's background tasks.
pub trait Executor: Send + Sync + fmt::Debug {
    /// Runs `task` to completion on the executor's thread.
    fn spawn(&self, task: Task);
    /// A future that completes after `duration` (to be awaited inside a
    /// task).
    fn sleep(&self, duration: Duration) -> Sleep;
    /// Watches `fd` for `interest` (to be polled inside a task). The watch
    /// holds a duplicate of the descriptor, open as long as it lives.
    fn watch(
        &self,
        fd: crate::sys::BorrowedWaitable<'_>,
        interest: Interest,
    ) -> io::Result<Box<dyn Watch>>;
    /// Stops the executor without waiting for it: unfinished tasks are
    /// dropped. Never called in a forked child (the thread is the parent's).
    fn shutdown(&self);
    /// How many spawned tasks are alive (not finished, not dropped): what
    /// the host's background work keeps, for tests and diagnostics.
    fn live_tasks(&self) -> usize;
}

/// Counts the live tasks of one executor (see [`Executor::live_tasks`]).
#[derive(Debug, Default)]
pub(crate) struct TaskCount(Arc<AtomicUsize>);

impl TaskCount {
    /// `task`, counted from now until it finishes or is dropped.
    pub(crate) fn count(&self, task: Task) -> Task {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::pin(Counted {
            task,
            live: self.0.clone(),
        })
    }

    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

struct Counted {
    task: Task,
    live: Arc<AtomicUsize>,
}

impl Future for Counted {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.task.as_mut().poll(cx)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Which [`Executor`] a host runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExecutorKind {
    /// The tokio runtime (the default when the feature is on).
    #[cfg_attr(feature = "tokio", default)]
    #[cfg(feature = "tokio")]
    Tokio,
    /// The built-in `poll(2)` executor.
    #[cfg_attr(not(feature = "tokio"), default)]
    Thread,
}

impl ExecutorKind {
    /// Every kind this build offers, by name.
    pub const ALL: &'static [(&'static str, Self)] = &[
        #[cfg(feature = "tokio")]
        ("tokio", Self::Tokio),
        ("thread", Self::Thread),
    ];

    /// The kind's name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, kind)| *kind == self)
            .map_or("?", |(name, _)| name)
    }

    /// Starts an executor of this kind.
    pub fn start(self) -> io::Result<Arc<dyn Executor>> {
        Ok(match self {
            #[cfg(feature = "tokio")]
            Self::Tokio => Arc::new(tokio::TokioExecutor::start()?),
            Self::Thread => Arc::new(thread::ThreadExecutor::start()?),
        })
    }
}

/// A notification a task can await, executor-agnostic: [`notify`] from any
/// thread wakes the task waiting in [`wait`] (or lets its next `wait`
/// return at once).
///
/// [`notify`]: Signal::notify
/// [`wait`]: Signal::wait
#[derive(Debug, Default)]
pub struct Signal {
    state: std::sync::Mutex<(bool, Option<std::task::Waker>)>,
}

impl Signal {
    fn lock(&self) -> std::sync::MutexGuard<'_, (bool, Option<std::task::Waker>)> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wakes the waiter (once).
    pub fn notify(&self) {
        let waker = {
            let mut state = self.lock();
            state.0 = true;
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Waits for a notification, and consumes it.
    pub async fn wait(&self) {
        std::future::poll_fn(|cx| {
            let mut state = self.lock();
            if std::mem::take(&mut state.0) {
                return Poll::Ready(());
            }
            let replaced = state.1.replace(cx.waker().clone());
            // A waker is never dropped under the lock its drop could take.
            drop(state);
            drop(replaced);
            Poll::Pending
        })
        .await;
    }
}

/// Runs `work` on the executor's thread and returns its result, blocking the
/// calling thread meanwhile. `None` if the executor stopped first.
pub fn run_on<R: Send + 'static>(
    executor: &dyn Executor,
    work: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    executor.spawn(Box::pin(async move {
        let _ = sender.send(work());
    }));
    receiver.recv().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wait::Bell;
    use std::time::Instant;

    /// Runs `check` against every executor this build offers.
    fn each_executor(check: impl Fn(Arc<dyn Executor>)) {
        for (name, kind) in ExecutorKind::ALL {
            eprintln!("executor {name}");
            let executor = kind.start().unwrap();
            check(executor.clone());
            executor.shutdown();
        }
    }

    #[test]
    fn runs_tasks_and_timers() {
        each_executor(|executor| {
            let started = Instant::now();
            let done = Arc::new(AtomicUsize::new(0));
            for delay in [30, 10, 20] {
                let (executor2, done) = (executor.clone(), done.clone());
                executor.spawn(Box::pin(async move {
                    executor2.sleep(Duration::from_millis(delay)).await;
                    done.fetch_add(1, Ordering::SeqCst);
                }));
            }
            while done.load(Ordering::SeqCst) < 3 {
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "timers never fired"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(started.elapsed() >= Duration::from_millis(30));
        });
    }

    #[test]
    fn wakes_a_task_when_its_descriptor_is_ready() {
        each_executor(|executor| {
            let bell = Arc::new(Bell::new().unwrap());
            let watch = match executor.watch(bell.as_fd(), Interest::Read) {
                Ok(watch) => watch,
                // Tokio watches nothing on Windows, where nothing needs it
                // (threads use the compiler's pipes); the built-in executor
                // watches sockets there.
                Err(error) if cfg!(windows) && error.kind() == io::ErrorKind::Unsupported => return,
                Err(error) => panic!("{error}"),
            };
            let (sender, receiver) = std::sync::mpsc::channel();
            let bell2 = bell.clone();
            executor.spawn(Box::pin(async move {
                for round in 0..3 {
                    ready(&*watch).await.unwrap();
                    bell2.drain();
                    sender.send(round).unwrap();
                }
            }));
            for round in 0..3 {
                std::thread::sleep(Duration::from_millis(10));
                bell.ring();
                assert_eq!(receiver.recv_timeout(Duration::from_secs(10)), Ok(round));
            }
        });
    }

    #[test]
    fn live_tasks_are_counted_until_they_finish() {
        each_executor(|executor| {
            let (sender, receiver) = std::sync::mpsc::channel::<()>();
            let gate = Arc::new(Signal::default());
            let waiting = gate.clone();
            executor.spawn(Box::pin(async move {
                waiting.wait().await;
                let _ = sender.send(());
            }));
            assert_eq!(executor.live_tasks(), 1);
            gate.notify();
            receiver.recv_timeout(Duration::from_secs(10)).unwrap();
            let started = Instant::now();
            while executor.live_tasks() > 0 {
                assert!(started.elapsed() < Duration::from_secs(10));
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }

    /// Wakes the task that polled with it, then stops the executor: woken
    /// from the executor's own timer pass, it leaves that task queued, and
    /// unrun, when the executor stops.
    struct WakeThenStop {
        task: std::task::Waker,
        executor: std::sync::Mutex<Option<Arc<dyn Executor>>>,
    }

    impl std::task::Wake for WakeThenStop {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.task.wake_by_ref();
            let executor = self.executor.lock().unwrap().take();
            if let Some(executor) = executor {
                executor.shutdown();
            }
        }
    }

    /// Held by a task: dropped with it, it wakes another task (as the last
    /// reference to a connection wakes its stderr reader), then says so.
    struct WakesOnDrop {
        other: Arc<Signal>,
        dropped: std::sync::mpsc::Sender<()>,
    }

    impl Drop for WakesOnDrop {
        fn drop(&mut self) {
            self.other.notify();
            let _ = self.dropped.send(());
        }
    }

    /// The deadlock of a clean-clone CI run: the built-in executor, stopping,
    /// dropped its queued tasks while holding its run queue's lock, and a
    /// dropped task that woke another one waited for that lock for ever.
    #[test]
    fn stopping_drops_a_queued_task_whose_drop_wakes_another() {
        each_executor(|executor| {
            let other = Arc::new(Signal::default());
            // Spawned first, so it waits on the signal before the other runs.
            let waiting = other.clone();
            executor.spawn(Box::pin(async move {
                waiting.wait().await;
                std::future::pending::<()>().await;
            }));
            let (dropped, was_dropped) = std::sync::mpsc::channel();
            let held = WakesOnDrop { other, dropped };
            let mut sleep = executor.sleep(Duration::from_millis(10));
            let stopper = executor.clone();
            executor.spawn(Box::pin(async move {
                let _held = held;
                std::future::poll_fn(|cx| {
                    let waker = std::task::Waker::from(Arc::new(WakeThenStop {
                        task: cx.waker().clone(),
                        executor: std::sync::Mutex::new(Some(stopper.clone())),
                    }));
                    sleep.as_mut().poll(&mut Context::from_waker(&waker))
                })
                .await;
                std::future::pending::<()>().await;
            }));
            assert!(
                was_dropped.recv_timeout(Duration::from_secs(10)).is_ok(),
                "the executor, stopping, never dropped the queued task (deadlocked?)"
            );
        });
    }

    #[test]
    fn run_on_runs_on_one_long_lived_thread() {
        each_executor(|executor| {
            let first = run_on(&*executor, || std::thread::current().id()).unwrap();
            let second = run_on(&*executor, || std::thread::current().id()).unwrap();
            assert_eq!(first, second);
            assert_ne!(first, std::thread::current().id());
        });
    }
}
