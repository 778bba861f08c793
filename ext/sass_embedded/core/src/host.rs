//! The host: what a `Sass::Compiler` holds. It owns a tokio runtime and the
//! current connection, starts a compiler on first use, starts a fresh one
//! after a crash or an idle close, and closes it on request.
//!
//! Each host has its own runtime so that a forked child never touches its
//! parent's threads: after `fork` the child's copy of a host is leaked, not
//! dropped (dropping would join threads that do not exist in the child), and
//! the Ruby layer gives the child a new host.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::runtime::Runtime;

use crate::compilation::{Compilation, VersionQuery};
use crate::connection::Connection;
use crate::dispatcher::{RegisterError, Registration};
use crate::error::HostError;
use crate::process::CompilerCommand;
use crate::protocol::inbound_message::CompileRequest;

/// How long [`Host::close`] waits for the compiler to exit before killing it.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How a host starts and keeps its compiler.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The command that starts the compiler.
    pub command: CompilerCommand,
    /// Close the compiler after this long with nothing in flight (it is
    /// restarted on demand).
    pub idle_timeout: Option<Duration>,
}

#[derive(Debug, Default)]
struct State {
    connection: Option<Arc<Connection>>,
    closed: bool,
}

/// A compiler owner: lazily connected, restarted after failures.
#[derive(Debug)]
pub struct Host {
    config: HostConfig,
    /// Always `Some` until the host is dropped.
    runtime: Option<Runtime>,
    state: Mutex<State>,
    pid: u32,
}

impl Host {
    /// A host with its own runtime; no compiler is started yet.
    pub fn new(config: HostConfig) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(1)
            .thread_name("sass-embedded-io")
            .enable_io()
            .enable_time()
            .build()?;
        Ok(Self {
            config,
            runtime: Some(runtime),
            state: Mutex::new(State::default()),
            pid: std::process::id(),
        })
    }

    /// The configuration this host was made with.
    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    fn runtime(&self) -> &Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the host")
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether this process is the one that made the host (not a forked child).
    pub fn is_owned_by_this_process(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Registers on the current connection, starting a compiler if there is
    /// none or the current one is closing or failed.
    fn register<T>(
        &self,
        register: impl Fn(&Connection) -> Result<Registration, RegisterError>,
        start: impl FnOnce(Arc<Connection>, Registration) -> Result<T, HostError>,
    ) -> Result<T, HostError> {
        let (connection, registration) = {
            let mut state = self.lock();
            if state.closed {
                return Err(HostError::Closed);
            }
            let current = state.connection.clone().filter(|c| c.is_open());
            let registered = current.and_then(|c| register(&c).ok().map(|r| (c, r)));
            match registered {
                Some(pair) => pair,
                None => {
                    // The old connection (if any) is closing or failed; its
                    // tasks finish it on their own.
                    let connection = Connection::start(
                        &self.config.command,
                        self.runtime().handle(),
                        self.config.idle_timeout,
                    )?;
                    state.connection = Some(connection.clone());
                    let registration = register(&connection).map_err(|error| match error {
                        RegisterError::Failed(error) => error,
                        RegisterError::Closing => HostError::Closed,
                    })?;
                    (connection, registration)
                }
            }
        };
        start(connection, registration)
    }

    /// Starts a compilation and sends its request.
    pub fn compile(&self, request: &CompileRequest) -> Result<Compilation, HostError> {
        self.register(
            Connection::register_compilation,
            |connection, registration| Compilation::start(connection, registration, request),
        )
    }

    /// Sends a `VersionRequest`.
    pub fn version(&self) -> Result<VersionQuery, HostError> {
        self.register(Connection::register_version, VersionQuery::start)
    }

    /// The compiler process currently connected, if any.
    pub fn compiler_pid(&self) -> Option<u32> {
        self.lock()
            .connection
            .as_ref()
            .filter(|c| c.is_open())
            .map(|c| c.pid())
    }

    /// Closes the compiler (failing what is in flight with "closed compiler")
    /// and refuses further work. Blocks until the compiler has exited.
    pub fn close(&self) {
        let connection = {
            let mut state = self.lock();
            state.closed = true;
            state.connection.take()
        };
        if let Some(connection) = connection {
            connection.close(HostError::Closed, CLOSE_GRACE);
        }
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let state = std::mem::take(self.state.get_mut().unwrap_or_else(PoisonError::into_inner));
        if !self.is_owned_by_this_process() {
            // A forked child: the runtime's threads, its wakers and the
            // compiler belong to the parent. Leak all of it rather than join,
            // wake or signal anything of the parent's.
            std::mem::forget(state);
            std::mem::forget(self.runtime.take());
            return;
        }
        if let Some(connection) = state.connection {
            connection.close_detached();
        }
        if let Some(runtime) = self.runtime.take() {
            // Tasks are cancelled at their next await; nothing blocks on them.
            runtime.shutdown_background();
        }
    }
}
