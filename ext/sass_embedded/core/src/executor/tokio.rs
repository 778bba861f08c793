//! The tokio executor (cargo feature `tokio`): a current-thread runtime
//! driven by one thread of its own. Everything tokio-specific in the core is
//! in this file.

use std::io;
use std::sync::{Mutex, PoisonError};
#[cfg(unix)]
use std::task::{Context, Poll};
use std::time::Duration;

#[cfg(unix)]
use tokio::io::Interest as TokioInterest;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use super::{Executor, Interest, Sleep, Task, TaskCount, Watch};
use crate::fork::ForkLocal;

/// The executor's handle on its runtime, and how to stop it; `None` once
/// stopped, so that the runtime's descriptors (its epoll instance and
/// wake-up eventfd, which the handle keeps) go with it. Left alone in a
/// forked child: the runtime's thread is not there, and waking it would
/// write to a descriptor number the child may have reused.
#[derive(Debug)]
pub struct TokioExecutor {
    runtime: ForkLocal<Mutex<Option<Running>>>,
    tasks: TaskCount,
}

/// A running runtime: its handle, and the sender that stops it.
type Running = (Handle, oneshot::Sender<()>);

impl TokioExecutor {
    /// Starts the runtime on a thread of its own.
    pub fn start() -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("sass-embedded-io".into())
            // Deeply nested values decode recursively.
            .stack_size(8 << 20)
            .spawn(move || {
                // Runs every spawned task until asked to stop (or until the
                // handle is gone); dropping the runtime then drops them.
                let _ = runtime.block_on(stopped);
                runtime.shutdown_background();
            })?;
        Ok(Self {
            runtime: ForkLocal::new(Mutex::new(Some((handle, stop)))),
            tasks: TaskCount::default(),
        })
    }

    /// The runtime's handle, unless the executor stopped.
    fn handle(&self) -> Option<Handle> {
        let runtime = self.runtime.lock().unwrap_or_else(PoisonError::into_inner);
        runtime.as_ref().map(|(handle, _)| handle.clone())
    }
}

impl Executor for TokioExecutor {
    fn spawn(&self, task: Task) {
        // After the executor stopped, a task is dropped unrun.
        if let Some(handle) = self.handle() {
            handle.spawn(self.tasks.count(task));
        }
    }

    fn live_tasks(&self) -> usize {
        self.tasks.get()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        match self.handle() {
            Some(handle) => {
                let _context = handle.enter();
                Box::pin(tokio::time::sleep(duration))
            }
            None => Box::pin(std::future::pending()),
        }
    }

    fn watch(
        &self,
        fd: crate::sys::BorrowedWaitable<'_>,
        interest: Interest,
    ) -> io::Result<Box<dyn Watch>> {
        let handle = self
            .handle()
            .ok_or_else(|| io::Error::other("the host's executor has stopped"))?;
        let _context = handle.enter();
        async_fd_watch(fd, interest)
    }

    fn shutdown(&self) {
        let stopped = self
            .runtime
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((_handle, stop)) = stopped {
            let _ = stop.send(());
        }
    }
}

/// Watches a duplicate of `fd`, registered with tokio's reactor.
#[cfg(unix)]
fn async_fd_watch(
    fd: crate::sys::BorrowedWaitable<'_>,
    interest: Interest,
) -> io::Result<Box<dyn Watch>> {
    let interest = match interest {
        Interest::Read => TokioInterest::READABLE,
        Interest::Write => TokioInterest::WRITABLE,
    };
    let fd = crate::sys::tokio_async_fd(fd.try_clone_to_owned()?, interest)?;
    Ok(Box::new(TokioWatch(ForkLocal::new(fd), interest)))
}

/// Tokio has no readiness for arbitrary handles on Windows, where nothing
/// needs one: threads read and write the compiler's pipes.
#[cfg(windows)]
fn async_fd_watch(
    _fd: crate::sys::BorrowedWaitable<'_>,
    _interest: Interest,
) -> io::Result<Box<dyn Watch>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "tokio cannot watch a handle on Windows",
    ))
}

/// A duplicate of the watched descriptor, registered with tokio's reactor.
#[cfg(unix)]
struct TokioWatch(
    ForkLocal<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
    TokioInterest,
);

#[cfg(unix)]
impl Watch for TokioWatch {
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let ready = if self.1 == TokioInterest::READABLE {
            self.0.poll_read_ready(cx)
        } else {
            self.0.poll_write_ready(cx)
        };
        match ready {
            // Tokio's readiness is edge-triggered: clear it now and let the
            // caller read (or write) until WouldBlock; anything arriving
            // after this point sets it again.
            Poll::Ready(Ok(mut guard)) => {
                guard.clear_ready();
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => Poll::Pending,
        }
    }
}
