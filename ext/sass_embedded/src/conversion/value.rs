//! Conversion between protobuf `Value` messages and `Sass::Value` objects,
//! both directions.
//!
//! Values from the compiler become Ruby objects through the public
//! constructors of the `Sass::Value` classes. Compiler functions, mixins and
//! modules have no public constructor: they are allocated and tagged with
//! their id and with the compilation they came from, so that passing one to
//! another compilation is refused here, as the protocol requires, instead of
//! reaching the compiler. Argument lists remember their protocol id so the
//! host can report which ones had their keywords read.

use magnus::{
    prelude::*, value::Lazy, Error, Float, Integer, RArray, RClass, RHash, RObject, RString, Ruby,
    Symbol, TryConvert, Value,
};
use sass_embedded_core::protocol::{
    value as proto, CalculationOperator, ListSeparator, SingletonValue, Value as ProtoValue,
};

use super::{rust_string, string_of};
use crate::classes::sass_class;
use crate::errors::type_error;

static STRING: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::String"));
static NUMBER: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Number"));
static LIST: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::List"));
static ARGUMENT_LIST: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::ArgumentList"));
static MAP: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Map"));
static BOOLEAN: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Boolean"));
static NULL: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Null"));
static FUNCTION: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Function"));
static MIXIN: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Mixin"));
static COMPILER_MODULE: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Module"));
static COLOR: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Color"));
static CALCULATION: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::Calculation"));
static CALCULATION_OPERATION: Lazy<RClass> =
    Lazy::new(|ruby| sass_class(ruby, "CalculationValue::CalculationOperation"));
static CALCULATION_INTERPOLATION: Lazy<RClass> =
    Lazy::new(|ruby| sass_class(ruby, "CalculationValue::CalculationInterpolation"));
static VALUE: Lazy<magnus::RModule> = Lazy::new(|ruby| {
    ruby.class_object()
        .const_get::<_, magnus::RModule>("Sass")
        .and_then(|sass| sass.const_get("Value"))
        .expect("Sass::Value is defined")
});

/// Looks up every class this module builds, once, at load (see
/// [`super::preload`]).
pub(super) fn preload(ruby: &Ruby) {
    for class in [
        &STRING,
        &NUMBER,
        &LIST,
        &ARGUMENT_LIST,
        &MAP,
        &BOOLEAN,
        &NULL,
        &FUNCTION,
        &MIXIN,
        &COMPILER_MODULE,
        &COLOR,
        &CALCULATION,
        &CALCULATION_OPERATION,
        &CALCULATION_INTERPOLATION,
    ] {
        Lazy::force(class, ruby);
    }
    Lazy::force(&VALUE, ruby);
}

/// How deeply protobuf messages may nest inside a `Value` the host sends.
/// The compiler's protobuf reader refuses deeper messages with a protocol
/// error that ends the compiler, so the host refuses them first, failing only
/// the function call. Counted as `nest` counts (two levels per value: the
/// `Value` and the message in it; one more per map entry), Dart Sass 1.105.0
/// reads 98 levels: 48 nested lists around a string, or 32 nested maps.
pub const MAX_VALUE_NESTING: usize = 98;

/// What value conversion needs to know about the compilation it serves.
pub struct Context {
    /// A token unique to this compilation in this process: compiler
    /// functions, mixins and modules are tagged with it.
    pub compilation: u64,
    /// The Ruby session, which assigns ids to host functions returned to Sass.
    pub session: Value,
    /// How many protobuf messages deep the value being converted is.
    pub nesting: std::cell::Cell<usize>,
}

impl Context {
    /// Counts `levels` more levels of message nesting while the guard lives,
    /// refusing a value the compiler could not read.
    fn nest(&self, ruby: &Ruby, levels: usize) -> Result<Nesting<'_>, Error> {
        self.enter(ruby, levels)?;
        Ok(Nesting {
            context: self,
            levels,
        })
    }

    /// Counts `levels` more levels of message nesting until [`Self::leave`],
    /// refusing a value the compiler could not read.
    fn enter(&self, ruby: &Ruby, levels: usize) -> Result<(), Error> {
        let depth = self.nesting.get() + levels;
        if depth > MAX_VALUE_NESTING {
            return Err(type_error(
                ruby,
                format!(
                    "the value is nested too deeply for the compiler to read: it reads at most \
                     {MAX_VALUE_NESTING} levels of protobuf messages (48 nested lists or 32 nested maps)"
                ),
            ));
        }
        self.nesting.set(depth);
        Ok(())
    }

    fn leave(&self, levels: usize) {
        self.nesting.set(self.nesting.get() - levels);
    }
}

/// Levels of nesting counted by [`Context::nest`], given back on drop.
struct Nesting<'a> {
    context: &'a Context,
    levels: usize,
}

impl Drop for Nesting<'_> {
    fn drop(&mut self) {
        self.context
            .nesting
            .set(self.context.nesting.get() - self.levels);
    }
}

fn constant(ruby: &Ruby, class: &Lazy<RClass>, name: &str) -> Result<Value, Error> {
    ruby.get_inner(class).const_get(name)
}

fn separator_to_ruby(ruby: &Ruby, separator: i32) -> Value {
    match ListSeparator::try_from(separator) {
        Ok(ListSeparator::Comma) => ruby.str_new(",").as_value(),
        Ok(ListSeparator::Space) => ruby.str_new(" ").as_value(),
        Ok(ListSeparator::Slash) => ruby.str_new("/").as_value(),
        Ok(ListSeparator::Undecided) | Err(_) => ruby.qnil().as_value(),
    }
}

fn separator_from_ruby(ruby: &Ruby, separator: Value) -> Result<ListSeparator, Error> {
    if separator.is_nil() {
        return Ok(ListSeparator::Undecided);
    }
    match rust_string(separator)?.as_str() {
        "," => Ok(ListSeparator::Comma),
        " " => Ok(ListSeparator::Space),
        "/" => Ok(ListSeparator::Slash),
        other => Err(type_error(
            ruby,
            format!("invalid list separator {other:?}"),
        )),
    }
}

fn strings_to_ruby(ruby: &Ruby, strings: &[String]) -> Result<RArray, Error> {
    let array = ruby.ary_new_capa(strings.len());
    for string in strings {
        array.push(ruby.str_new(string))?;
    }
    Ok(array)
}

/// Argument lists created for one function call, so their keyword access can
/// be reported back.
pub struct ArgumentLists(RArray);

impl ArgumentLists {
    /// An empty set.
    pub fn new(ruby: &Ruby) -> Self {
        Self(ruby.ary_new())
    }

    /// The protocol ids of the argument lists whose keywords were read.
    pub fn accessed(&self) -> Result<Vec<u32>, Error> {
        let mut ids = Vec::new();
        for list in self.0 {
            let list = RObject::try_convert(list)?;
            let accessed: Value = list.ivar_get("@keywords_accessed")?;
            if accessed.to_bool() {
                ids.push(list.ivar_get("@id")?);
            }
        }
        Ok(ids)
    }
}

/// Builds the `Sass::Value` for a protobuf value.
///
/// The compiler may send lists and maps nested to any depth (a function
/// argument 2 000 levels deep is fine to it), so this walks them with a work
/// stack of its own instead of recursing: whatever the depth, the Ruby calls
/// it makes sit at the same shallow depth of the machine stack. Recursing,
/// each level took machine stack, and Ruby raises `SystemStackError` when
/// the stack it believes it has runs out: a few hundred levels on musl's
/// main thread, whose stack Ruby sees as ~124 KiB (Ruby bug 14387).
pub fn to_ruby(
    ruby: &Ruby,
    value: &ProtoValue,
    context: &Context,
    lists: &ArgumentLists,
) -> Result<Value, Error> {
    // The containers being filled live in the walk's work stack, on Rust's
    // heap, where Ruby's garbage collector does not look: this array, on the
    // machine stack, keeps them (and a map key waiting for its value) alive.
    let keep = ruby.ary_new();
    walk(
        value,
        |value| open_or_convert(ruby, value, context, lists, &keep),
        |container, child| container.accept(ruby, child, &keep),
        |container| container.finish(ruby, context, lists),
    )
}

/// What one step of a [`walk`] made of a value: a container `C` opened for
/// its children (the first of which, an `N`, comes next), or the finished
/// value `D`.
enum Walked<C, N, D> {
    Open(C, N),
    Done(D),
}

/// Converts a value of nested containers depth first with a work stack of
/// its own, not recursion (see [`to_ruby`]): `begin` converts a value or
/// opens its container, `accept` hands a container a converted child and
/// names the next child to convert, if any, and `finish` makes the
/// converted value of a container whose children are all converted.
fn walk<C, N, D>(
    first: N,
    mut begin: impl FnMut(N) -> Result<Walked<C, N, D>, Error>,
    mut accept: impl FnMut(&mut C, D) -> Result<Option<N>, Error>,
    mut finish: impl FnMut(C) -> Result<D, Error>,
) -> Result<D, Error> {
    let mut open: Vec<C> = Vec::new();
    let mut next = first;
    loop {
        let mut done = match begin(next)? {
            Walked::Open(container, first) => {
                open.push(container);
                next = first;
                continue;
            }
            Walked::Done(done) => done,
        };
        // Hand the finished value to the container it belongs to, and
        // finish every container that is now full.
        loop {
            let Some(container) = open.last_mut() else {
                return Ok(done);
            };
            if let Some(child) = accept(container, done)? {
                next = child;
                break;
            }
            done = finish(open.pop().expect("a container is open"))?;
        }
    }
}

/// What [`open_or_convert`] made of a value.
type Step<'a> = Walked<Open<'a>, &'a ProtoValue, Value>;

/// A list, argument list or map whose children are being converted.
enum Open<'a> {
    List {
        list: &'a proto::List,
        contents: RArray,
    },
    ArgumentList {
        list: &'a proto::ArgumentList,
        contents: RArray,
        keywords: RHash,
        /// The keywords not yet converted, and the name of the one being
        /// converted.
        names: std::collections::btree_map::Iter<'a, String, ProtoValue>,
        name: Option<&'a String>,
    },
    Map {
        entries: &'a [proto::map::Entry],
        contents: RHash,
        /// The entry being converted, and its key once converted.
        index: usize,
        key: Option<Value>,
    },
}

impl<'a> Open<'a> {
    /// Takes a converted child; the next child to convert, if any.
    fn accept(
        &mut self,
        ruby: &Ruby,
        child: Value,
        keep: &RArray,
    ) -> Result<Option<&'a ProtoValue>, Error> {
        match self {
            Open::List { list, contents } => {
                contents.push(child)?;
                Ok(list.contents.get(contents.len()))
            }
            Open::ArgumentList {
                list,
                contents,
                keywords,
                names,
                name,
            } => {
                match name.take() {
                    Some(name) => keywords.aset(ruby.to_symbol(name), child)?,
                    None => contents.push(child)?,
                }
                if let Some(element) = list.contents.get(contents.len()) {
                    return Ok(Some(element));
                }
                Ok(names.next().map(|(next, element)| {
                    *name = Some(next);
                    element
                }))
            }
            Open::Map {
                entries,
                contents,
                index,
                key,
            } => {
                match key.take() {
                    None => {
                        keep.push(child)?;
                        *key = Some(child);
                        return Ok(entries[*index].value.as_ref());
                    }
                    Some(converted) => contents.aset(converted, child)?,
                }
                *index += 1;
                Ok(entries.get(*index).and_then(|entry| entry.key.as_ref()))
            }
        }
    }

    /// The `Sass::Value` of a container whose children are all converted.
    fn finish(self, ruby: &Ruby, context: &Context, lists: &ArgumentLists) -> Result<Value, Error> {
        match self {
            Open::List { list, contents } => list_to_ruby(ruby, list, contents),
            Open::ArgumentList {
                list,
                contents,
                keywords,
                ..
            } => argument_list_to_ruby(ruby, list, contents, keywords, context, lists),
            Open::Map { contents, .. } => ruby.get_inner(&MAP).new_instance((contents,)),
        }
    }
}

/// Converts a value that holds no other value; opens a list, argument list
/// or map that has children (one without is converted at once).
fn open_or_convert<'a>(
    ruby: &Ruby,
    value: &'a ProtoValue,
    context: &Context,
    lists: &ArgumentLists,
    keep: &RArray,
) -> Result<Step<'a>, Error> {
    use proto::Value as V;

    let Some(value) = &value.value else {
        return Err(type_error(
            ruby,
            "the compiler sent a Value without a value",
        ));
    };
    let done = match value {
        V::String(string) => ruby.get_inner(&STRING).new_instance((
            ruby.str_new(&string.text),
            magnus::kwargs!(ruby, "quoted" => string.quoted),
        ))?,
        V::Number(number) => number_to_ruby(ruby, number)?,
        V::List(list) => {
            let contents = ruby.ary_new_capa(list.contents.len());
            let Some(first) = list.contents.first() else {
                return list_to_ruby(ruby, list, contents).map(Walked::Done);
            };
            keep.push(contents)?;
            return Ok(Walked::Open(Open::List { list, contents }, first));
        }
        V::ArgumentList(list) => {
            let contents = ruby.ary_new_capa(list.contents.len());
            let keywords = ruby.hash_new();
            let mut names = list.keywords.iter();
            let (first, name) = match list.contents.first() {
                Some(first) => (Some(first), None),
                None => match names.next() {
                    Some((name, first)) => (Some(first), Some(name)),
                    None => (None, None),
                },
            };
            let Some(first) = first else {
                return argument_list_to_ruby(ruby, list, contents, keywords, context, lists)
                    .map(Walked::Done);
            };
            keep.push(contents)?;
            keep.push(keywords)?;
            let open = Open::ArgumentList {
                list,
                contents,
                keywords,
                names,
                name,
            };
            return Ok(Walked::Open(open, first));
        }
        V::Map(map) => {
            if map
                .entries
                .iter()
                .any(|entry| entry.key.is_none() || entry.value.is_none())
            {
                return Err(type_error(
                    ruby,
                    "the compiler sent a map entry without key or value",
                ));
            }
            let contents = ruby.hash_new();
            let Some(first) = map.entries.first().and_then(|entry| entry.key.as_ref()) else {
                return ruby
                    .get_inner(&MAP)
                    .new_instance((contents,))
                    .map(Walked::Done);
            };
            keep.push(contents)?;
            let open = Open::Map {
                entries: &map.entries,
                contents,
                index: 0,
                key: None,
            };
            return Ok(Walked::Open(open, first));
        }
        V::Singleton(singleton) => match SingletonValue::try_from(*singleton) {
            Ok(SingletonValue::True) => constant(ruby, &BOOLEAN, "TRUE")?,
            Ok(SingletonValue::False) => constant(ruby, &BOOLEAN, "FALSE")?,
            Ok(SingletonValue::Null) => constant(ruby, &NULL, "NULL")?,
            Err(_) => {
                return Err(type_error(
                    ruby,
                    format!("unknown singleton value {singleton}"),
                ))
            }
        },
        V::CompilerFunction(function) => compiler_object(ruby, &FUNCTION, function.id, context)?,
        V::CompilerMixin(mixin) => compiler_object(ruby, &MIXIN, mixin.id, context)?,
        V::CompilerModule(module) => compiler_object(ruby, &COMPILER_MODULE, module.id, context)?,
        V::HostFunction(_) => {
            return Err(type_error(
                ruby,
                "the compiler sent a HostFunction, which only the host may create",
            ))
        }
        V::Color(color) => color_to_ruby(ruby, color)?,
        V::Calculation(calculation) => calculation_to_ruby(ruby, calculation)?,
    };
    Ok(Walked::Done(done))
}

fn list_to_ruby(ruby: &Ruby, list: &proto::List, contents: RArray) -> Result<Value, Error> {
    ruby.get_inner(&LIST).new_instance((
        contents,
        magnus::kwargs!(
            ruby,
            "separator" => separator_to_ruby(ruby, list.separator),
            "bracketed" => list.has_brackets
        ),
    ))
}

fn argument_list_to_ruby(
    ruby: &Ruby,
    list: &proto::ArgumentList,
    contents: RArray,
    keywords: RHash,
    context: &Context,
    lists: &ArgumentLists,
) -> Result<Value, Error> {
    let object = RObject::try_convert(ruby.get_inner(&ARGUMENT_LIST).new_instance((
        contents,
        keywords,
        separator_to_ruby(ruby, list.separator),
    ))?)?;
    object.ivar_set("@id", list.id)?;
    object.ivar_set("@compilation", context.compilation)?;
    lists.0.push(object)?;
    Ok(object.as_value())
}

fn number_to_ruby(ruby: &Ruby, number: &proto::Number) -> Result<Value, Error> {
    let class = ruby.get_inner(&NUMBER);
    if number.numerators.is_empty() && number.denominators.is_empty() {
        return class.new_instance((number.value,));
    }
    let units = ruby.hash_new();
    units.aset(
        ruby.sym_new("numerator_units"),
        strings_to_ruby(ruby, &number.numerators)?,
    )?;
    units.aset(
        ruby.sym_new("denominator_units"),
        strings_to_ruby(ruby, &number.denominators)?,
    )?;
    class.new_instance((number.value, units))
}

/// A compiler function, mixin or module: allocated (it has no public
/// constructor), tagged with its id and compilation, and frozen.
fn compiler_object(
    ruby: &Ruby,
    class: &Lazy<RClass>,
    id: u32,
    context: &Context,
) -> Result<Value, Error> {
    let object = RObject::try_convert(ruby.get_inner(class).funcall("allocate", ())?)?;
    object.ivar_set("@id", id)?;
    object.ivar_set("@compilation", context.compilation)?;
    object.freeze();
    Ok(object.as_value())
}

/// The keyword names of the three channels of `space`, as
/// `Sass::Value::Color.new` takes them.
fn channel_names(space: &str) -> Option<[&'static str; 3]> {
    Some(match space {
        "rgb" | "srgb" | "srgb-linear" | "display-p3" | "display-p3-linear" | "a98-rgb"
        | "prophoto-rgb" | "rec2020" => ["red", "green", "blue"],
        "hsl" => ["hue", "saturation", "lightness"],
        "hwb" => ["hue", "whiteness", "blackness"],
        "lab" | "oklab" => ["lightness", "a", "b"],
        "lch" | "oklch" => ["lightness", "chroma", "hue"],
        "xyz" | "xyz-d50" | "xyz-d65" => ["x", "y", "z"],
        _ => return None,
    })
}

/// `Sass::Value::Color.new(space:, <channels>:, alpha:)`; a missing channel
/// is passed as nil.
fn color_to_ruby(ruby: &Ruby, color: &proto::Color) -> Result<Value, Error> {
    let Some(names) = channel_names(&color.space) else {
        return Err(type_error(
            ruby,
            format!(
                "the compiler sent a color in the unknown space {:?}",
                color.space
            ),
        ));
    };
    let options = ruby.hash_new();
    options.aset(ruby.sym_new("space"), ruby.str_new(&color.space))?;
    for (name, channel) in names
        .iter()
        .zip([color.channel1, color.channel2, color.channel3])
    {
        options.aset(ruby.sym_new(*name), channel)?;
    }
    options.aset(ruby.sym_new("alpha"), color.alpha)?;
    ruby.get_inner(&COLOR)
        .new_instance((magnus::KwArgs(options),))
}

/// A calculation from the compiler: allocated and filled in (the compiler
/// sends calculations of any name, already simplified; the public
/// constructors cover only the four a host may create).
fn calculation_to_ruby(ruby: &Ruby, calculation: &proto::Calculation) -> Result<Value, Error> {
    let arguments = ruby.ary_new_capa(calculation.arguments.len());
    for argument in &calculation.arguments {
        arguments.push(calculation_value_to_ruby(ruby, argument)?)?;
    }
    arguments.freeze();
    let object = RObject::try_convert(ruby.get_inner(&CALCULATION).funcall("allocate", ())?)?;
    let name = ruby.str_new(&calculation.name);
    name.freeze();
    object.ivar_set("@name", name)?;
    object.ivar_set("@arguments", arguments)?;
    object.freeze();
    Ok(object.as_value())
}

fn calculation_value_to_ruby(
    ruby: &Ruby,
    value: &proto::calculation::CalculationValue,
) -> Result<Value, Error> {
    use proto::calculation::calculation_value::Value as C;
    match &value.value {
        Some(C::Number(number)) => number_to_ruby(ruby, number),
        Some(C::String(text)) => ruby
            .get_inner(&STRING)
            .new_instance((ruby.str_new(text), magnus::kwargs!(ruby, "quoted" => false))),
        Some(C::Interpolation(text)) => ruby
            .get_inner(&CALCULATION_INTERPOLATION)
            .new_instance((ruby.str_new(text),)),
        Some(C::Operation(operation)) => {
            let operator = match CalculationOperator::try_from(operation.operator) {
                Ok(CalculationOperator::Plus) => "+",
                Ok(CalculationOperator::Minus) => "-",
                Ok(CalculationOperator::Times) => "*",
                Ok(CalculationOperator::Divide) => "/",
                Err(_) => {
                    return Err(type_error(
                        ruby,
                        format!("unknown calculation operator {}", operation.operator),
                    ))
                }
            };
            let (Some(left), Some(right)) = (&operation.left, &operation.right) else {
                return Err(type_error(
                    ruby,
                    "a calculation operation without an operand",
                ));
            };
            ruby.get_inner(&CALCULATION_OPERATION).new_instance((
                ruby.str_new(operator),
                calculation_value_to_ruby(ruby, left)?,
                calculation_value_to_ruby(ruby, right)?,
            ))
        }
        Some(C::Calculation(calculation)) => calculation_to_ruby(ruby, calculation),
        None => Err(type_error(
            ruby,
            "the compiler sent an empty calculation value",
        )),
    }
}

fn color_from_ruby(ruby: &Ruby, value: Value) -> Result<proto::Value, Error> {
    let object = RObject::try_convert(value)?;
    let space: RString = object.ivar_get("@space")?;
    let channels: RArray = object.ivar_get("@channels")?;
    let alpha: Option<f64> = object.ivar_get("@alpha")?;
    if channels.len() != 3 {
        return Err(type_error(
            ruby,
            "a Sass::Value::Color must have three channels",
        ));
    }
    Ok(proto::Value::Color(proto::Color {
        space: string_of(space)?,
        channel1: channels.entry(0)?,
        channel2: channels.entry(1)?,
        channel3: channels.entry(2)?,
        alpha,
    }))
}

fn calculation_from_ruby(
    ruby: &Ruby,
    value: Value,
    context: &Context,
) -> Result<proto::Calculation, Error> {
    let object = RObject::try_convert(value)?;
    let name = rust_string(object.ivar_get("@name")?)?;
    // The compiler refuses any other name from a host with a protocol error
    // (which would end it): refuse it here, failing only the function call,
    // in the compiler's own words.
    if !matches!(name.as_str(), "calc" | "min" | "max" | "clamp") {
        return Err(type_error(
            ruby,
            format!("Value.Calculation.name {name:?} is not a recognized calculation type."),
        ));
    }
    let arguments: RArray = object.ivar_get("@arguments")?;
    Ok(proto::Calculation {
        name,
        arguments: arguments
            .into_iter()
            .map(|argument| calculation_value_from_ruby(ruby, argument, context))
            .collect::<Result<_, _>>()?,
    })
}

fn calculation_value_from_ruby(
    ruby: &Ruby,
    value: Value,
    context: &Context,
) -> Result<proto::calculation::CalculationValue, Error> {
    use proto::calculation::{calculation_value::Value as C, CalculationOperation};

    // The `CalculationValue`, and the message inside it.
    let _nesting = context.nest(ruby, 2)?;
    let converted = if value.is_kind_of(ruby.get_inner(&NUMBER)) {
        match number_from_ruby(value)? {
            proto::Value::Number(number) => C::Number(number),
            _ => unreachable!("numbers convert to numbers"),
        }
    } else if value.is_kind_of(ruby.get_inner(&STRING)) {
        let quoted: bool = value.funcall("quoted?", ())?;
        if quoted {
            return Err(type_error(
                ruby,
                format!(
                    "{} is quoted: calculations take unquoted strings",
                    value.inspect()
                ),
            ));
        }
        C::String(rust_string(value.funcall("text", ())?)?)
    } else if value.is_kind_of(ruby.get_inner(&CALCULATION_INTERPOLATION)) {
        C::Interpolation(rust_string(value.funcall("value", ())?)?)
    } else if value.is_kind_of(ruby.get_inner(&CALCULATION_OPERATION)) {
        let operator = match rust_string(value.funcall("operator", ())?)?.as_str() {
            "+" => CalculationOperator::Plus,
            "-" => CalculationOperator::Minus,
            "*" => CalculationOperator::Times,
            "/" => CalculationOperator::Divide,
            other => {
                return Err(type_error(
                    ruby,
                    format!("invalid calculation operator {other:?}"),
                ))
            }
        };
        C::Operation(Box::new(CalculationOperation {
            operator: operator as i32,
            left: Some(Box::new(calculation_value_from_ruby(
                ruby,
                value.funcall("left", ())?,
                context,
            )?)),
            right: Some(Box::new(calculation_value_from_ruby(
                ruby,
                value.funcall("right", ())?,
                context,
            )?)),
        }))
    } else if value.is_kind_of(ruby.get_inner(&CALCULATION)) {
        C::Calculation(calculation_from_ruby(ruby, value, context)?)
    } else {
        return Err(type_error(
            ruby,
            format!("{} cannot be part of a calculation", value.inspect()),
        ));
    };
    Ok(proto::calculation::CalculationValue {
        value: Some(converted),
    })
}

fn number_from_ruby(value: Value) -> Result<proto::Value, Error> {
    // A Number keeps whatever value it was made with (a String included)
    // until it is used; what is not a Float or an Integer is sent as its
    // `to_f`, as the established gem sends every value. Only that case pays
    // for the extra call.
    let raw: Value = value.funcall("value", ())?;
    let number = match Float::from_value(raw) {
        Some(float) => float.to_f64(),
        None if Integer::from_value(raw).is_some() => f64::try_convert(raw)?,
        None => Float::try_convert(raw.funcall("to_f", ())?)?.to_f64(),
    };
    Ok(proto::Value::Number(proto::Number {
        value: number,
        numerators: strings_from_ruby(value.funcall("numerator_units", ())?)?,
        denominators: strings_from_ruby(value.funcall("denominator_units", ())?)?,
    }))
}

/// Builds the protobuf value for a `Sass::Value`, refusing one nested more
/// deeply than the compiler reads ([`MAX_VALUE_NESTING`]).
///
/// Lists, argument lists and maps are walked with a work stack of its own,
/// as [`to_ruby`] does, so no level of nesting takes machine stack.
pub fn from_ruby(ruby: &Ruby, value: Value, context: &Context) -> Result<ProtoValue, Error> {
    // The Ruby arrays being walked live in the walk's work stack, on Rust's
    // heap, where Ruby's garbage collector does not look: this array, on the
    // machine stack, keeps them alive.
    let keep = ruby.ary_new();
    let base = context.nesting.get();
    let built = walk(
        value,
        |value| begin_from_ruby(ruby, value, context, &keep),
        |building, child| building.accept(child),
        |building| {
            context.leave(building.levels());
            Ok(building.finish())
        },
    );
    // An error leaves containers open: their levels are given back here.
    context.nesting.set(base);
    built
}

/// What [`begin_from_ruby`] made of a value.
type Begun = Walked<Building, Value, ProtoValue>;

/// A list, argument list or map whose children are being converted.
enum Building {
    List {
        list: proto::List,
        elements: RArray,
    },
    ArgumentList {
        list: proto::ArgumentList,
        elements: RArray,
        /// The keywords' names and values, and how many are converted.
        keywords: Vec<(String, Value)>,
        converted: usize,
    },
    Map {
        pairs: RArray,
        entries: Vec<proto::map::Entry>,
        key: Option<ProtoValue>,
    },
}

impl Building {
    /// How many levels of nesting its children are counted below it: its
    /// `Value` and the message inside, and for a map the entry too.
    fn levels(&self) -> usize {
        match self {
            Building::Map { .. } => 3,
            _ => 2,
        }
    }

    /// Takes a converted child; the next child to convert, if any.
    fn accept(&mut self, child: ProtoValue) -> Result<Option<Value>, Error> {
        match self {
            Building::List { list, elements } => {
                list.contents.push(child);
                element(*elements, list.contents.len())
            }
            Building::ArgumentList {
                list,
                elements,
                keywords,
                converted,
            } => {
                if list.contents.len() < elements.len() {
                    list.contents.push(child);
                    if let Some(next) = element(*elements, list.contents.len())? {
                        return Ok(Some(next));
                    }
                } else {
                    let name = std::mem::take(&mut keywords[*converted].0);
                    list.keywords.insert(name, child);
                    *converted += 1;
                }
                Ok(keywords.get(*converted).map(|(_, value)| *value))
            }
            Building::Map {
                pairs,
                entries,
                key,
            } => {
                let index = entries.len();
                match key.take() {
                    None => {
                        *key = Some(child);
                        pair_part(*pairs, index, 1).map(Some)
                    }
                    Some(converted) => {
                        entries.push(proto::map::Entry {
                            key: Some(converted),
                            value: Some(child),
                        });
                        if entries.len() < pairs.len() {
                            pair_part(*pairs, entries.len(), 0).map(Some)
                        } else {
                            Ok(None)
                        }
                    }
                }
            }
        }
    }

    fn finish(self) -> ProtoValue {
        let value = match self {
            Building::List { list, .. } => proto::Value::List(list),
            Building::ArgumentList { list, .. } => proto::Value::ArgumentList(list),
            Building::Map { entries, .. } => proto::Value::Map(proto::Map { entries }),
        };
        ProtoValue { value: Some(value) }
    }
}

/// The element of `array` at `index`, if there is one.
fn element(array: RArray, index: usize) -> Result<Option<Value>, Error> {
    if index < array.len() {
        array.entry(index as isize).map(Some)
    } else {
        Ok(None)
    }
}

/// The key (`part` 0) or value (1) of the `index`th of a Hash's pairs.
fn pair_part(pairs: RArray, index: usize, part: isize) -> Result<Value, Error> {
    RArray::try_convert(pairs.entry::<Value>(index as isize)?)?.entry(part)
}

/// Converts a value that holds no other value; opens a list, argument list
/// or map that has children (one without is converted at once), counting
/// its levels of nesting (given back when it is finished).
fn begin_from_ruby(
    ruby: &Ruby,
    value: Value,
    context: &Context,
    keep: &RArray,
) -> Result<Begun, Error> {
    use proto::Value as V;

    // The `Value` message itself, and the message inside it.
    let _nesting = context.nest(ruby, 2)?;
    let converted = if value.is_kind_of(ruby.get_inner(&STRING)) {
        let text: RString = value.funcall("text", ())?;
        let quoted: bool = value.funcall("quoted?", ())?;
        V::String(proto::String {
            text: string_of(text)?,
            quoted,
        })
    } else if value.is_kind_of(ruby.get_inner(&NUMBER)) {
        number_from_ruby(value)?
    } else if value.is_kind_of(ruby.get_inner(&BOOLEAN)) {
        let truthy: bool = value.funcall("to_bool", ())?;
        V::Singleton(if truthy {
            SingletonValue::True
        } else {
            SingletonValue::False
        } as i32)
    } else if value.is_kind_of(ruby.get_inner(&NULL)) {
        V::Singleton(SingletonValue::Null as i32)
    } else if value.is_kind_of(ruby.get_inner(&ARGUMENT_LIST)) {
        match argument_list_from_ruby(ruby, value, context)? {
            Ok(known) => known,
            Err((list, elements, keywords)) => {
                let first =
                    element(elements, 0)?.or_else(|| keywords.first().map(|(_, value)| *value));
                let Some(first) = first else {
                    return Ok(Walked::Done(ProtoValue {
                        value: Some(V::ArgumentList(list)),
                    }));
                };
                keep.push(elements)?;
                for (_, value) in &keywords {
                    keep.push(*value)?;
                }
                return opened(
                    context,
                    Building::ArgumentList {
                        list,
                        elements,
                        keywords,
                        converted: 0,
                    },
                    first,
                );
            }
        }
    } else if value.is_kind_of(ruby.get_inner(&LIST)) {
        let elements: RArray = value.funcall("to_a", ())?;
        let list = proto::List {
            separator: separator_from_ruby(ruby, value.funcall("separator", ())?)? as i32,
            has_brackets: value.funcall("bracketed?", ())?,
            contents: Vec::with_capacity(elements.len()),
        };
        let Some(first) = element(elements, 0)? else {
            return Ok(Walked::Done(ProtoValue {
                value: Some(V::List(list)),
            }));
        };
        keep.push(elements)?;
        return opened(context, Building::List { list, elements }, first);
    } else if value.is_kind_of(ruby.get_inner(&MAP)) {
        // Pairs as an array rather than `RHash::foreach`: an error inside
        // `foreach` is raised through Ruby and would come back as a Ruby
        // exception instead of the host's own conversion error.
        let pairs = hash_pairs(value.funcall("contents", ())?)?;
        if pairs.is_empty() {
            return Ok(Walked::Done(ProtoValue {
                value: Some(V::Map(proto::Map::default())),
            }));
        }
        // Each entry is one more message around its key and value: refused
        // here if its key would be too deep.
        drop(context.nest(ruby, 3)?);
        let first = pair_part(pairs, 0, 0)?;
        keep.push(pairs)?;
        let building = Building::Map {
            pairs,
            entries: Vec::with_capacity(pairs.len()),
            key: None,
        };
        return opened(context, building, first);
    } else if value.is_kind_of(ruby.get_inner(&FUNCTION)) {
        let object = RObject::try_convert(value)?;
        let callback: Value = object.ivar_get("@callback")?;
        if callback.is_nil() {
            V::CompilerFunction(proto::CompilerFunction {
                id: compiler_id(ruby, object, context, "function")?,
            })
        } else {
            let registered: RArray = context
                .session
                .funcall("register_host_function", (object,))?;
            V::HostFunction(proto::HostFunction {
                id: registered.entry(0)?,
                signature: rust_string(registered.entry(1)?)?,
            })
        }
    } else if value.is_kind_of(ruby.get_inner(&MIXIN)) {
        V::CompilerMixin(proto::CompilerMixin {
            id: compiler_id(ruby, RObject::try_convert(value)?, context, "mixin")?,
        })
    } else if value.is_kind_of(ruby.get_inner(&CALCULATION)) {
        V::Calculation(calculation_from_ruby(ruby, value, context)?)
    } else if value.is_kind_of(ruby.get_inner(&COLOR)) {
        color_from_ruby(ruby, value)?
    } else if value.is_kind_of(ruby.get_inner(&COMPILER_MODULE)) {
        V::CompilerModule(proto::CompilerModule {
            id: compiler_id(ruby, RObject::try_convert(value)?, context, "module")?,
        })
    } else if value.is_kind_of(ruby.get_inner(&VALUE)) {
        return Err(type_error(
            ruby,
            format!(
                "{} values are not supported by this version of sass-embedded",
                value.class().inspect()
            ),
        ));
    } else {
        return Err(type_error(
            ruby,
            format!("{} is not a Sass::Value", value.inspect()),
        ));
    };
    Ok(Walked::Done(ProtoValue {
        value: Some(converted),
    }))
}

/// Opens `building`, whose first child is `first`: its children are counted
/// `building.levels()` deeper, until it is finished.
fn opened(context: &Context, building: Building, first: Value) -> Result<Begun, Error> {
    // The guard of `begin_from_ruby` gives its two levels back when it
    // returns; the container holds them (and more) until it is finished.
    context
        .nesting
        .set(context.nesting.get() + building.levels());
    Ok(Walked::Open(building, first))
}

/// A Hash's `[key, value]` pairs, as an Array.
fn hash_pairs(hash: RHash) -> Result<RArray, Error> {
    hash.funcall("to_a", ())
}

fn strings_from_ruby(array: RArray) -> Result<Vec<String>, Error> {
    array.into_iter().map(rust_string).collect()
}

/// The id of a compiler function, mixin or module, if it belongs to this
/// compilation.
fn compiler_id(ruby: &Ruby, object: RObject, context: &Context, what: &str) -> Result<u32, Error> {
    let compilation: u64 = object.ivar_get("@compilation")?;
    if compilation != context.compilation {
        return Err(type_error(
            ruby,
            format!(
                "a compiler {what} can only be used in the compilation that created it, \
                 not passed to another one"
            ),
        ));
    }
    object.ivar_get("@id")
}

/// An argument list: the compiler's own (`Ok`, by id) if it came from this
/// compilation, else its message without contents or keywords, its elements
/// and its keywords' names and values, to be converted.
#[allow(clippy::type_complexity)]
fn argument_list_from_ruby(
    ruby: &Ruby,
    value: Value,
    context: &Context,
) -> Result<Result<proto::Value, (proto::ArgumentList, RArray, Vec<(String, Value)>)>, Error> {
    let object = RObject::try_convert(value)?;
    let id: Option<u32> = object.ivar_get("@id")?;
    let compilation: Option<u64> = object.ivar_get("@compilation")?;
    if let (Some(id), Some(compilation)) = (id, compilation) {
        if id != 0 && compilation == context.compilation {
            // The compiler still knows this list (and its keywords).
            return Ok(Ok(proto::Value::ArgumentList(proto::ArgumentList {
                id,
                ..Default::default()
            })));
        }
    }
    let elements: RArray = value.funcall("to_a", ())?;
    let mut keywords = Vec::new();
    for pair in hash_pairs(object.ivar_get("@keywords")?)? {
        let pair = RArray::try_convert(pair)?;
        let name: Value = pair.entry(0)?;
        let name = if let Ok(symbol) = Symbol::try_convert(name) {
            symbol.name()?.into_owned()
        } else {
            rust_string(name)?
        };
        keywords.push((name, pair.entry(1)?));
    }
    let list = proto::ArgumentList {
        id: 0,
        separator: separator_from_ruby(ruby, value.funcall("separator", ())?)? as i32,
        contents: Vec::with_capacity(elements.len()),
        keywords: std::collections::BTreeMap::new(),
    };
    Ok(Err((list, elements, keywords)))
}

#[cfg(test)]
mod tests;
