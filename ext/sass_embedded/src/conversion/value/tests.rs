//! What [`super`] converts, checked in an embedded Ruby with the gem's own
//! `Sass::Value` classes (lib/, pure Ruby): each protobuf value the compiler
//! may send becomes the Ruby object a custom function expects and converts
//! back to the same message; the rules that only the host enforces (a
//! compiler object stays in its compilation, argument lists report their
//! keywords, the compiler's nesting limit, what is not a Sass value) hold.
//!
//! Ruby runs once per process, on the thread that started it: one test
//! runs every case in turn and names each that failed.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use sass_embedded_core::protocol::value::{calculation, map};

use super::*;

type Case = fn(&Ruby) -> Result<(), Error>;

const CASES: &[(&str, Case)] = &[
    ("every kind of value round-trips", every_kind_round_trips),
    (
        "values from the compiler are the Ruby objects functions expect",
        ruby_objects,
    ),
    (
        "argument lists report their keywords and come back by id",
        argument_lists,
    ),
    (
        "compiler objects stay in their compilation",
        compiler_objects,
    ),
    (
        "nesting the compiler cannot read is refused, any depth is received",
        nesting,
    ),
    (
        "what is not a Sass value is refused with a TypeError",
        refused,
    ),
    ("strings are sent as UTF-8", utf8),
];

#[test]
fn value_conversion_in_an_embedded_ruby() {
    magnus::Ruby::init(|ruby| {
        let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lib");
        ruby.eval::<Value>(&format!(
            "$LOAD_PATH.unshift({lib:?}); require 'sass/value'; require 'sass/calculation_value'"
        ))?;
        preload(ruby);
        let failed: Vec<String> = CASES
            .iter()
            .filter_map(
                |(name, case)| match catch_unwind(AssertUnwindSafe(|| case(ruby))) {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => Some(format!("{name}: {error}")),
                    Err(_) => Some(format!("{name}: panicked (above)")),
                },
            )
            .collect();
        assert!(failed.is_empty(), "failed:\n{}", failed.join("\n"));
        Ok(())
    })
    .unwrap();
}

fn context(ruby: &Ruby, compilation: u64) -> Context {
    Context {
        compilation,
        session: ruby.qnil().as_value(),
        nesting: Cell::new(0),
    }
}

fn value(value: proto::Value) -> ProtoValue {
    ProtoValue { value: Some(value) }
}

fn string(text: &str, quoted: bool) -> ProtoValue {
    value(proto::Value::String(proto::String {
        text: text.into(),
        quoted,
    }))
}

fn number(value_: f64, numerators: &[&str], denominators: &[&str]) -> proto::Number {
    proto::Number {
        value: value_,
        numerators: numerators.iter().map(|unit| unit.to_string()).collect(),
        denominators: denominators.iter().map(|unit| unit.to_string()).collect(),
    }
}

fn list(separator: ListSeparator, brackets: bool, contents: Vec<ProtoValue>) -> ProtoValue {
    value(proto::Value::List(proto::List {
        separator: separator as i32,
        has_brackets: brackets,
        contents,
    }))
}

fn map(entries: Vec<(ProtoValue, ProtoValue)>) -> ProtoValue {
    value(proto::Value::Map(proto::Map {
        entries: entries
            .into_iter()
            .map(|(key, value)| map::Entry {
                key: Some(key),
                value: Some(value),
            })
            .collect(),
    }))
}

fn singleton(singleton: SingletonValue) -> ProtoValue {
    value(proto::Value::Singleton(singleton as i32))
}

fn color(space: &str, channels: [Option<f64>; 3], alpha: f64) -> ProtoValue {
    value(proto::Value::Color(proto::Color {
        space: space.into(),
        channel1: channels[0],
        channel2: channels[1],
        channel3: channels[2],
        alpha: Some(alpha),
    }))
}

fn calc_value(value: calculation::calculation_value::Value) -> calculation::CalculationValue {
    calculation::CalculationValue { value: Some(value) }
}

/// `calc(1px + #{--x} * 2)`, with a nested `min(2em, 3%)`.
fn calculation() -> ProtoValue {
    use calculation::calculation_value::Value as C;
    let times = calculation::CalculationOperation {
        operator: CalculationOperator::Times as i32,
        left: Some(Box::new(calc_value(C::Interpolation("var(--x)".into())))),
        right: Some(Box::new(calc_value(C::Number(number(2.0, &[], &[]))))),
    };
    let plus = calculation::CalculationOperation {
        operator: CalculationOperator::Plus as i32,
        left: Some(Box::new(calc_value(C::Number(number(1.0, &["px"], &[]))))),
        right: Some(Box::new(calc_value(C::Operation(Box::new(times))))),
    };
    let min = proto::Calculation {
        name: "min".into(),
        arguments: vec![
            calc_value(C::Number(number(2.0, &["em"], &[]))),
            calc_value(C::String("3%".into())),
        ],
    };
    value(proto::Value::Calculation(proto::Calculation {
        name: "calc".into(),
        arguments: vec![
            calc_value(C::Operation(Box::new(plus))),
            calc_value(C::Calculation(min)),
        ],
    }))
}

fn check(condition: bool, what: impl FnOnce() -> String) -> Result<(), Error> {
    if condition {
        Ok(())
    } else {
        let ruby = Ruby::get().expect("the tests run on Ruby's thread");
        Err(Error::new(ruby.exception_runtime_error(), what()))
    }
}

fn round_trip(ruby: &Ruby, sent: &ProtoValue) -> Result<ProtoValue, Error> {
    let context = context(ruby, 1);
    let object = to_ruby(ruby, sent, &context, &ArgumentLists::new(ruby))?;
    from_ruby(ruby, object, &context)
}

fn every_kind_round_trips(ruby: &Ruby) -> Result<(), Error> {
    use ListSeparator::{Comma, Slash, Space, Undecided};
    let values = [
        string("a", true),
        string("ünïcödé ✓", false),
        string("", true),
        value(proto::Value::Number(number(1.5, &[], &[]))),
        value(proto::Value::Number(number(-3.0, &["px", "em"], &["s"]))),
        singleton(SingletonValue::True),
        singleton(SingletonValue::False),
        singleton(SingletonValue::Null),
        list(Comma, true, vec![string("a", false), string("b", true)]),
        list(Space, false, vec![string("a", false), string("b", false)]),
        list(Slash, false, vec![string("a", false), string("b", false)]),
        list(Undecided, false, vec![]),
        list(
            Comma,
            false,
            vec![list(
                Space,
                true,
                vec![list(Slash, false, vec![string("deep", true)])],
            )],
        ),
        map(vec![
            (
                string("a", true),
                value(proto::Value::Number(number(1.0, &["px"], &[]))),
            ),
            (
                string("b", false),
                list(Comma, false, vec![string("c", false), string("d", false)]),
            ),
        ]),
        map(vec![]),
        color("rgb", [Some(10.0), Some(20.0), Some(30.0)], 0.5),
        color("hsl", [Some(120.0), None, Some(50.0)], 1.0),
        color("oklch", [Some(0.5), Some(0.1), Some(200.0)], 1.0),
        color("xyz-d50", [Some(0.1), Some(0.2), Some(0.3)], 0.0),
        calculation(),
        value(proto::Value::CompilerFunction(proto::CompilerFunction {
            id: 7,
        })),
        value(proto::Value::CompilerMixin(proto::CompilerMixin { id: 8 })),
        value(proto::Value::CompilerModule(proto::CompilerModule {
            id: 9,
        })),
    ];
    for sent in &values {
        let back = round_trip(ruby, sent)?;
        check(&back == sent, || {
            format!("sent {sent:?}\ngot back {back:?}")
        })?;
    }
    Ok(())
}

/// Calls `method` on `value` and gives its `inspect`.
fn inspect(value: Value, method: &str) -> Result<String, Error> {
    let answer: Value = value.funcall(method, ())?;
    Ok(answer.inspect())
}

fn ruby_objects(ruby: &Ruby) -> Result<(), Error> {
    let context = context(ruby, 1);
    let lists = ArgumentLists::new(ruby);
    let convert = |sent: &ProtoValue| to_ruby(ruby, sent, &context, &lists);
    let expect = |sent: ProtoValue, ruby_code: &str| -> Result<(), Error> {
        let object = convert(&sent)?;
        let expected: Value = ruby.eval(ruby_code)?;
        let equal: bool = object.funcall("==", (expected,))?;
        check(equal && object.class().eql(expected.class())?, || {
            format!(
                "{sent:?} became {}, not {}",
                object.inspect(),
                expected.inspect()
            )
        })
    };
    expect(
        string("a", false),
        "Sass::Value::String.new('a', quoted: false)",
    )?;
    expect(
        value(proto::Value::Number(number(2.0, &["px"], &["s"]))),
        "Sass::Value::Number.new(2, { numerator_units: ['px'], denominator_units: ['s'] })",
    )?;
    expect(
        list(ListSeparator::Slash, true, vec![string("a", true)]),
        "Sass::Value::List.new([Sass::Value::String.new('a')], separator: '/', bracketed: true)",
    )?;
    expect(
        list(ListSeparator::Undecided, false, vec![]),
        "Sass::Value::List.new([], separator: nil)",
    )?;
    expect(
        map(vec![(string("k", true), string("v", false))]),
        "Sass::Value::Map.new({ Sass::Value::String.new('k') => Sass::Value::String.new('v', quoted: false) })",
    )?;
    expect(
        color("hwb", [Some(90.0), Some(10.0), None], 0.25),
        "Sass::Value::Color.new(hue: 90, whiteness: 10, blackness: nil, alpha: 0.25, space: 'hwb')",
    )?;
    // The singletons are Ruby's constants, not copies.
    for (sent, constant) in [
        (SingletonValue::True, "Sass::Value::Boolean::TRUE"),
        (SingletonValue::False, "Sass::Value::Boolean::FALSE"),
        (SingletonValue::Null, "Sass::Value::Null::NULL"),
    ] {
        let object = convert(&singleton(sent))?;
        let expected: Value = ruby.eval(constant)?;
        let same: bool = object.funcall("equal?", (expected,))?;
        check(same, || {
            format!("{sent:?} became {}, not {constant}", object.inspect())
        })?;
    }
    let calc = convert(&calculation())?;
    check(
        inspect(calc, "name")? == "\"calc\"" && calc.is_frozen(),
        || format!("calc(...) became {}", calc.inspect()),
    )?;
    let function = convert(&value(proto::Value::CompilerFunction(
        proto::CompilerFunction { id: 3 },
    )))?;
    check(function.is_frozen(), || {
        "a compiler function is frozen".into()
    })?;
    Ok(())
}

fn argument_list_message(id: u32) -> proto::ArgumentList {
    proto::ArgumentList {
        id,
        separator: ListSeparator::Comma as i32,
        contents: vec![string("a", false)],
        keywords: [("k".to_string(), string("v", true))].into(),
    }
}

fn argument_list(id: u32) -> ProtoValue {
    value(proto::Value::ArgumentList(argument_list_message(id)))
}

fn argument_lists(ruby: &Ruby) -> Result<(), Error> {
    let context = context(ruby, 1);
    let lists = ArgumentLists::new(ruby);
    let untouched = to_ruby(ruby, &argument_list(5), &context, &lists)?;
    let read = to_ruby(ruby, &argument_list(6), &context, &lists)?;
    check(lists.accessed()?.is_empty(), || {
        "no keywords were read yet".into()
    })?;
    let keywords = inspect(read, "keywords")?;
    check(keywords.contains(":k"), || {
        format!("keywords of list 6: {keywords}")
    })?;
    let accessed = lists.accessed()?;
    check(accessed == [6], || {
        format!("lists whose keywords were read: {accessed:?}")
    })?;
    // Back to its own compilation: by id alone, the compiler knows it.
    let back = from_ruby(ruby, untouched, &context)?;
    let by_id = value(proto::Value::ArgumentList(proto::ArgumentList {
        id: 5,
        ..Default::default()
    }));
    check(back == by_id, || format!("list 5 came back as {back:?}"))?;
    // To another compilation: as a new list, contents and keywords.
    let back = from_ruby(ruby, untouched, &self::context(ruby, 2))?;
    check(back == argument_list(0), || {
        format!("list 5 went to another compilation as {back:?}")
    })?;
    // A list made in Ruby has no id.
    let made: Value =
        ruby.eval("Sass::Value::ArgumentList.new([Sass::Value::Null::NULL], { 'x' => Sass::Value::Boolean::TRUE }, ' ')")?;
    let sent = from_ruby(ruby, made, &context)?;
    let expected = value(proto::Value::ArgumentList(proto::ArgumentList {
        id: 0,
        separator: ListSeparator::Space as i32,
        contents: vec![singleton(SingletonValue::Null)],
        keywords: [("x".to_string(), singleton(SingletonValue::True))].into(),
    }));
    check(sent == expected, || {
        format!("a Ruby argument list went as {sent:?}")
    })
}

fn expect_type_error(
    ruby: &Ruby,
    result: Result<impl std::fmt::Debug, Error>,
    message: &str,
) -> Result<(), Error> {
    let type_error = ruby.exception_type_error();
    match result {
        Err(error) if error.is_kind_of(type_error) && error.to_string().contains(message) => Ok(()),
        other => check(false, || {
            format!("expected a TypeError saying {message:?}, got {other:?}")
        }),
    }
}

fn compiler_objects(ruby: &Ruby) -> Result<(), Error> {
    let first = context(ruby, 1);
    let second = context(ruby, 2);
    let lists = ArgumentLists::new(ruby);
    for (sent, what) in [
        (
            proto::Value::CompilerFunction(proto::CompilerFunction { id: 1 }),
            "function",
        ),
        (
            proto::Value::CompilerMixin(proto::CompilerMixin { id: 1 }),
            "mixin",
        ),
        (
            proto::Value::CompilerModule(proto::CompilerModule { id: 1 }),
            "module",
        ),
    ] {
        let object = to_ruby(ruby, &value(sent), &first, &lists)?;
        expect_type_error(
            ruby,
            from_ruby(ruby, object, &second),
            &format!("a compiler {what} can only be used in the compilation that created it"),
        )?;
        // Inside a list too, and the failed walk leaves no nesting behind.
        let inside: Value = ruby
            .eval::<magnus::block::Proc>("->(v) { Sass::Value::List.new([v, v]) }")?
            .call((object,))?;
        expect_type_error(ruby, from_ruby(ruby, inside, &second), "can only be used")?;
        check(second.nesting.get() == 0, || {
            "nesting given back after an error".into()
        })?;
    }
    Ok(())
}

/// `depth` lists around a string, or `depth` maps each holding the next as
/// a value.
fn nested(depth: usize, maps: bool) -> ProtoValue {
    (0..depth).fold(string("x", true), |inner, _| {
        if maps {
            map(vec![(string("k", true), inner)])
        } else {
            list(ListSeparator::Comma, true, vec![inner])
        }
    })
}

fn nesting(ruby: &Ruby) -> Result<(), Error> {
    let context = context(ruby, 1);
    let lists = ArgumentLists::new(ruby);
    // The deepest the compiler reads (MAX_VALUE_NESTING) go through; one
    // more level is refused before anything is sent.
    for (depth, maps) in [(48, false), (32, true)] {
        let deepest = nested(depth, maps);
        check(round_trip(ruby, &deepest)? == deepest, || {
            format!("{depth} levels")
        })?;
        let object = to_ruby(ruby, &nested(depth + 1, maps), &context, &lists)?;
        expect_type_error(ruby, from_ruby(ruby, object, &context), "nested too deeply")?;
        check(context.nesting.get() == 0, || {
            "nesting given back after an error".into()
        })?;
    }
    // The compiler may send any depth; none takes machine stack here (nor
    // in dropping it: see protocol::nested).
    let deep = nested(20_000, false);
    let object = to_ruby(ruby, &deep, &context, &lists)?;
    let depth: usize = ruby
        .eval::<magnus::block::Proc>(
            "->(v) { n = 0; (n += 1; v = v.to_a.first) while v.is_a?(Sass::Value::List); n }",
        )?
        .call((object,))?;
    check(depth == 20_000, || {
        format!("{depth} levels of 20 000 arrived")
    })?;
    Ok(())
}

fn refused(ruby: &Ruby) -> Result<(), Error> {
    let context = context(ruby, 1);
    expect_type_error(
        ruby,
        from_ruby(ruby, ruby.eval("1")?, &context),
        "1 is not a Sass::Value",
    )?;
    expect_type_error(
        ruby,
        from_ruby(ruby, ruby.eval("Sass::Value::List.new([2])")?, &context),
        "2 is not a Sass::Value",
    )?;
    let other: Value = ruby.eval("Class.new { include Sass::Value }.new")?;
    expect_type_error(
        ruby,
        from_ruby(ruby, other, &context),
        "values are not supported by this version of sass-embedded",
    )?;
    expect_type_error(
        ruby,
        to_ruby(
            ruby,
            &color("nonsense", [Some(1.0), Some(2.0), Some(3.0)], 1.0),
            &context,
            &ArgumentLists::new(ruby),
        ),
        "unknown space \"nonsense\"",
    )
}

fn utf8(ruby: &Ruby) -> Result<(), Error> {
    let context = context(ruby, 1);
    // `Sass::Value::String.new` transcodes its text to UTF-8 (refusing what
    // cannot be); what is not UTF-8 in a UTF-8 String is sent as U+FFFD.
    // (The source given to eval here is binary: each String says its
    // encoding.)
    for (ruby_code, text) in [
        (
            "Sass::Value::String.new(\"a\\xFFb\".dup.force_encoding('UTF-8'))",
            "a\u{FFFD}b",
        ),
        (
            "Sass::Value::String.new(\"\\xE9\".dup.force_encoding('ISO-8859-1'))",
            "é",
        ),
        (
            "Sass::Value::String.new(\"\\u00e9\".encode('UTF-16LE'))",
            "é",
        ),
    ] {
        let sent = from_ruby(ruby, ruby.eval(ruby_code)?, &context)?;
        check(sent == string(text, true), || {
            format!("{ruby_code} went as {sent:?}")
        })?;
    }
    Ok(())
}
