//! The core against the real Dart Sass compiler: compile, callbacks,
//! concurrency, abandoned compilations and a killed compiler, with no Ruby.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use sass_embedded_core::dispatcher::DispatchMode;
use sass_embedded_core::protocol::{
    inbound_message::{
        self, compile_request, function_call_response, CompileRequest, FunctionCallResponse,
    },
    outbound_message::{compile_response, CompileResponse, Message},
    value, Value,
};
use sass_embedded_core::{
    CompilerCommand, ExecutorKind, Host, HostConfig, HostError, Patience, Received, Waker,
};

/// The compiler: `SASS_EMBEDDED_COMPILER` (with the arguments before
/// `--embedded` in `SASS_EMBEDDED_COMPILER_ARGS`, `;`-separated: Windows's
/// Dart snapshot), or the one `rake compiler` installs.
fn compiler() -> CompilerCommand {
    let path = std::env::var_os("SASS_EMBEDDED_COMPILER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../lib/sass/embedded/dart-sass/sass")
        });
    assert!(
        path.exists(),
        "no compiler at {}: run `rake compiler` or set SASS_EMBEDDED_COMPILER",
        path.display()
    );
    let mut command = CompilerCommand::new(path);
    if let Some(args) = std::env::var_os("SASS_EMBEDDED_COMPILER_ARGS") {
        let args = args.to_string_lossy().into_owned();
        command.args = args.split(';').map(Into::into).collect();
    }
    command
}

fn host() -> Host {
    host_in(Setup::default())
}

/// How a test's host is made: dispatch mode and executor.
#[derive(Clone, Copy, Debug, Default)]
struct Setup {
    mode: DispatchMode,
    executor: ExecutorKind,
}

fn host_in(setup: Setup) -> Host {
    Host::new(config_in(setup)).expect("an executor")
}

fn config_in(setup: Setup) -> HostConfig {
    let mut config = HostConfig::new(compiler());
    config.dispatch = setup.mode;
    config.executor = setup.executor;
    config
}

/// Runs a test body once per dispatch mode, and (in the multiplexed mode)
/// once per executor this build offers.
macro_rules! in_every_setup {
    ($($name:ident($setup:ident) $body:block)*) => {$(
        mod $name {
            use super::*;

            fn run($setup: Setup) $body

            #[test]
            fn multiplexed() {
                for (name, executor) in ExecutorKind::ALL {
                    eprintln!("executor {name}");
                    run(Setup { mode: DispatchMode::Multiplexed, executor: *executor });
                }
            }

            #[test]
            fn wait_for() {
                run(Setup { mode: DispatchMode::WaitFor, ..Setup::default() });
            }
        }
    )*};
}

fn request(source: &str, functions: &[&str]) -> CompileRequest {
    CompileRequest {
        input: Some(compile_request::Input::String(
            compile_request::StringInput {
                source: source.to_owned(),
                ..Default::default()
            },
        )),
        global_functions: functions.iter().map(|f| (*f).to_owned()).collect(),
        ..Default::default()
    }
}

fn css(response: CompileResponse) -> String {
    match response.result {
        Some(compile_response::Result::Success(success)) => success.css,
        other => panic!("compilation failed: {other:?}"),
    }
}

/// How long a test waits for any one message before it fails.
const PATIENCE: Duration = Duration::from_secs(60);

/// The next message, or a test failure after [`PATIENCE`].
fn next(compilation: &mut sass_embedded_core::Compilation) -> Received {
    compilation
        .recv_timeout(PATIENCE)
        .expect("no message from the compiler within a minute")
}

/// Receives until the compile response, failing on anything else.
fn finish(compilation: &mut sass_embedded_core::Compilation) -> CompileResponse {
    loop {
        match next(compilation) {
            Received::Message(Message::CompileResponse(response)) => return response,
            Received::Message(Message::LogEvent(_)) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Sends `signal` (`-9`, `-STOP`, ...) to the process `pid`.
#[cfg(unix)]
fn signal(pid: u32, signal: &str) {
    std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
}

/// Kills the process `pid` with SIGKILL.
#[cfg(unix)]
fn kill(pid: u32) {
    signal(pid, "-9");
}

/// Ends the process `pid` (`TerminateProcess`, through `taskkill /F`).
#[cfg(windows)]
fn kill(pid: u32) {
    std::process::Command::new("taskkill")
        .args(["/F", "/PID", &pid.to_string()])
        .status()
        .unwrap();
}

/// How the host describes a compiler that [`kill`] ended.
#[cfg(unix)]
const KILLED: &str = "signal 9 (SIGKILL)";
#[cfg(windows)]
const KILLED: &str = "exited with status 1";

fn unquoted(text: &str) -> Value {
    Value {
        value: Some(value::Value::String(value::String {
            text: text.to_owned(),
            quoted: false,
        })),
    }
}

in_every_setup! {
    compiles_a_string(setup) {
        let host = host_in(setup);
        let mut compilation = host
            .compile(&request("a { b: 1px + 2px }", &[]), false, &Waker::native())
            .unwrap();
        assert_eq!(css(finish(&mut compilation)), "a {\n  b: 3px;\n}");
        host.close();
    }
}

in_every_setup! {
    answers_version_requests(setup) {
        let host = host_in(setup);
        let mut query = host.version(&Waker::native()).unwrap();
        match query.recv() {
            Received::Message(Message::VersionResponse(response)) => {
                assert!(response.protocol_version.starts_with("3."));
                assert_eq!(response.implementation_name, "dart-sass");
            }
            other => panic!("unexpected {other:?}"),
        }
        host.close();
    }
}

in_every_setup! {
    function_calls_reach_the_caller_and_answers_reach_the_compiler(setup) {
        let host = host_in(setup);
        let mut compilation = host
            .compile(&request("a { b: foo(1) }", &["foo($x)"]), false, &Waker::native())
            .unwrap();
        let Received::Message(Message::FunctionCallRequest(call)) = next(&mut compilation) else {
            panic!("expected a function call");
        };
        assert_eq!(call.arguments.len(), 1);
        compilation
            .respond(inbound_message::Message::FunctionCallResponse(
                FunctionCallResponse {
                    id: call.id,
                    result: Some(function_call_response::Result::Success(unquoted("bar"))),
                    accessed_argument_lists: vec![],
                },
            ));
        assert_eq!(css(finish(&mut compilation)), "a {\n  b: bar;\n}");
        host.close();
    }
}

in_every_setup! {
    concurrent_compilations_each_get_their_own_result(setup) {
        let host = host_in(setup);
        std::thread::scope(|scope| {
            for thread in 0..16 {
                let host = &host;
                scope.spawn(move || {
                    for index in 0..50 {
                        let source = format!(".t{thread}-{index} {{ v: {index} }}");
                        let mut compilation = host.compile(&request(&source, &[]), false, &Waker::native()).unwrap();
                        assert_eq!(
                            css(finish(&mut compilation)),
                            format!(".t{thread}-{index} {{\n  v: {index};\n}}")
                        );
                    }
                });
            }
        });
        host.close();
    }
}

in_every_setup! {
    no_wake_up_is_lost_among_many_callers(setup) {
        // Callers sleep until woken, with no second look after a while, so a
        // lost wake-up is a caller that never gets its message: it fails
        // here after `STALL` instead of costing a delay.
        const STALL: Duration = Duration::from_secs(15);
        let mut config = config_in(setup);
        config.patience = Patience { watch: None, park: None };
        let host = Host::new(config).expect("an executor");
        std::thread::scope(|scope| {
            for thread in 0..16 {
                let host = &host;
                scope.spawn(move || {
                    for index in 0..150 {
                        let functions: &[&str] = if thread % 2 == 0 { &["foo()"] } else { &[] };
                        let source = if functions.is_empty() {
                            format!(".t{thread}-{index} {{ v: {index} }}")
                        } else {
                            format!(".t{thread}-{index} {{ v: foo() }}")
                        };
                        let mut compilation = host.compile(&request(&source, functions), false, &Waker::native()).unwrap();
                        let response = loop {
                            let received = compilation.recv_timeout(STALL).unwrap_or_else(|| {
                                panic!("thread {thread}, compile {index}: a wake-up was lost")
                            });
                            match received {
                                Received::Message(Message::CompileResponse(response)) => break response,
                                Received::Message(Message::FunctionCallRequest(call)) => {
                                    compilation.respond(inbound_message::Message::FunctionCallResponse(
                                        FunctionCallResponse {
                                            id: call.id,
                                            result: Some(function_call_response::Result::Success(
                                                unquoted("bar"),
                                            )),
                                            accessed_argument_lists: Vec::new(),
                                        },
                                    ));
                                }
                                other => panic!("unexpected {other:?}"),
                            }
                        };
                        let value = if functions.is_empty() { index.to_string() } else { "bar".into() };
                        assert_eq!(
                            css(response),
                            format!(".t{thread}-{index} {{\n  v: {value};\n}}")
                        );
                    }
                });
            }
        });
        host.close();
    }
}

in_every_setup! {
    an_abandoned_compilation_is_finished_by_the_host(setup) {
        let host = host_in(setup);
        let mut abandoned = host
            .compile(&request("a { b: foo() foo() foo() }", &["foo()"]), false, &Waker::native())
            .unwrap();
        let Received::Message(Message::FunctionCallRequest(_)) = next(&mut abandoned) else {
            panic!("expected a function call");
        };
        // The caller goes away without answering: the drop answers for it and the
        // reader answers the compiler's next calls until it gives up.
        drop(abandoned);

        for index in 0..20 {
            let source = format!("x{index} {{ y: {index} }}");
            let mut compilation = host.compile(&request(&source, &[]), false, &Waker::native()).unwrap();
            assert_eq!(
                css(finish(&mut compilation)),
                format!("x{index} {{\n  y: {index};\n}}")
            );
        }
        host.close();
    }
}

in_every_setup! {
    a_killed_compiler_fails_its_compilations_and_the_next_one_starts_fresh(setup) {
        let host = host_in(setup);
        let mut waiting = host
            .compile(&request("a { b: foo() }", &["foo()"]), false, &Waker::native())
            .unwrap();
        let Received::Message(Message::FunctionCallRequest(_)) = next(&mut waiting) else {
            panic!("expected a function call");
        };
        let pid = host.compiler_pid().expect("a running compiler");
        kill(pid);

        let started = Instant::now();
        match next(&mut waiting) {
            Received::Failed(HostError::Exited { status, .. }) => {
                assert!(status.contains(KILLED), "{status}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));

        let mut next = host.compile(&request("c { d: e }", &[]), false, &Waker::native()).unwrap();
        assert_eq!(css(finish(&mut next)), "c {\n  d: e;\n}");
        assert_ne!(host.compiler_pid(), Some(pid));
        host.close();
    }
}

in_every_setup! {
    a_killed_compiler_leaves_no_task_or_descriptor_behind(setup) {
        let host = host_in(setup);
        let tiny = || {
            let mut compilation = host
                .compile(&request("a { b: c }", &[]), false, &Waker::native())
                .unwrap();
            assert_eq!(css(finish(&mut compilation)), "a {\n  b: c;\n}");
        };
        // Descriptors are counted in /proc; on Windows only the tasks are.
        let descriptors = || {
            if cfg!(windows) {
                0
            } else {
                std::fs::read_dir("/proc/self/fd").unwrap().count()
            }
        };
        tiny();
        let (tasks, fds) = (host.background_tasks(), descriptors());
        for _ in 0..20 {
            let pid = host.compiler_pid().expect("a running compiler");
            kill(pid);
            let started = Instant::now();
            while host.compiler_pid() == Some(pid) {
                assert!(started.elapsed() < PATIENCE, "the killed compiler was never noticed");
                std::thread::sleep(Duration::from_millis(2));
            }
            tiny();
        }
        // Each restart's tasks end, and its descriptors close, soon after its
        // compiler is gone (the tests of this process run in parallel, so
        // the descriptors are compared with some room).
        let started = Instant::now();
        while host.background_tasks() > tasks {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{} tasks alive, {tasks} before 20 restarts",
                host.background_tasks()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(descriptors() < fds + 20, "{} descriptors, {fds} before", descriptors());
        host.close();
    }
}

#[test]
fn a_missing_compiler_is_a_spawn_error() {
    let host = Host::new(HostConfig::new(CompilerCommand::new("/nonexistent/sass"))).unwrap();
    let error = host
        .compile(&request("a {}", &[]), false, &Waker::native())
        .unwrap_err();
    assert!(matches!(error, HostError::Spawn { .. }), "{error:?}");
}

#[test]
fn closed_hosts_refuse_work() {
    let host = host();
    host.close();
    assert!(host.is_closed());
    assert_eq!(
        host.compile(&request("a {}", &[]), false, &Waker::native())
            .unwrap_err(),
        HostError::Closed
    );
}

/// Starts `count` compilations that each stop in a function call, and returns
/// them still waiting for the answer.
fn suspended(host: &Host, count: usize) -> Vec<sass_embedded_core::Compilation> {
    (0..count)
        .map(|_| {
            let mut compilation = host
                .compile(
                    &request("a { b: hold() }", &["hold()"]),
                    false,
                    &Waker::native(),
                )
                .unwrap();
            let Received::Message(Message::FunctionCallRequest(_)) = next(&mut compilation) else {
                panic!("expected a function call");
            };
            compilation
        })
        .collect()
}

#[test]
fn a_nested_compile_gets_a_free_slot_even_when_every_compiler_is_full() {
    let mut config = HostConfig::new(compiler());
    config.max_processes = 1;
    let host = Host::new(config).unwrap();
    let held = suspended(&host, sass_embedded_core::host::SLOTS_PER_COMPILER);
    assert_eq!(host.compiler_pids().len(), 1);

    // Every slot of the only allowed compiler is held by a compilation that
    // waits for its caller; a nested compile there would wait forever.
    let mut nested = host
        .compile(&request("n { o: p }", &[]), true, &Waker::native())
        .unwrap();
    assert_eq!(css(finish(&mut nested)), "n {\n  o: p;\n}");
    assert_eq!(
        host.compiler_pids().len(),
        2,
        "a second compiler was started"
    );
    drop(held);
    host.close();
}

#[test]
fn top_level_compiles_beyond_the_limit_queue_in_a_compiler() {
    let mut config = HostConfig::new(compiler());
    config.max_processes = 1;
    let host = Host::new(config).unwrap();
    let held = suspended(&host, sass_embedded_core::host::SLOTS_PER_COMPILER);
    let mut queued = host
        .compile(&request("q { r: s }", &[]), false, &Waker::native())
        .unwrap();
    assert_eq!(
        host.compiler_pids().len(),
        1,
        "no compiler beyond the limit"
    );
    // Releasing one slot lets the queued compile run.
    drop(held);
    assert_eq!(css(finish(&mut queued)), "q {\n  r: s;\n}");
    host.close();
}

#[test]
fn compiles_fill_free_slots_before_starting_compilers() {
    let host = host();
    let held = suspended(&host, 3);
    let mut compilation = host
        .compile(&request("t { u: v }", &[]), false, &Waker::native())
        .unwrap();
    assert_eq!(css(finish(&mut compilation)), "t {\n  u: v;\n}");
    assert_eq!(host.compiler_pids().len(), 1);
    drop(held);
    host.close();
}

#[test]
fn wait_for_runs_one_compilation_at_a_time_on_one_compiler() {
    let host = host_in(Setup {
        mode: DispatchMode::WaitFor,
        ..Setup::default()
    });
    std::thread::scope(|scope| {
        for thread in 0..24 {
            let host = &host;
            scope.spawn(move || {
                let source = format!("w{thread} {{ v: {thread} }}");
                let mut compilation = host
                    .compile(&request(&source, &[]), false, &Waker::native())
                    .unwrap();
                assert_eq!(
                    css(finish(&mut compilation)),
                    format!("w{thread} {{\n  v: {thread};\n}}")
                );
            });
        }
    });
    assert_eq!(host.compiler_pids().len(), 1);
    host.close();
}

in_every_setup! {
    a_compiler_that_died_while_idle_is_replaced(setup) {
    let host = host_in(setup);
    let mut first = host.compile(&request("a { b: c }", &[]), false, &Waker::native()).unwrap();
    assert_eq!(css(finish(&mut first)), "a {\n  b: c;\n}");
    drop(first);
    let pid = host.compiler_pid().unwrap();
    kill(pid);
    // Nobody reads a compiler between compiles: the end of its stderr tells
    // the host it died.
    let deadline = Instant::now() + PATIENCE;
    while host.compiler_pid() == Some(pid) {
        assert!(
            Instant::now() < deadline,
            "the dead compiler was never noticed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut second = host.compile(&request("d { e: f }", &[]), false, &Waker::native()).unwrap();
    assert_eq!(css(finish(&mut second)), "d {\n  e: f;\n}");
    assert_ne!(host.compiler_pid(), Some(pid));
    host.close();
    }
}

#[test]
fn a_relative_compiler_path_is_resolved_against_the_working_directory() {
    // The compiler runs in `/`, but the path is the caller's. (A batch file
    // on Windows, whose cmd.exe wants backslashes; a shell script elsewhere.)
    let fixture = if cfg!(windows) {
        "tests\\fixtures\\exit-3.cmd"
    } else {
        "tests/fixtures/exit-3"
    };
    let host = Host::new(HostConfig::new(CompilerCommand::new(fixture))).unwrap();
    // Whether the compiler's end is known before the compilation registers
    // or after, the compile fails with how the compiler ended.
    let error = match host.compile(&request("a {}", &[]), false, &Waker::native()) {
        Err(error) => error,
        Ok(mut compilation) => match next(&mut compilation) {
            Received::Failed(error) => error,
            other => panic!("unexpected {other:?}"),
        },
    };
    match error {
        HostError::Exited { status, stderr, .. } => {
            assert_eq!(status, "exited with status 3");
            assert_eq!(stderr, "relative path works\n");
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// A stylesheet that overflows the compiler's stack.
const ENDLESS_RECURSION: &str = "@mixin a { @include a; } x { @include a; }";

in_every_setup! {
    a_stack_overflow_fails_its_compilation_and_bystanders_run_again(setup) {
        let mut config = config_in(setup);
        config.max_processes = 1;
        let host = Host::new(config).unwrap();
        // Bystanders on the same compiler, each stopped in a function call so
        // that they are in flight when the culprit kills the compiler.
        let mut bystanders: Vec<_> = (0..3)
            .map(|index| {
                let mut compilation = host
                    .compile(&request(&format!("b{index} {{ c: hold() }}"), &["hold()"]), false, &Waker::native())
                    .unwrap();
                let Received::Message(Message::FunctionCallRequest(_)) = next(&mut compilation)
                else {
                    panic!("expected a function call");
                };
                compilation
            })
            .collect();
        if setup.mode == DispatchMode::WaitFor {
            // One at a time: the bystanders cannot be in flight with it.
            bystanders.clear();
        }
        let first_pid = host.compiler_pid().unwrap();

        let mut culprit = host.compile(&request(ENDLESS_RECURSION, &[]), false, &Waker::native()).unwrap();
        match next(&mut culprit) {
            Received::Failed(error @ HostError::CompilerFailed { .. }) => {
                assert!(error.to_string().starts_with("Stack overflow:"), "{error}");
                assert!(
                    error.detail().unwrap().to_ascii_lowercase().contains("stack overflow"),
                    "{error:?}"
                );
            }
            other => panic!("unexpected {other:?}"),
        }

        // Each bystander runs again on a fresh compiler: it is asked for its
        // function again, and finishes.
        for (index, mut compilation) in bystanders.into_iter().enumerate() {
            let Received::Message(Message::FunctionCallRequest(call)) = next(&mut compilation) else {
                panic!("expected the function call of the second run");
            };
            compilation.respond(inbound_message::Message::FunctionCallResponse(
                FunctionCallResponse {
                    id: call.id,
                    result: Some(function_call_response::Result::Success(unquoted("d"))),
                    accessed_argument_lists: vec![],
                },
            ));
            assert_eq!(css(finish(&mut compilation)), format!("b{index} {{\n  c: d;\n}}"));
        }
        assert_ne!(host.compiler_pid(), Some(first_pid));
        let mut after = host.compile(&request("e { f: g }", &[]), false, &Waker::native()).unwrap();
        assert_eq!(css(finish(&mut after)), "e {\n  f: g;\n}");
        host.close();
    }
}

in_every_setup! {
    abandoned_compilations_are_finished_with_nobody_waiting(setup) {
        let host = host_in(setup);
        let mut abandoned = host
            .compile(&request("a { b: foo() foo() foo() }", &["foo()"]), false, &Waker::native())
            .unwrap();
        let Received::Message(Message::FunctionCallRequest(_)) = next(&mut abandoned) else {
            panic!("expected a function call");
        };
        assert_eq!(host.compilations_in_flight(), 1);
        drop(abandoned);
        // No caller reads any more: the host's background reader answers the
        // compiler's next calls until it gives the compilation up.
        let deadline = Instant::now() + PATIENCE;
        while host.compilations_in_flight() > 0 {
            assert!(Instant::now() < deadline, "the abandoned compilation never finished");
            std::thread::sleep(Duration::from_millis(5));
        }
        host.close();
    }
}

// Unix only: Windows has no SIGSTOP to stop the compiler with (its callers
// only queue, and a writer thread blocks in their place).
#[cfg(unix)]
#[test]
fn a_stopped_compiler_does_not_block_writers() {
    // A compiler that reads nothing: the host queues what the pipe cannot
    // take instead of blocking the caller.
    let host = host();
    let mut warm = host
        .compile(&request("a { b: c }", &[]), false, &Waker::native())
        .unwrap();
    finish(&mut warm);
    let pid = host.compiler_pid().unwrap();
    signal(pid, "-STOP");
    let big = format!("a {{ b: '{}' }}", "x".repeat(4 << 20));
    let started = Instant::now();
    let mut compilation = host
        .compile(&request(&big, &[]), false, &Waker::native())
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the write blocked"
    );
    assert!(compilation
        .recv_timeout(Duration::from_millis(200))
        .is_none());
    signal(pid, "-CONT");
    let response = finish(&mut compilation);
    assert!(css(response).len() > 4 << 20);
    host.close();
}

/// The threads of this process named `name` (Linux's `comm`).
#[cfg(unix)]
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}

/// Under the reader-thread mechanism a compiler has one reader thread, which
/// ends with it; under the others, none. (Unix only: it counts threads by
/// name in /proc.)
#[test]
#[cfg(unix)]
fn a_reader_thread_lives_as_long_as_its_compiler() {
    use sass_embedded_core::wait::{MECHANISM, READER_THREAD_NAME};
    let expected = usize::from(MECHANISM == "reader");
    let host = host();
    let mut compilation = host
        .compile(&request("a { b: c }", &[]), false, &Waker::native())
        .unwrap();
    assert_eq!(css(finish(&mut compilation)), "a {\n  b: c;\n}");
    assert_eq!(threads_named(READER_THREAD_NAME), expected);
    drop(compilation);
    host.close();
    let deadline = Instant::now() + Duration::from_secs(20);
    while threads_named(READER_THREAD_NAME) > 0 {
        assert!(
            Instant::now() < deadline,
            "the reader thread outlived its compiler"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
