//! `Sass::Embedded::Host`: the Ruby object a `Sass::Compiler` holds. It wraps
//! the core [`Host`] (a Rust value, no Ruby objects inside) and exposes
//! compile, version and close to the Ruby layer.

use std::time::Duration;

use magnus::{
    prelude::*, Error, RArray, RHash, RString, Ruby, StaticSymbol, Symbol, TryConvert, Value,
};
use prost::Message;
use sass_embedded_core::dispatcher::DispatchMode;
use sass_embedded_core::wait::Waitable;
use sass_embedded_core::{CompilerCommand, ExecutorKind, Host, HostConfig};

use crate::errors::{self, guard};
use crate::{conversion, gvl, session};

/// A duration given in seconds, or nil for none.
fn seconds(value: Option<Value>) -> Result<Option<Duration>, Error> {
    let seconds = value.map(f64::try_convert).transpose()?;
    // Sass::Compiler passes positive numbers only; one too large for a
    // Duration (or infinite) is no limit.
    Ok(seconds
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|duration| !duration.is_zero()))
}

/// The entry of `table` named by the Symbol `value` (Sass::Compiler offers
/// only these: `Host::EXECUTORS`, `Host::DISPATCHES`).
fn named<T: Copy>(
    ruby: &Ruby,
    option: &str,
    value: Value,
    table: &[(&'static str, T)],
) -> Result<T, Error> {
    let name = Symbol::try_convert(value)?.name()?.into_owned();
    table
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, entry)| *entry)
        .ok_or_else(|| errors::argument_error(ruby, format!("no {option} named :{name}")))
}

/// The names of `table`'s entries, as a frozen Array of Symbols.
fn names<T>(ruby: &Ruby, table: &[(&'static str, T)]) -> RArray {
    let names = ruby.ary_from_iter(table.iter().map(|(name, _)| ruby.sym_new(*name)));
    names.freeze();
    names
}

/// The native half of a `Sass::Compiler`.
#[magnus::wrap(class = "Sass::Embedded::Host", free_immediately, size)]
pub struct RubyHost(Host);

impl RubyHost {
    /// `Host.new(command, options)`: `command` is the compiler's program and
    /// the arguments before `--embedded`; `options` may hold `directory`
    /// (where the compiler runs, `/` by default), `idle_timeout`
    /// (seconds: close the first compiler after that long unused),
    /// `max_processes` (the limit on compilers for top-level compiles),
    /// `startup_timeout` (seconds a compiler may take to answer at start),
    /// `dispatch` (`:multiplexed` or `:wait_for`) and `executor` (`:tokio` or
    /// `:thread`, where the background work runs). Absent or nil means the
    /// default.
    fn new(ruby: &Ruby, command: RArray, options: RHash) -> Result<Self, Error> {
        guard(ruby, || {
            sass_embedded_core::wait::spin::check_configuration()
                .map_err(|message| errors::argument_error(ruby, message))?;
            let mut parts = command.into_iter().map(crate::conversion::rust_string);
            let program = parts
                .next()
                .ok_or_else(|| errors::argument_error(ruby, "the compiler command is empty"))??;
            let mut command = CompilerCommand::new(program);
            for arg in parts {
                command.args.push(arg?.into());
            }
            let option = |name: &str| options.get(ruby.sym_new(name)).filter(|v| !v.is_nil());
            if let Some(directory) = option("directory") {
                command.directory = crate::conversion::rust_string(directory)?.into();
            }

            // Sass::Compiler#initialize checked every option (one set of
            // rules, with the names offered here): they are only read.
            let mut config = HostConfig::new(command);
            config.idle_timeout = seconds(option("idle_timeout"))?;
            if let Some(startup) = seconds(option("startup_timeout"))? {
                config.startup_timeout = startup;
            }
            if let Some(max) = option("max_processes") {
                config.max_processes = usize::try_convert(max)?.max(1);
            }
            if let Some(executor) = option("executor") {
                config.executor = named(ruby, "executor", executor, ExecutorKind::ALL)?;
            }
            if let Some(dispatch) = option("dispatch") {
                config.dispatch = named(ruby, "dispatch", dispatch, DispatchMode::ALL)?;
            }
            let host = Host::new(config).map_err(|error| {
                Error::new(
                    ruby.exception_runtime_error(),
                    format!("could not start the host's I/O runtime: {error}"),
                )
            })?;
            Ok(Self(host))
        })
    }

    /// Refuses a host made by the parent of a forked process.
    fn owned(&self, ruby: &Ruby) -> Result<&Host, Error> {
        if self.0.is_owned_by_this_process() {
            Ok(&self.0)
        } else {
            Err(Error::new(
                ruby.exception_io_error(),
                "this compiler belongs to the parent of a forked process",
            ))
        }
    }

    /// `host.compile(request, session)`: a `Sass::CompileResult`, or a
    /// `Sass::CompileError` to raise. `request` is `Request#to_a`.
    fn compile(
        ruby: &Ruby,
        rb_self: &Self,
        request: RArray,
        session: Value,
    ) -> Result<Value, Error> {
        guard(ruby, || {
            gvl::ensure_stack(ruby)?;
            let host = rb_self.owned(ruby)?;
            let request = conversion::compile_request(ruby, request)?;
            session::compile(ruby, host, request, session)
        })
    }

    /// `host.compile_plain(options, session)`: as `compile`, from the
    /// options as given (see `conversion::plain`), or nil, with nothing
    /// sent, if they are not plain.
    fn compile_plain(
        ruby: &Ruby,
        rb_self: &Self,
        options: RArray,
        session: Value,
    ) -> Result<Option<Value>, Error> {
        guard(ruby, || {
            gvl::ensure_stack(ruby)?;
            let host = rb_self.owned(ruby)?;
            match conversion::plain::request(ruby, options)? {
                Some(request) => session::compile(ruby, host, request, session).map(Some),
                None => Ok(None),
            }
        })
    }

    /// `Host.encode_request(request)` and `Host.encode_plain(options)`: the
    /// encoded `CompileRequest` `compile` and `compile_plain` would send
    /// (nil for options that are not plain), for the test that both build
    /// the same.
    fn encode_request(ruby: &Ruby, request: RArray) -> Result<RString, Error> {
        guard(ruby, || {
            let request = conversion::compile_request(ruby, request)?;
            Ok(ruby.str_from_slice(&request.encode_to_vec()))
        })
    }

    fn encode_plain(ruby: &Ruby, options: RArray) -> Result<Option<RString>, Error> {
        guard(ruby, || {
            Ok(conversion::plain::request(ruby, options)?
                .map(|request| ruby.str_from_slice(&request.encode_to_vec())))
        })
    }

    /// `host.version`: `[protocol, compiler, implementation version, name]`.
    fn version(ruby: &Ruby, rb_self: &Self) -> Result<RArray, Error> {
        guard(ruby, || {
            gvl::ensure_stack(ruby)?;
            session::version(ruby, rb_self.owned(ruby)?)
        })
    }

    /// `host.close`: fails compilations in flight with "closed compiler" and
    /// waits (without the GVL) for the compiler to exit.
    fn close(ruby: &Ruby, rb_self: &Self) -> Result<(), Error> {
        guard(ruby, || {
            let host = rb_self.owned(ruby)?;
            match gvl::without_gvl(|| host.close()) {
                Some(Ok(())) => Ok(()),
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                // An interrupt was pending: close without releasing the GVL.
                None => {
                    host.close();
                    Ok(())
                }
            }
        })
    }

    /// `host.owned?`: whether this process made the host (not the parent
    /// of a fork), without a system call.
    fn is_owned(&self) -> bool {
        self.0.is_owned_by_this_process()
    }

    /// `host.closed?`
    fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// `host.compiler_pid`: the first running compiler's process id, or nil.
    fn compiler_pid(&self) -> Option<u32> {
        self.0.compiler_pid()
    }

    /// `host.compiler_pids`: the process ids of all running compilers.
    fn compiler_pids(&self) -> Vec<u32> {
        self.0.compiler_pids()
    }

    /// `host.max_processes`: the limit on compilers for top-level compiles.
    fn max_processes(&self) -> usize {
        self.0.config().max_processes
    }

    /// `Host.close_all`: closes every live host of this process (at exit).
    fn close_all() {
        // Never blocks: nothing waits for the compilers to exit.
        Host::close_all();
    }

    /// `host.executor`: the name of the executor (`:tokio`, `:thread`).
    fn executor(ruby: &Ruby, rb_self: &Self) -> StaticSymbol {
        ruby.sym_new(rb_self.0.config().executor.name())
    }

    /// `host.dispatch`: `:multiplexed` or `:wait_for`.
    fn dispatch(ruby: &Ruby, rb_self: &Self) -> StaticSymbol {
        ruby.sym_new(rb_self.0.config().dispatch.name())
    }

    /// `Host.spin_stats`: what this process's spins before sleeping did so
    /// far (see `sass_embedded_core::wait::spin`): `[spins, caught,
    /// seconds, declined, budget, quota, long, paced, waits]` (the budget a
    /// lone caller's spin would have now, in seconds, and the CPU quota the
    /// gate judges by, in CPUs, each `nil` if none; long and paced: waits
    /// not spun because recent answers were too long, or because recent
    /// spins missed; waits: a lone caller's waits that asked whether to
    /// spin), for the benchmark and the tests.
    #[allow(clippy::type_complexity)]
    fn spin_stats() -> (u64, u64, f64, u64, Option<f64>, Option<f64>, u64, u64, u64) {
        let stats = sass_embedded_core::wait::spin::stats();
        (
            stats.spins,
            stats.caught,
            stats.spun.as_secs_f64(),
            stats.declined,
            stats.budget.map(|budget| budget.as_secs_f64()),
            stats.quota,
            stats.long,
            stats.paced,
            stats.waits,
        )
    }

    /// `Host.waitable_fd(waitable)`: Ruby's descriptor for one of the
    /// core's waitables (a socket on Windows), for a fiber's helper to wait
    /// on in its scheduler; given back with `Host.release_fd` once that wait
    /// is over, while the waitable is still open (see `FiberWaker#watch`).
    fn waitable_fd(ruby: &Ruby, waitable: Waitable) -> Result<i32, Error> {
        gvl::acquire_fd(ruby, waitable)
    }

    /// `Host.release_fd(fd)`: see `waitable_fd`.
    fn release_fd(fd: i32) {
        gvl::release_fd(fd);
    }

    /// Defines the class and its methods.
    pub fn define(ruby: &Ruby) -> Result<(), Error> {
        use magnus::{function, method, Module, Object};

        let sass = ruby.define_module("Sass")?;
        let embedded = sass.define_module("Embedded")?;
        let class = embedded.define_class("Host", ruby.class_object())?;
        class.define_singleton_method("new", function!(RubyHost::new, 2))?;
        class.define_method("compile", method!(RubyHost::compile, 2))?;
        class.define_method("compile_plain", method!(RubyHost::compile_plain, 2))?;
        class.define_singleton_method("encode_request", function!(RubyHost::encode_request, 1))?;
        class.define_singleton_method("encode_plain", function!(RubyHost::encode_plain, 1))?;
        class.define_method("version", method!(RubyHost::version, 0))?;
        class.define_method("close", method!(RubyHost::close, 0))?;
        class.define_method("closed?", method!(RubyHost::is_closed, 0))?;
        class.define_method("owned?", method!(RubyHost::is_owned, 0))?;
        class.define_method("compiler_pid", method!(RubyHost::compiler_pid, 0))?;
        class.define_method("compiler_pids", method!(RubyHost::compiler_pids, 0))?;
        class.define_method("max_processes", method!(RubyHost::max_processes, 0))?;
        class.define_method("dispatch", method!(RubyHost::dispatch, 0))?;
        class.define_method("executor", method!(RubyHost::executor, 0))?;
        class.define_singleton_method("close_all", function!(RubyHost::close_all, 0))?;
        class.define_singleton_method("spin_stats", function!(RubyHost::spin_stats, 0))?;
        class.define_singleton_method("waitable_fd", function!(RubyHost::waitable_fd, 1))?;
        class.define_singleton_method("release_fd", function!(RubyHost::release_fd, 1))?;
        // How waiting callers sleep in this build: "epoll" (Linux) or "poll"
        // (elsewhere, and Linux built with the portable-wait feature).
        class.const_set("WAIT_MECHANISM", sass_embedded_core::wait::MECHANISM)?;
        // What Sass::Compiler#initialize accepts for `executor:` and
        // `dispatch:` (this build's: without tokio, no `:tokio`).
        class.const_set("EXECUTORS", names(ruby, ExecutorKind::ALL))?;
        class.const_set("DISPATCHES", names(ruby, DispatchMode::ALL))?;
        // How many compilations one compiler runs at once (Dart Sass's
        // isolate limit: 15, 7 on 32-bit CPUs), for the tests that fill a
        // compiler.
        class.const_set(
            "SLOTS_PER_COMPILER",
            sass_embedded_core::host::SLOTS_PER_COMPILER,
        )?;
        // The wrapped class is looked up lazily, under a lock that would
        // deadlock two threads wrapping their first hosts at once (see
        // `conversion::preload`): look it up now.
        let _ = <RubyHost as magnus::TypedData>::class(ruby);
        Ok(())
    }
}
