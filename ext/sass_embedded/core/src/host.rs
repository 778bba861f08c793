//! The host: what a `Sass::Compiler` holds. It owns an executor (for the
//! background work, see [`crate::executor`]) and a pool of compiler
//! processes (connections): it starts one on first use, starts more when
//! every running compilation slot is taken, lets extra ones stop when idle,
//! replaces crashed ones, and closes them all on request.
//!
//! A Dart Sass compiler runs at most [`SLOTS_PER_COMPILER`] compilations at a
//! time and queues the rest; a compilation suspended in a host callback keeps
//! its slot. A compile *nested* inside a callback therefore never waits for a
//! slot of a full compiler: it gets a compiler with a free slot, started for
//! it if need be, even beyond `max_processes`. That is what makes nesting to
//! any depth deadlock-free. Top-level compiles beyond the limit queue in the
//! least loaded compiler, where nothing they wait for can be waiting for them.
//!
//! Each host has its own executor so that a forked child never touches its
//! parent's threads: after `fork` the child's copy of a host is leaked, not
//! dropped, and the Ruby layer gives the child a new host. Every live host of
//! the process can be closed at once ([`Host::close_all`]), which the Ruby
//! layer does at exit.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use crate::compilation::{Compilation, VersionQuery};
use crate::connection::{Connection, Patience, Timeouts};
use crate::dispatcher::DispatchMode;
use crate::dispatcher::{RegisterError, Registration};
use crate::error::HostError;
use crate::executor::{Executor, ExecutorKind};
use crate::process::CompilerCommand;
use crate::protocol::inbound_message::CompileRequest;
use crate::wait::Waker;

/// How long [`Host::close`] lets an idle compiler exit on its own before
/// killing it.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How long [`Host::close_all`] waits, in all, to reap the compilers it
/// killed (they are gone in a few milliseconds; the rest stay zombies until
/// the process exits).
pub const EXIT_REAP: Duration = Duration::from_millis(100);

/// How many compilations a Dart Sass compiler runs at once (its isolate pool:
/// 15 on 64-bit platforms, 7 on 32-bit ones).
pub const SLOTS_PER_COMPILER: usize = if cfg!(target_pointer_width = "64") {
    15
} else {
    7
};

/// How long a starting compiler has to answer the version handshake, unless
/// configured otherwise.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a compiler started beyond the first stays up without work.
pub const EXTRA_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How a host starts and keeps its compilers.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The command that starts a compiler.
    pub command: CompilerCommand,
    /// Close the first compiler after this long with nothing in flight (it is
    /// restarted on demand). Extra compilers close after at most
    /// [`EXTRA_IDLE_TIMEOUT`].
    pub idle_timeout: Option<Duration>,
    /// How many compilers top-level compiles may use (nested compiles may
    /// start more, see the module docs). At least 1.
    pub max_processes: usize,
    /// How long a starting compiler has to answer the version handshake.
    pub startup_timeout: Duration,
    /// How compilations share a compiler.
    pub dispatch: DispatchMode,
    /// Where the background work runs.
    pub executor: ExecutorKind,
    /// How long waiting callers sleep unwoken.
    pub patience: Patience,
}

impl HostConfig {
    /// A configuration with no idle timeout and the default process limit.
    pub fn new(command: CompilerCommand) -> Self {
        Self {
            command,
            idle_timeout: None,
            max_processes: default_max_processes(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            dispatch: DispatchMode::Multiplexed,
            executor: ExecutorKind::default(),
            patience: Patience::default(),
        }
    }
}

/// The default limit on compilers for top-level compiles: one per core, at
/// least two.
pub fn default_max_processes() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(2)
        .max(2)
}

#[derive(Debug, Default)]
struct State {
    /// The compilers in service.
    connections: Vec<Arc<Connection>>,
    /// Compilers out of service (closing, failed) whose process may still
    /// run: closing the host waits for them too.
    retiring: Vec<Arc<Connection>>,
    closed: bool,
}

impl State {
    /// Takes compilers that are closing or failed out of service.
    fn retire(&mut self) {
        let (open, closing): (Vec<_>, Vec<_>) = std::mem::take(&mut self.connections)
            .into_iter()
            .partition(|connection| connection.is_open());
        self.connections = open;
        self.retiring.extend(closing);
        self.retiring.retain(|connection| !connection.has_exited());
    }

    /// Every compiler, in service or retiring, leaving the pool empty.
    fn take_all(&mut self) -> Vec<Arc<Connection>> {
        let mut all = std::mem::take(&mut self.connections);
        all.append(&mut self.retiring);
        all
    }
}

/// The pool of compilers, shared by the host and its compilations (which
/// may need a compiler again, see [`Compilation`]).
#[derive(Debug)]
pub struct Pool {
    config: HostConfig,
    executor: Arc<dyn Executor>,
    state: Mutex<State>,
    /// The fork generation the pool was made in (see
    /// [`crate::fork::generation`]).
    generation: u64,
}

/// Every pool of this process, for [`Host::close_all`].
static LIVE: Mutex<Vec<Weak<Pool>>> = Mutex::new(Vec::new());

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a compiler and adds it to the pool.
    fn start_connection(self: &Arc<Self>, state: &mut State) -> Result<Arc<Connection>, HostError> {
        let idle = if state.connections.is_empty() {
            self.config.idle_timeout
        } else {
            Some(
                self.config
                    .idle_timeout
                    .map_or(EXTRA_IDLE_TIMEOUT, |idle| idle.min(EXTRA_IDLE_TIMEOUT)),
            )
        };
        let timeouts = Timeouts {
            idle,
            startup: self.config.startup_timeout,
            patience: self.config.patience,
        };
        let pool = Arc::downgrade(self);
        let on_end = Box::new(move || {
            if let Some(pool) = pool.upgrade() {
                pool.prune();
            }
        });
        let connection = Connection::start(&self.config.command, &self.executor, timeouts, on_end)?;
        state.connections.push(connection.clone());
        Ok(connection)
    }

    /// Lets go of compilers that ended, and so of their descriptors (called
    /// on the executor's thread when one ends). Skipped if the pool is busy:
    /// whoever holds it retires them anyway, and may be waiting for this
    /// thread to start a compiler.
    fn prune(&self) {
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        state.retire();
    }

    /// Picks a compiler for a compilation and registers it there, with
    /// `waker` to wake its caller. With `may_start` false, returns `Ok(None)`
    /// instead of starting a compiler (or of waiting for the pool's lock).
    fn register_compilation(
        self: &Arc<Self>,
        nested: bool,
        may_start: bool,
        waker: &Waker,
    ) -> Result<Option<(Arc<Connection>, Registration)>, HostError> {
        let mut state = if may_start {
            self.lock()
        } else {
            match self.state.try_lock() {
                Ok(state) => state,
                Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return Ok(None),
            }
        };
        if state.closed {
            return Err(HostError::Closed);
        }
        // Closing and failed compilers finish on their own.
        state.retire();

        // In the wait_for mode top-level compiles take turns under the baton,
        // so they all go to the first compiler, whatever its load (compiles
        // waiting for their turn are registered there already).
        if self.config.dispatch == DispatchMode::WaitFor && !nested {
            if let Some(connection) = state.connections.first() {
                if let Ok(registration) = connection.register_compilation(waker.clone()) {
                    return Ok(Some((connection.clone(), registration)));
                }
            }
        }
        // The first compiler with a free slot: packing work onto the first
        // ones lets the extra ones go idle and stop.
        for connection in &state.connections {
            if connection.load() < SLOTS_PER_COMPILER {
                if let Ok(registration) = connection.register_compilation(waker.clone()) {
                    return Ok(Some((connection.clone(), registration)));
                }
            }
        }
        // At the limit, a top-level compile may queue in a compiler.
        let queue_in_least_loaded = |state: &State| {
            let least_loaded = state
                .connections
                .iter()
                .min_by_key(|connection| connection.load())?;
            let registration = least_loaded.register_compilation(waker.clone()).ok()?;
            Some((least_loaded.clone(), registration))
        };
        if !nested && state.connections.len() >= self.config.max_processes.max(1) {
            if let Some(queued) = queue_in_least_loaded(&state) {
                return Ok(Some(queued));
            }
        }
        if !may_start {
            return Ok(None);
        }
        let connection = match self.start_connection(&mut state) {
            Ok(connection) => connection,
            // Out of descriptors, a top-level compile queues in a running
            // compiler instead of failing (a nested one cannot: the caller
            // waits and tries again, see `HostError::is_out_of_descriptors`).
            Err(error) if error.is_out_of_descriptors() && !nested => {
                return queue_in_least_loaded(&state).map(Some).ok_or(error);
            }
            Err(error) => return Err(error),
        };
        let registration = connection
            .register_compilation(waker.clone())
            .map_err(registration_error)?;
        Ok(Some((connection, registration)))
    }

    /// How many compilers top-level compiles may use.
    pub(crate) fn max_processes(&self) -> usize {
        self.config.max_processes.max(1)
    }

    /// A compiler and a registration on it for a compilation, starting a
    /// compiler if need be (blocking meanwhile).
    pub(crate) fn register(
        self: &Arc<Self>,
        nested: bool,
        waker: Waker,
    ) -> Result<(Arc<Connection>, Registration), HostError> {
        Ok(self
            .register_compilation(nested, true, &waker)?
            .expect("a compiler is started when none fits"))
    }

    /// Starts a compilation on a compiler `register` picked. A compiler that
    /// died between compiles refuses the request (its input is closed), and
    /// the compilation goes to another one.
    fn compile(
        self: &Arc<Self>,
        request: &CompileRequest,
        nested: bool,
        may_start: bool,
        waker: &Waker,
    ) -> Result<Option<Compilation>, HostError> {
        let wait_for = self.config.dispatch == DispatchMode::WaitFor && !nested;
        let mut may_refuse = true;
        loop {
            let Some((connection, registration)) =
                self.register_compilation(nested, may_start, waker)?
            else {
                return Ok(None);
            };
            match Compilation::start(
                self.clone(),
                connection,
                registration,
                waker.clone(),
                request,
                nested,
                wait_for,
                may_refuse,
            ) {
                Ok(compilation) => return Ok(Some(compilation)),
                // Once: a second compiler that refuses is reported as it ends.
                Err(_) => may_refuse = false,
            }
        }
    }

    fn close(&self) {
        let connections = {
            let mut state = self.lock();
            state.closed = true;
            state.take_all()
        };
        for connection in &connections {
            connection.fail_and_close(HostError::Closed);
        }
        for connection in connections {
            connection.close(HostError::Closed, CLOSE_GRACE);
        }
        // Nothing is left for the executor to do: give its thread and
        // descriptors back now rather than when the host is dropped.
        self.executor.shutdown();
    }
}

impl Pool {
    /// Like [`close`](Self::close), for the end of the process: kills the
    /// compilers (nobody will want their work) and returns them to be reaped.
    fn kill_all(&self) -> Vec<Arc<Connection>> {
        let connections = {
            let mut state = self.lock();
            state.closed = true;
            state.take_all()
        };
        for connection in &connections {
            connection.kill();
        }
        connections
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A forked child never gets here (see `Host`'s drop); if it did, it
        // must not kill its parent's compilers or stop its parent's executor.
        if self.generation != crate::fork::generation() {
            return;
        }
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        for connection in state.take_all() {
            connection.close_detached();
        }
        // Tasks are dropped at their next await; nothing blocks on them.
        self.executor.shutdown();
    }
}

/// A pool of compilers: lazily started, grown on demand, restarted after
/// failures.
#[derive(Debug)]
pub struct Host {
    pool: Arc<Pool>,
}

impl Host {
    /// A host with its own executor; no compiler is started yet.
    pub fn new(config: HostConfig) -> std::io::Result<Self> {
        let executor = config.executor.start()?;
        let pool = Arc::new(Pool {
            config,
            executor,
            state: Mutex::new(State::default()),
            generation: crate::fork::generation(),
        });
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|pool| pool.strong_count() > 0);
        live.push(Arc::downgrade(&pool));
        Ok(Self { pool })
    }

    /// The configuration this host was made with.
    pub fn config(&self) -> &HostConfig {
        &self.pool.config
    }

    /// Whether this process is the one that made the host (not a forked child).
    pub fn is_owned_by_this_process(&self) -> bool {
        self.pool.generation == crate::fork::generation()
    }

    /// Starts a compilation and sends its request. `nested` says the caller
    /// is inside a callback of another compilation, which holds a compiler
    /// slot until this one finishes; `waker` wakes the caller when it parks.
    pub fn compile(
        &self,
        request: &CompileRequest,
        nested: bool,
        waker: &Waker,
    ) -> Result<Compilation, HostError> {
        Ok(self
            .pool
            .compile(request, nested, true, waker)?
            .expect("a compiler is started when none fits"))
    }

    /// Like [`compile`](Self::compile), but only on a running compiler and
    /// without waiting for the pool's lock: `None` means [`compile`]
    /// (which may block starting a compiler) is needed. Lets a caller that
    /// holds a lock of its own (Ruby's GVL) skip releasing it in the common
    /// case.
    ///
    /// [`compile`]: Self::compile
    pub fn try_compile(
        &self,
        request: &CompileRequest,
        nested: bool,
        waker: &Waker,
    ) -> Option<Result<Compilation, HostError>> {
        self.pool.compile(request, nested, false, waker).transpose()
    }

    /// Sends a `VersionRequest` to a running compiler (starting one if none);
    /// `waker` wakes the caller when it parks.
    pub fn version(&self, waker: &Waker) -> Result<VersionQuery, HostError> {
        // As for compiles: a compiler that died between requests refuses
        // this one, and another is asked (a fresh one, the second time).
        let mut refused = None;
        for fresh in [false, true] {
            let (connection, registration) = {
                let mut state = self.pool.lock();
                if state.closed {
                    return Err(HostError::Closed);
                }
                state.retire();
                let existing = (!fresh)
                    .then(|| {
                        state.connections.iter().find_map(|c| {
                            c.register_version(waker.clone())
                                .ok()
                                .map(|r| (c.clone(), r))
                        })
                    })
                    .flatten();
                match existing {
                    Some(pair) => pair,
                    None => {
                        let connection = self.pool.start_connection(&mut state)?;
                        let registration = connection
                            .register_version(waker.clone())
                            .map_err(registration_error)?;
                        (connection, registration)
                    }
                }
            };
            match VersionQuery::start(connection, registration, waker.clone(), !fresh) {
                Ok(query) => return Ok(query),
                Err(error) => refused = Some(error),
            }
        }
        Err(refused.expect("two attempts were made"))
    }

    /// How many background tasks the host's executor keeps alive (a few
    /// per running compiler), for tests and diagnostics.
    pub fn background_tasks(&self) -> usize {
        self.pool.executor.live_tasks()
    }

    /// The process ids of the running compilers, first started first.
    pub fn compiler_pids(&self) -> Vec<u32> {
        self.pool
            .lock()
            .connections
            .iter()
            .filter(|c| c.is_open())
            .map(|c| c.pid())
            .collect()
    }

    /// How many compilations the running compilers hold, detached ones
    /// included.
    pub fn compilations_in_flight(&self) -> usize {
        self.pool
            .lock()
            .connections
            .iter()
            .filter(|c| c.is_open())
            .map(|c| c.load())
            .sum()
    }

    /// The process id of the first running compiler, if any.
    pub fn compiler_pid(&self) -> Option<u32> {
        self.compiler_pids().first().copied()
    }

    /// Closes every compiler (failing what is in flight with "closed
    /// compiler") and refuses further work. Blocks until they have exited: a
    /// busy compiler is killed at once, an idle one gets a moment to exit.
    pub fn close(&self) {
        self.pool.close();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.pool.lock().closed
    }

    /// Closes every live host of this process (made in this process, not
    /// inherited through fork), for the end of the process: kills every
    /// compiler, and reaps those that are gone within [`EXIT_REAP`], so that
    /// a program stopped by a signal ends at once.
    pub fn close_all() {
        let live: Vec<Arc<Pool>> = LIVE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|pool| pool.generation == crate::fork::generation())
            .collect();
        let killed: Vec<Arc<Connection>> = live.iter().flat_map(|pool| pool.kill_all()).collect();
        let deadline = std::time::Instant::now() + EXIT_REAP;
        for connection in killed {
            while !connection.has_exited() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

/// A fresh connection refused a registration: it already failed or closed.
fn registration_error(error: RegisterError) -> HostError {
    match error {
        RegisterError::Failed(error) => error,
        RegisterError::Closing => HostError::Closed,
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if !self.is_owned_by_this_process() {
            // A forked child: the executor's thread, its wakers and the
            // compilers belong to the parent. Leak all of it rather than
            // stop, wake or signal anything of the parent's.
            std::mem::forget(self.pool.clone());
        }
    }
}
