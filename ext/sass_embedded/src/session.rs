//! One compilation, driven on the Ruby thread that asked for it.
//!
//! The thread sends the request, then waits for its compilation's messages
//! as [`crate::waiting`] says. When the compiler asks for something (a function
//! call, a canonicalization, an import, a file import) or reports a log event,
//! the thread takes the GVL back and calls the per-compile Ruby session
//! (`Sass::Compiler::Session`) on itself, so callbacks see the caller's
//! thread-locals and a nested compile is just another compilation.
//!
//! Failures of the callbacks split in two. A `StandardError` becomes the
//! answer the compiler gets (and so, usually, a `Sass::CompileError`). Anything
//! else — `Thread#kill`, `Timeout`'s throw, `Interrupt`, `exit`, `throw` —
//! propagates to the caller unchanged; dropping the compilation handle on the
//! way out answers what the compiler is still waiting for and detaches the
//! compilation, so the compiler finishes it without anyone listening.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use magnus::{error::ErrorType, prelude::*, Error, IntoValue, RArray, Ruby, Value};
use sass_embedded_core::dispatcher::Request;
use sass_embedded_core::protocol::{
    inbound_message::{self, function_call_response, CompileRequest, FunctionCallResponse},
    outbound_message::{self, function_call_request::Identifier, FunctionCallRequest},
};
use sass_embedded_core::{Compilation, Host, Received, Step, VersionQuery};

use crate::conversion::{self, value};
use crate::errors;
use crate::gvl;
use crate::waiting::{self, Waiting};

/// How long a compile waits for a descriptor (or a compiler's free slot)
/// when the process has none left to start a compiler with, before it fails
/// with `Errno::EMFILE`.
const OUT_OF_DESCRIPTORS_PATIENCE: Duration = Duration::from_secs(30);

/// Tags compiler functions, mixins and modules with the compilation that
/// made them; never reused within a process.
static NEXT_COMPILATION_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The fiber-local variable (`Thread.current[...]`, which Ruby keeps per
/// fiber) that counts how many callbacks the current fiber is inside. A
/// compile started while it is above zero is nested: its caller's
/// compilation holds a compiler slot until it finishes. Per fiber, not per
/// thread: under a fiber scheduler, another fiber of the same thread that
/// compiles while this one waits in a callback is not nested.
const CALLBACK_DEPTH: &str = "__sass_embedded_callback_depth";

fn callback_depth(ruby: &Ruby) -> usize {
    ruby.thread_current()
        .local_aref::<_, Option<usize>>(CALLBACK_DEPTH)
        .ok()
        .flatten()
        .unwrap_or(0)
}

fn set_callback_depth(ruby: &Ruby, depth: usize) -> Result<(), Error> {
    let depth = (depth > 0).then_some(depth);
    ruby.thread_current().local_aset(CALLBACK_DEPTH, depth)
}

/// Calls `method` of the Ruby session, marking the fiber as in a callback.
fn call_session<A: magnus::ArgList>(session: Value, method: &str, args: A) -> Result<Value, Error> {
    let ruby = Ruby::get_with(session);
    let depth = callback_depth(&ruby);
    set_callback_depth(&ruby, depth + 1)?;
    let result = session.funcall(method, args);
    // Restored whatever the callback did, even if it raised.
    set_callback_depth(&ruby, depth)?;
    result
}

/// Something a Ruby thread waits on: a compilation or a version request.
trait Waitable {
    fn poll(&mut self) -> Step;
}

impl Waitable for Compilation {
    fn poll(&mut self) -> Step {
        Compilation::poll(self)
    }
}

impl Waitable for VersionQuery {
    fn poll(&mut self) -> Step {
        VersionQuery::poll(self)
    }
}

/// Waits for the next message or failure, reading the compiler's output
/// on this thread when it is this thread's turn, and sleeping as
/// [`crate::waiting`] says otherwise; after each step, wakes the callers
/// whose messages this thread routed. An interrupt that raises or throws
/// meanwhile is returned as the error.
fn wait(ruby: &Ruby, waitable: &mut impl Waitable, waiting: &Waiting) -> Result<Received, Error> {
    loop {
        let step = waitable.poll();
        waiting::wake_queued(ruby)?;
        match step {
            Step::Ready(received) => return Ok(received),
            Step::Wait(wait) => waiting.wait(ruby, wait)?,
        }
    }
}

/// Runs `func` (which never touches Ruby) without the GVL and without an
/// unblocking function: for short, bounded work like starting a compiler.
fn blocking<R>(func: impl FnOnce() -> R) -> Result<R, Error> {
    let mut func = Some(func);
    loop {
        match gvl::without_gvl(|| func.take().map(|func| func())) {
            Some(Ok(Some(result))) => return Ok(result),
            Some(Ok(None)) => unreachable!("the function is taken only when it runs"),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            // An interrupt was pending, so `func` did not run: handle the
            // interrupt (which may raise) and try again.
            None => gvl::check_interrupts()?,
        }
    }
}

/// Compiles `request`, running callbacks through `session`. Returns a
/// `Sass::CompileResult` or a `Sass::CompileError` (for the Ruby layer to
/// raise).
pub fn compile(
    ruby: &Ruby,
    host: &Host,
    request: CompileRequest,
    session: Value,
) -> Result<Value, Error> {
    let waiting = Waiting::new(ruby)?;
    let result = run(ruby, host, request, session, &waiting);
    // Also when the compile was interrupted: its end may have woken others.
    let finished = waiting.finish(ruby);
    let result = result?;
    finished.map(|()| result)
}

fn run(
    ruby: &Ruby,
    host: &Host,
    request: CompileRequest,
    session: Value,
    waiting: &Waiting,
) -> Result<Value, Error> {
    let nested = callback_depth(ruby) > 0;
    let waker = waiting.core_waker();
    let deadline = Instant::now() + OUT_OF_DESCRIPTORS_PATIENCE;
    let mut pause = Duration::from_millis(10);
    let mut compilation = loop {
        // Usually a running compiler has a free slot and this takes
        // microseconds; only starting a compiler (or waiting for another
        // thread starting one) is worth releasing the GVL for.
        let started = match host.try_compile(&request, nested, &waker) {
            Some(started) => started,
            None => blocking(|| host.compile(&request, nested, &waker))?,
        };
        match started {
            Ok(compilation) => break compilation,
            // Every descriptor of the process is taken and no running
            // compiler can take this compile: wait for a compile to end or a
            // descriptor to be closed, and try again.
            Err(error) if error.is_out_of_descriptors() && Instant::now() < deadline => {
                ruby.module_kernel()
                    .funcall::<_, _, Value>("sleep", (pause.as_secs_f64(),))?;
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Err(error) => return Err(errors::host_error(ruby, &error)),
        }
    };
    drop(request);
    let context = value::Context {
        compilation: NEXT_COMPILATION_TOKEN.fetch_add(1, Ordering::Relaxed),
        session,
        nesting: Cell::new(0),
    };
    loop {
        let message = match wait(ruby, &mut compilation, waiting)? {
            Received::Message(message) => message,
            Received::Failed(error) => return errors::compile_failure(ruby, &error),
        };
        use outbound_message::Message;
        let reply = match message {
            Message::CompileResponse(response) => {
                return conversion::compile_response(ruby, response);
            }
            Message::LogEvent(event) => {
                // A logger that fails fails the compile: its exception, of
                // whatever class, reaches the caller.
                call_session(
                    session,
                    "log_event",
                    conversion::log_event_args(ruby, &event)?,
                )?;
                continue;
            }
            Message::FunctionCallRequest(request) => function_call(ruby, &context, request)?,
            Message::CanonicalizeRequest(request) => {
                let id = request.id;
                answer(
                    ruby,
                    call_session(
                        session,
                        "canonicalize_request",
                        conversion::canonicalize_args(ruby, &request),
                    )
                    .and_then(|answer| conversion::canonicalize_response(id, answer)),
                    Request::Canonicalize(id),
                )?
            }
            Message::ImportRequest(request) => {
                let id = request.id;
                answer(
                    ruby,
                    call_session(
                        session,
                        "import_request",
                        conversion::import_args(ruby, &request),
                    )
                    .and_then(|answer| conversion::import_response(ruby, id, answer)),
                    Request::Import(id),
                )?
            }
            Message::FileImportRequest(request) => {
                let id = request.id;
                answer(
                    ruby,
                    call_session(
                        session,
                        "file_import_request",
                        conversion::file_import_args(ruby, &request),
                    )
                    .and_then(|answer| conversion::file_import_response(id, answer)),
                    Request::FileImport(id),
                )?
            }
            // The dispatcher keeps these from compilations.
            Message::VersionResponse(_) | Message::Error(_) => {
                unreachable!(
                    "the dispatcher routes no VersionResponse or ProtocolError to a compilation"
                )
            }
        };
        // If the compiler is gone, the next wait says how.
        compilation.respond(reply);
    }
}

/// The answer for the compiler: the callback's, or an error response to
/// `request` if the callback failed (`callback_failure`). Any other
/// exception propagates.
fn answer(
    ruby: &Ruby,
    result: Result<inbound_message::Message, Error>,
    request: Request,
) -> Result<inbound_message::Message, Error> {
    match result {
        Ok(message) => Ok(message),
        Err(error) if callback_failure(ruby, &error) => {
            Ok(request.error_response(describe(&error)))
        }
        Err(error) => Err(error),
    }
}

/// Whether `error`, raised while a callback ran, is the callback's failure,
/// which the compiler is told of (the compile goes on), rather than an
/// interrupt of the thread, which propagates as it would from the wait of the
/// established gem, whose callbacks run on another thread: a `StandardError`,
/// except a stray timer's `Timeout::Error`.
fn callback_failure(ruby: &Ruby, error: &Error) -> bool {
    error.is_kind_of(ruby.exception_standard_error())
        && !matches!(error.error_type(), ErrorType::Exception(exception) if stray_timer(exception))
}

/// Whether `exception` is what the timer of `Timeout.timeout` raises into its
/// thread under timeout 0.2 and 0.3 (Ruby 3.1 and 3.2): a `Timeout::Error`
/// marked with the thread and the catch tag it is thrown to. It reaches a
/// callback as an exception only when the block that armed it no longer
/// catches it: a timer left running when an interrupt struck the block's own
/// set-up. (Timeout 0.4 raises an `Exception`, not a `StandardError`.) Reads
/// instance variables only: no Ruby code runs, so no other interrupt can
/// arrive and be lost here.
fn stray_timer(exception: &magnus::Exception) -> bool {
    let Some(object) = magnus::RObject::from_value(exception.as_value()) else {
        return false;
    };
    ["@thread", "@catch_value"].into_iter().all(|name| {
        object
            .ivar_get::<_, Value>(name)
            .is_ok_and(|value| !value.is_nil())
    })
}

/// The message of a Ruby exception, for the compiler's error text.
fn describe(error: &Error) -> String {
    match error.error_type() {
        ErrorType::Error(_, message) => message.to_string(),
        // As the established gem tells the compiler: the exception's
        // detailed message, unhighlighted ("bad input (ArgumentError)").
        ErrorType::Exception(exception) => {
            let ruby = Ruby::get_with(*exception);
            ruby.get_inner(&conversion::SESSION)
                .funcall::<_, _, String>("describe", (*exception,))
                .or_else(|_| exception.funcall::<_, _, String>("message", ()))
                .unwrap_or_else(|_| exception.inspect())
        }
        ErrorType::Jump(tag) => format!("non-local exit ({tag})"),
    }
}

fn function_call(
    ruby: &Ruby,
    context: &value::Context,
    request: FunctionCallRequest,
) -> Result<inbound_message::Message, Error> {
    let lists = value::ArgumentLists::new(ruby);
    let result = match call_function(ruby, context, &request, &lists) {
        Ok(value) => function_call_response::Result::Success(value),
        Err(Failure::Answer(message)) => function_call_response::Result::Error(message),
        Err(Failure::Propagate(error)) => return Err(error),
    };
    Ok(inbound_message::Message::FunctionCallResponse(
        FunctionCallResponse {
            id: request.id,
            result: Some(result),
            accessed_argument_lists: lists.accessed()?,
        },
    ))
}

/// How a function call went wrong.
enum Failure {
    /// Tell the compiler: the function failed (a `StandardError` raised by the
    /// function, or a value the host cannot convert).
    Answer(String),
    /// Propagate to the caller: an interrupt, `exit`, `throw`, or an exception
    /// raised while the host itself was running Ruby code.
    Propagate(Error),
}

/// Errors the host made itself (unconvertible values) are the function's
/// failure; Ruby exceptions raised while the host converts values are not
/// the function's doing, and propagate.
fn conversion_failure(error: Error) -> Failure {
    match error.error_type() {
        ErrorType::Error(..) => Failure::Answer(describe(&error)),
        _ => Failure::Propagate(error),
    }
}

fn call_function(
    ruby: &Ruby,
    context: &value::Context,
    request: &FunctionCallRequest,
    lists: &value::ArgumentLists,
) -> Result<sass_embedded_core::protocol::Value, Failure> {
    let arguments = ruby.ary_new_capa(request.arguments.len());
    for argument in &request.arguments {
        let argument =
            value::to_ruby(ruby, argument, context, lists).map_err(conversion_failure)?;
        arguments.push(argument).map_err(Failure::Propagate)?;
    }
    let identifier = match &request.identifier {
        Some(Identifier::Name(name)) => ruby.str_new(name).as_value(),
        Some(Identifier::FunctionId(id)) => id.into_value_with(ruby),
        None => unreachable!("the dispatcher refuses function calls without identifier"),
    };
    let returned = match call_session(
        context.session,
        "function_call_request",
        (identifier, arguments),
    ) {
        Ok(returned) => returned,
        Err(error) if callback_failure(ruby, &error) => {
            return Err(Failure::Answer(describe(&error)))
        }
        Err(error) => return Err(Failure::Propagate(error)),
    };
    // What the function returned is the function's doing: a value that
    // cannot be sent fails the call, whether the host refused it or Ruby
    // raised a `StandardError` while it was read (values check little when
    // made, as the established gem's, and fail where they are used).
    value::from_ruby(ruby, returned, context).map_err(|error| match error.error_type() {
        ErrorType::Exception(_) if callback_failure(ruby, &error) => {
            Failure::Answer(describe(&error))
        }
        _ => conversion_failure(error),
    })
}

/// Asks the compiler for its version: `[protocol_version, compiler_version,
/// implementation_version, implementation_name]`.
pub fn version(ruby: &Ruby, host: &Host) -> Result<RArray, Error> {
    let waiting = Waiting::new(ruby)?;
    let result = ask_version(ruby, host, &waiting);
    let finished = waiting.finish(ruby);
    let result = result?;
    finished.map(|()| result)
}

fn ask_version(ruby: &Ruby, host: &Host, waiting: &Waiting) -> Result<RArray, Error> {
    let waker = waiting.core_waker();
    let mut query =
        blocking(|| host.version(&waker))?.map_err(|error| errors::host_error(ruby, &error))?;
    match wait(ruby, &mut query, waiting)? {
        Received::Message(outbound_message::Message::VersionResponse(response)) => {
            let answer = ruby.ary_new_capa(4);
            answer.push(response.protocol_version)?;
            answer.push(response.compiler_version)?;
            answer.push(response.implementation_version)?;
            answer.push(response.implementation_name)?;
            Ok(answer)
        }
        Received::Failed(error) => Err(errors::host_error(ruby, &error)),
        Received::Message(_) => {
            unreachable!("version requests receive only a VersionResponse or a failure")
        }
    }
}
