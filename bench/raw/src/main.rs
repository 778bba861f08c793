//! The raw ceiling of `rake bench`: the same workloads as the Ruby rows,
//! driven by the Ruby-free core directly (no Ruby, no conversion to Ruby
//! objects), so the table can show the host's overhead over the compiler.
//!
//! Usage: `sass-embedded-bench-raw COMPILER WORKLOAD [key=value ...]`, where
//! WORKLOAD is `startup`, `bootstrap`, `tiny`, `loop` (a `@for` over 50
//! rules, which the compiler takes about a millisecond for), `calls` (100
//! function calls), `sleep` or `nested`, and the
//! keys are `count`, `threads`, `func` (0/1), `url` (0/1), `path`,
//! `sleep_ms`, `executor` (`tokio` or `thread`) and `barrier` (0/1: for the
//! multi-process rows, warm up with 300 compiles, print `ready`, wait for a
//! line on stdin, and measure only from there). Prints one line of JSON with
//! the measurements.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sass_embedded_core::protocol::{
    inbound_message::{
        self, compile_request, function_call_response, CompileRequest, FunctionCallResponse,
    },
    outbound_message::{compile_response, FunctionCallRequest, Message},
    value, Value,
};
use sass_embedded_core::{
    Compilation, CompilerCommand, ExecutorKind, Host, HostConfig, Received, Waker,
};

/// What one run is asked to do.
struct Workload {
    kind: String,
    count: usize,
    threads: usize,
    func: bool,
    url: bool,
    path: String,
    sleep: Duration,
    executor: Option<String>,
    barrier: bool,
}

impl Workload {
    fn parse(kind: String, options: &[String]) -> Self {
        let options: HashMap<&str, &str> = options
            .iter()
            .filter_map(|option| option.split_once('='))
            .collect();
        let number = |key: &str, default: usize| {
            options
                .get(key)
                .map(|value| value.parse().expect("a number"))
                .unwrap_or(default)
        };
        Self {
            kind,
            count: number("count", 1000),
            threads: number("threads", 1).max(1),
            func: number("func", 0) == 1,
            url: number("url", 0) == 1,
            path: options
                .get("path")
                .map(|p| (*p).to_owned())
                .unwrap_or_default(),
            sleep: Duration::from_millis(number("sleep_ms", 0) as u64),
            executor: options.get("executor").map(|e| (*e).to_owned()),
            barrier: number("barrier", 0) == 1,
        }
    }

    fn request(&self) -> CompileRequest {
        let input = match self.kind.as_str() {
            "bootstrap" => compile_request::Input::Path(self.path.clone()),
            "nested" => string_input("a { b: nest() }", false),
            "sleep" => string_input("a { b: foo() }", false),
            "calls" => string_input(&hundred_calls(), false),
            "loop" => string_input(LOOP, false),
            _ => string_input(
                if self.func {
                    "a {b: foo()}"
                } else {
                    "a {b: c}"
                },
                self.url,
            ),
        };
        let global_functions = match self.kind.as_str() {
            "nested" => vec!["nest()".to_owned()],
            "sleep" | "calls" => vec!["foo()".to_owned()],
            _ if self.func => vec!["foo()".to_owned()],
            _ => Vec::new(),
        };
        CompileRequest {
            input: Some(input),
            global_functions,
            // As the Ruby rows pass Sass::Logger.silent for Bootstrap.
            silent: self.kind == "bootstrap",
            style: if self.kind == "bootstrap" {
                sass_embedded_core::protocol::OutputStyle::Compressed as i32
            } else {
                0
            },
            ..Default::default()
        }
    }
}

/// A stylesheet the compiler takes about a millisecond for: the same as
/// bench/row.rb's.
const LOOP: &str = "@for $i from 1 through 50 { .a-#{$i} { width: $i * 1px; } }";

/// A stylesheet that calls the host function 100 times.
fn hundred_calls() -> String {
    let body: Vec<String> = (0..100).map(|i| format!("b{i}: foo()")).collect();
    format!("a {{ {} }}", body.join("; "))
}

fn string_input(source: &str, url: bool) -> compile_request::Input {
    compile_request::Input::String(compile_request::StringInput {
        source: source.to_owned(),
        url: if url {
            "file:///tmp/test.scss".to_owned()
        } else {
            String::new()
        },
        ..Default::default()
    })
}

fn bar() -> Value {
    Value {
        value: Some(value::Value::String(value::String {
            text: "bar".to_owned(),
            quoted: false,
        })),
    }
}

/// Runs one compilation to its end, answering function calls, and returns
/// the CSS length.
fn compile(host: &Host, workload: &Workload, request: &CompileRequest, nested: bool) -> usize {
    let mut compilation = host
        .compile(request, nested, &Waker::native())
        .expect("compile");
    loop {
        match compilation.recv() {
            Received::Message(Message::CompileResponse(response)) => {
                return match response.result {
                    Some(compile_response::Result::Success(success)) => success.css.len(),
                    other => panic!("compilation failed: {other:?}"),
                };
            }
            Received::Message(Message::FunctionCallRequest(call)) => {
                answer(host, workload, &mut compilation, call);
            }
            Received::Message(_) => {}
            Received::Failed(error) => panic!("{error}"),
        }
    }
}

fn answer(
    host: &Host,
    workload: &Workload,
    compilation: &mut Compilation,
    call: FunctionCallRequest,
) {
    if !workload.sleep.is_zero() {
        std::thread::sleep(workload.sleep);
    }
    let result = if workload.kind == "nested" {
        let inner = CompileRequest {
            input: Some(string_input("x {y: z}", false)),
            ..Default::default()
        };
        compile(host, workload, &inner, true);
        bar()
    } else {
        bar()
    };
    compilation.respond(inbound_message::Message::FunctionCallResponse(
        FunctionCallResponse {
            id: call.id,
            result: Some(function_call_response::Result::Success(result)),
            accessed_argument_lists: Vec::new(),
        },
    ));
}

/// `(user + system) seconds, peak RSS kB` of a process, from /proc.
fn usage(pid: u32) -> (f64, u64) {
    let ticks = 100.0; // USER_HZ on Linux
    let cpu = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
            Some((fields[11].parse::<f64>().ok()? + fields[12].parse::<f64>().ok()?) / ticks)
        })
        .unwrap_or(0.0);
    let hwm = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0);
    (cpu, hwm)
}

/// How many times the threads of a process moved to another CPU so far
/// (`se.nr_migrations` of each thread, from /proc; 0 where the kernel does
/// not say).
fn migrations(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("sched")).ok())
        .filter_map(|sched| {
            let line = sched
                .lines()
                .find(|line| line.starts_with("se.nr_migrations"))?;
            line.rsplit(':').next()?.trim().parse::<u64>().ok()
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [compiler, kind, options @ ..] = args.as_slice() else {
        eprintln!("usage: sass-embedded-bench-raw COMPILER WORKLOAD [key=value ...]");
        std::process::exit(2);
    };
    let workload = Workload::parse(kind.clone(), options);
    let mut config = HostConfig::new(CompilerCommand::new(compiler));
    if let Some(executor) = &workload.executor {
        config.executor = ExecutorKind::ALL
            .iter()
            .find(|(name, _)| name == executor)
            .map(|(_, kind)| *kind)
            .expect("executor=tokio or executor=thread");
    }

    let mut started = Instant::now();
    let mut host_cpu_before = 0.0;
    let mut compiler_cpu_before = 0.0;
    let mut compiler_migrations = 0;
    let (compiles, compiler_cpu, compiler_rss) = if workload.kind == "startup" {
        let mut cpu = 0.0;
        let mut rss = 0;
        for _ in 0..workload.count {
            let host = Host::new(config.clone()).expect("runtime");
            let mut query = host.version(&Waker::native()).expect("version");
            assert!(matches!(
                query.recv(),
                Received::Message(Message::VersionResponse(_))
            ));
            let (c, r) = usage(host.compiler_pid().expect("pid"));
            cpu += c;
            rss = rss.max(r);
            host.close();
        }
        (workload.count, cpu, rss)
    } else {
        let host = Host::new(config).expect("runtime");
        let request = workload.request();
        if workload.barrier {
            for _ in 0..300 {
                compile(&host, &workload, &request, false);
            }
            println!("ready");
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).expect("stdin");
            host_cpu_before = usage(std::process::id()).0;
            compiler_cpu_before = host
                .compiler_pids()
                .into_iter()
                .map(|pid| usage(pid).0)
                .sum();
            started = Instant::now();
        }
        let per_thread = workload.count / workload.threads;
        std::thread::scope(|scope| {
            for _ in 0..workload.threads {
                scope.spawn(|| {
                    for _ in 0..per_thread {
                        compile(&host, &workload, &request, false);
                    }
                });
            }
        });
        let pids = host.compiler_pids();
        compiler_migrations = pids.iter().copied().map(migrations).sum();
        let (cpu, rss) = pids
            .into_iter()
            .map(usage)
            .fold((0.0, 0), |(cpu, rss), (c, r)| (cpu + c, rss.max(r)));
        host.close();
        (
            per_thread * workload.threads,
            cpu - compiler_cpu_before,
            rss,
        )
    };
    let wall = started.elapsed().as_secs_f64();
    let (host_cpu, host_rss) = usage(std::process::id());
    let host_cpu = host_cpu - host_cpu_before;
    let spin = sass_embedded_core::wait::spin::stats();
    let (spins, spins_caught, spun) = (spin.spins, spin.caught, spin.spun.as_secs_f64());
    println!(
        "{{\"wall\":{wall},\"compiles\":{compiles},\"host_cpu\":{host_cpu},\"compiler_cpu\":{compiler_cpu},\
         \"compiler_migrations\":{compiler_migrations},\"spins\":{spins},\
         \"spins_caught\":{spins_caught},\"spun\":{spun},\"host_rss_kb\":{host_rss},\
         \"compiler_rss_kb\":{compiler_rss}}}"
    );
}
