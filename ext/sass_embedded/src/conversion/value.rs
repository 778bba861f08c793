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
    prelude::*, value::Lazy, Error, Float, RArray, RClass, RHash, RObject, RString, Ruby, Symbol,
    TryConvert, Value,
};
use sass_embedded_core::protocol::{
    value as proto, ListSeparator, SingletonValue, Value as ProtoValue,
};

use super::{rust_string, sass_class};
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
static COMPILER_MODULE: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Value::CompilerModule"));
static VALUE: Lazy<magnus::RModule> = Lazy::new(|ruby| {
    ruby.class_object()
        .const_get::<_, magnus::RModule>("Sass")
        .and_then(|sass| sass.const_get("Value"))
        .expect("Sass::Value is defined")
});

/// What value conversion needs to know about the compilation it serves.
pub struct Context {
    /// A token unique to this compilation in this process: compiler
    /// functions, mixins and modules are tagged with it.
    pub compilation: u64,
    /// The Ruby session, which assigns ids to host functions returned to Sass.
    pub session: Value,
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
pub fn to_ruby(
    ruby: &Ruby,
    value: &ProtoValue,
    context: &Context,
    lists: &ArgumentLists,
) -> Result<Value, Error> {
    use proto::Value as V;

    let Some(value) = &value.value else {
        return Err(type_error(
            ruby,
            "the compiler sent a Value without a value",
        ));
    };
    match value {
        V::String(string) => ruby.get_inner(&STRING).new_instance((
            ruby.str_new(&string.text),
            magnus::kwargs!(ruby, "quoted" => string.quoted),
        )),
        V::Number(number) => number_to_ruby(ruby, number),
        V::List(list) => {
            let contents = ruby.ary_new_capa(list.contents.len());
            for element in &list.contents {
                contents.push(to_ruby(ruby, element, context, lists)?)?;
            }
            ruby.get_inner(&LIST).new_instance((
                contents,
                magnus::kwargs!(
                    ruby,
                    "separator" => separator_to_ruby(ruby, list.separator),
                    "bracketed" => list.has_brackets
                ),
            ))
        }
        V::ArgumentList(list) => {
            let contents = ruby.ary_new_capa(list.contents.len());
            for element in &list.contents {
                contents.push(to_ruby(ruby, element, context, lists)?)?;
            }
            let keywords = ruby.hash_new();
            for (name, element) in &list.keywords {
                keywords.aset(
                    ruby.to_symbol(name),
                    to_ruby(ruby, element, context, lists)?,
                )?;
            }
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
        V::Map(map) => {
            let contents = ruby.hash_new();
            for entry in &map.entries {
                let (Some(key), Some(value)) = (&entry.key, &entry.value) else {
                    return Err(type_error(
                        ruby,
                        "the compiler sent a map entry without key or value",
                    ));
                };
                contents.aset(
                    to_ruby(ruby, key, context, lists)?,
                    to_ruby(ruby, value, context, lists)?,
                )?;
            }
            ruby.get_inner(&MAP).new_instance((contents,))
        }
        V::Singleton(singleton) => match SingletonValue::try_from(*singleton) {
            Ok(SingletonValue::True) => constant(ruby, &BOOLEAN, "TRUE"),
            Ok(SingletonValue::False) => constant(ruby, &BOOLEAN, "FALSE"),
            Ok(SingletonValue::Null) => constant(ruby, &NULL, "NULL"),
            Err(_) => Err(type_error(
                ruby,
                format!("unknown singleton value {singleton}"),
            )),
        },
        V::CompilerFunction(function) => compiler_object(ruby, &FUNCTION, function.id, context),
        V::CompilerMixin(mixin) => compiler_object(ruby, &MIXIN, mixin.id, context),
        V::CompilerModule(module) => compiler_object(ruby, &COMPILER_MODULE, module.id, context),
        V::HostFunction(_) => Err(type_error(
            ruby,
            "the compiler sent a HostFunction, which only the host may create",
        )),
        V::Color(_) => Err(type_error(
            ruby,
            "colors are not supported by this version of sass-embedded",
        )),
        V::Calculation(_) => Err(type_error(
            ruby,
            "calculations are not supported by this version of sass-embedded",
        )),
    }
}

fn number_to_ruby(ruby: &Ruby, number: &proto::Number) -> Result<Value, Error> {
    let class = ruby.get_inner(&NUMBER);
    if number.numerators.is_empty() && number.denominators.is_empty() {
        return class.new_instance((number.value,));
    }
    let units = ruby.hash_new();
    units.aset(
        ruby.to_symbol("numerator_units"),
        strings_to_ruby(ruby, &number.numerators)?,
    )?;
    units.aset(
        ruby.to_symbol("denominator_units"),
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

/// Converts a `Sass::Value` to its protobuf message.
pub fn from_ruby(ruby: &Ruby, value: Value, context: &Context) -> Result<ProtoValue, Error> {
    use proto::Value as V;

    let converted = if value.is_kind_of(ruby.get_inner(&STRING)) {
        let text: RString = value.funcall("text", ())?;
        let quoted: bool = value.funcall("quoted?", ())?;
        V::String(proto::String {
            text: text.to_string()?,
            quoted,
        })
    } else if value.is_kind_of(ruby.get_inner(&NUMBER)) {
        let number: f64 = Float::try_convert(value.funcall("value", ())?)?.to_f64();
        V::Number(proto::Number {
            value: number,
            numerators: strings_from_ruby(value.funcall("numerator_units", ())?)?,
            denominators: strings_from_ruby(value.funcall("denominator_units", ())?)?,
        })
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
        argument_list_from_ruby(ruby, value, context)?
    } else if value.is_kind_of(ruby.get_inner(&LIST)) {
        let contents: RArray = value.funcall("to_a", ())?;
        V::List(proto::List {
            separator: separator_from_ruby(ruby, value.funcall("separator", ())?)? as i32,
            has_brackets: value.funcall("bracketed?", ())?,
            contents: contents
                .into_iter()
                .map(|element| from_ruby(ruby, element, context))
                .collect::<Result<_, _>>()?,
        })
    } else if value.is_kind_of(ruby.get_inner(&MAP)) {
        let contents: RHash = value.funcall("contents", ())?;
        let mut entries = Vec::with_capacity(contents.len());
        contents.foreach(|key: Value, value: Value| {
            entries.push(proto::map::Entry {
                key: Some(from_ruby(ruby, key, context)?),
                value: Some(from_ruby(ruby, value, context)?),
            });
            Ok(magnus::r_hash::ForEach::Continue)
        })?;
        V::Map(proto::Map { entries })
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
    Ok(ProtoValue {
        value: Some(converted),
    })
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

fn argument_list_from_ruby(
    ruby: &Ruby,
    value: Value,
    context: &Context,
) -> Result<proto::Value, Error> {
    let object = RObject::try_convert(value)?;
    let id: Option<u32> = object.ivar_get("@id")?;
    let compilation: Option<u64> = object.ivar_get("@compilation")?;
    if let (Some(id), Some(compilation)) = (id, compilation) {
        if id != 0 && compilation == context.compilation {
            // The compiler still knows this list (and its keywords).
            return Ok(proto::Value::ArgumentList(proto::ArgumentList {
                id,
                ..Default::default()
            }));
        }
    }
    let contents: RArray = value.funcall("to_a", ())?;
    let keywords: RHash = object.ivar_get("@keywords")?;
    let mut converted_keywords = std::collections::HashMap::with_capacity(keywords.len());
    keywords.foreach(|name: Value, element: Value| {
        let name = if let Ok(symbol) = Symbol::try_convert(name) {
            symbol.name()?.into_owned()
        } else {
            rust_string(name)?
        };
        converted_keywords.insert(name, from_ruby(ruby, element, context)?);
        Ok(magnus::r_hash::ForEach::Continue)
    })?;
    Ok(proto::Value::ArgumentList(proto::ArgumentList {
        id: 0,
        separator: separator_from_ruby(ruby, value.funcall("separator", ())?)? as i32,
        contents: contents
            .into_iter()
            .map(|element| from_ruby(ruby, element, context))
            .collect::<Result<_, _>>()?,
        keywords: converted_keywords,
    }))
}
