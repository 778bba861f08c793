//! The core against the real Dart Sass compiler: compile, callbacks,
//! concurrency, abandoned compilations and a killed compiler, with no Ruby.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use sass_embedded_core::dispatch::DispatchMode;
use sass_embedded_core::protocol::{
    inbound_message::{
        self, compile_request, function_call_response, CompileRequest, FunctionCallResponse,
    },
    outbound_message::{compile_response, CompileResponse, Message},
    value, Value,
};
use sass_embedded_core::{CompilerCommand, Host, HostConfig, HostError, Received};

/// The compiler: `SASS_EMBEDDED_COMPILER`, or the one `rake compiler` installs.
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
    CompilerCommand::new(path)
}

fn host() -> Host {
    host_in(DispatchMode::Multiplexed)
}

fn host_in(mode: DispatchMode) -> Host {
    let mut config = HostConfig::new(compiler());
    config.dispatch = mode;
    Host::new(config).expect("a runtime")
}

/// Runs a test body once per dispatch mode.
macro_rules! in_both_modes {
    ($($name:ident($mode:ident) $body:block)*) => {$(
        mod $name {
            use super::*;

            fn run($mode: DispatchMode) $body

            #[test]
            fn multiplexed() {
                run(DispatchMode::Multiplexed);
            }

            #[test]
            fn wait_for() {
                run(DispatchMode::WaitFor);
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
            Received::Message(Message::LogEvent(_)) | Received::Woken => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn unquoted(text: &str) -> Value {
    Value {
        value: Some(value::Value::String(value::String {
            text: text.to_owned(),
            quoted: false,
        })),
    }
}

in_both_modes! {
    compiles_a_string(mode) {
        let host = host_in(mode);
        let mut compilation = host
            .compile(&request("a { b: 1px + 2px }", &[]), false)
            .unwrap();
        assert_eq!(css(finish(&mut compilation)), "a {\n  b: 3px;\n}");
        host.close();
    }
}

in_both_modes! {
    answers_version_requests(mode) {
        let host = host_in(mode);
        let mut query = host.version().unwrap();
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

in_both_modes! {
    function_calls_reach_the_caller_and_answers_reach_the_compiler(mode) {
        let host = host_in(mode);
        let mut compilation = host
            .compile(&request("a { b: foo(1) }", &["foo($x)"]), false)
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
            ))
            .unwrap();
        assert_eq!(css(finish(&mut compilation)), "a {\n  b: bar;\n}");
        host.close();
    }
}

in_both_modes! {
    concurrent_compilations_each_get_their_own_result(mode) {
        let host = host_in(mode);
        std::thread::scope(|scope| {
            for thread in 0..16 {
                let host = &host;
                scope.spawn(move || {
                    for index in 0..50 {
                        let source = format!(".t{thread}-{index} {{ v: {index} }}");
                        let mut compilation = host.compile(&request(&source, &[]), false).unwrap();
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

in_both_modes! {
    an_abandoned_compilation_is_finished_by_the_host(mode) {
        let host = host_in(mode);
        let mut abandoned = host
            .compile(&request("a { b: foo() foo() foo() }", &["foo()"]), false)
            .unwrap();
        let Received::Message(Message::FunctionCallRequest(_)) = next(&mut abandoned) else {
            panic!("expected a function call");
        };
        // The caller goes away without answering: the drop answers for it and the
        // reader answers the compiler's next calls until it gives up.
        drop(abandoned);

        for index in 0..20 {
            let source = format!("x{index} {{ y: {index} }}");
            let mut compilation = host.compile(&request(&source, &[]), false).unwrap();
            assert_eq!(
                css(finish(&mut compilation)),
                format!("x{index} {{\n  y: {index};\n}}")
            );
        }
        host.close();
    }
}

in_both_modes! {
    a_killed_compiler_fails_its_compilations_and_the_next_one_starts_fresh(mode) {
        let host = host_in(mode);
        let mut waiting = host
            .compile(&request("a { b: foo() }", &["foo()"]), false)
            .unwrap();
        let Received::Message(Message::FunctionCallRequest(_)) = next(&mut waiting) else {
            panic!("expected a function call");
        };
        let pid = host.compiler_pid().expect("a running compiler");
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();

        let started = Instant::now();
        match next(&mut waiting) {
            Received::Failed(HostError::Exited { status, .. }) => {
                assert!(status.contains("signal 9 (SIGKILL)"), "{status}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));

        let mut next = host.compile(&request("c { d: e }", &[]), false).unwrap();
        assert_eq!(css(finish(&mut next)), "c {\n  d: e;\n}");
        assert_ne!(host.compiler_pid(), Some(pid));
        host.close();
    }
}

#[test]
fn a_missing_compiler_is_a_spawn_error() {
    let host = Host::new(HostConfig::new(CompilerCommand::new("/nonexistent/sass"))).unwrap();
    let error = host.compile(&request("a {}", &[]), false).unwrap_err();
    assert!(matches!(error, HostError::Spawn { .. }), "{error:?}");
}

#[test]
fn closed_hosts_refuse_work() {
    let host = host();
    host.close();
    assert!(host.is_closed());
    assert_eq!(
        host.compile(&request("a {}", &[]), false).unwrap_err(),
        HostError::Closed
    );
}

/// Starts `count` compilations that each stop in a function call, and returns
/// them still waiting for the answer.
fn suspended(host: &Host, count: usize) -> Vec<sass_embedded_core::Compilation> {
    (0..count)
        .map(|_| {
            let mut compilation = host
                .compile(&request("a { b: hold() }", &["hold()"]), false)
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
    let mut nested = host.compile(&request("n { o: p }", &[]), true).unwrap();
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
    let mut queued = host.compile(&request("q { r: s }", &[]), false).unwrap();
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
    let mut compilation = host.compile(&request("t { u: v }", &[]), false).unwrap();
    assert_eq!(css(finish(&mut compilation)), "t {\n  u: v;\n}");
    assert_eq!(host.compiler_pids().len(), 1);
    drop(held);
    host.close();
}

#[test]
fn wait_for_runs_one_compilation_at_a_time_on_one_compiler() {
    let host = host_in(DispatchMode::WaitFor);
    std::thread::scope(|scope| {
        for thread in 0..24 {
            let host = &host;
            scope.spawn(move || {
                let source = format!("w{thread} {{ v: {thread} }}");
                let mut compilation = host.compile(&request(&source, &[]), false).unwrap();
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

#[test]
fn wait_for_replaces_a_compiler_that_died_while_idle() {
    let host = host_in(DispatchMode::WaitFor);
    let mut first = host.compile(&request("a { b: c }", &[]), false).unwrap();
    assert_eq!(css(finish(&mut first)), "a {\n  b: c;\n}");
    drop(first);
    let pid = host.compiler_pid().unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    // Nobody reads a wait_for compiler between compiles: the host notices
    // the death when it next looks for a compiler.
    let deadline = Instant::now() + PATIENCE;
    while host.compiler_pid() == Some(pid) {
        assert!(
            Instant::now() < deadline,
            "the dead compiler was never noticed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut second = host.compile(&request("d { e: f }", &[]), false).unwrap();
    assert_eq!(css(finish(&mut second)), "d {\n  e: f;\n}");
    assert_ne!(host.compiler_pid(), Some(pid));
    host.close();
}

#[test]
fn a_relative_compiler_path_is_resolved_against_the_working_directory() {
    // The compiler runs in `/`, but the path is the caller's.
    let host = Host::new(HostConfig::new(CompilerCommand::new(
        "tests/fixtures/exit-3",
    )))
    .unwrap();
    let mut compilation = host.compile(&request("a {}", &[]), false).unwrap();
    match next(&mut compilation) {
        Received::Failed(HostError::Exited { status, stderr, .. }) => {
            assert_eq!(status, "exited with status 3");
            assert_eq!(stderr, "relative path works\n");
        }
        other => panic!("unexpected {other:?}"),
    }
}
