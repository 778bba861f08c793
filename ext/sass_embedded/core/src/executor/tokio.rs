//! The tokio executor (cargo feature `tokio`): a current-thread runtime
//! driven by one thread of its own. Everything tokio-specific in the core is
//! in this file.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest as TokioInterest;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use super::{Executor, Interest, Sleep, Task, Watch};

/// The executor's handle.
#[derive(Debug)]
pub struct TokioExecutor {
    handle: Handle,
    stop: Mutex<Option<oneshot::Sender<()>>>,
}

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
            handle,
            stop: Mutex::new(Some(stop)),
        })
    }
}

impl Executor for TokioExecutor {
    fn spawn(&self, task: Task) {
        self.handle.spawn(task);
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        let _context = self.handle.enter();
        Box::pin(tokio::time::sleep(duration))
    }

    fn watch(&self, fd: BorrowedFd<'_>, interest: Interest) -> io::Result<Box<dyn Watch>> {
        let _context = self.handle.enter();
        let interest = match interest {
            Interest::Read => TokioInterest::READABLE,
            Interest::Write => TokioInterest::WRITABLE,
        };
        let fd = crate::sys::tokio_async_fd(fd.try_clone_to_owned()?, interest)?;
        Ok(Box::new(TokioWatch(fd, interest)))
    }

    fn shutdown(&self) {
        let stop = self.stop.lock().map(|mut stop| stop.take());
        if let Ok(Some(stop)) = stop {
            let _ = stop.send(());
        }
    }
}

/// A duplicate of the watched descriptor, registered with tokio's reactor.
struct TokioWatch(AsyncFd<OwnedFd>, TokioInterest);

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
