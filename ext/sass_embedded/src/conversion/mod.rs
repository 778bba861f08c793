//! Conversion between protobuf messages and Ruby objects, in both directions.
//! This is the only place where the two meet: the compile request is built
//! here from the plain Ruby data the `Sass::Compiler` validated, and every
//! message for Ruby (results, errors, spans, log events, callback arguments)
//! becomes Ruby objects here, through the public constructors of the gem's
//! Ruby classes. Values (`Sass::Value::*`) have their own submodule.
//!
//! Ruby objects built here live on the stack or inside other Ruby objects
//! (arrays, hashes) until they are returned; none is kept in a Rust
//! collection, where the garbage collector could not see it.

pub mod plain;
mod request;
pub mod value;

use magnus::{
    encoding::Coderange, prelude::*, value::Lazy, Error, RArray, RClass, RString, Ruby, Symbol,
    TryConvert, Value,
};
use sass_embedded_core::protocol::{
    inbound_message::{
        self, compile_request, CanonicalizeResponse, CompileRequest, FileImportResponse,
        ImportResponse,
    },
    outbound_message::{
        compile_response, CanonicalizeRequest, CompileResponse, FileImportRequest, ImportRequest,
        LogEvent,
    },
    source_span, LogEventType, NodePackageImporter, OutputStyle, SourceSpan, Syntax,
};

use crate::classes::sass_class;
use crate::errors::{argument_error, COMPILE_ERROR};

/// The value of a protocol enum (`Syntax`, `OutputStyle`) that a Ruby
/// Symbol names: the protocol's name in lower case (`:indented` is
/// `INDENTED`), as `protocol_name` (prost's `as_str_name`) spells it. Which
/// names a caller may give is the Ruby layer's to say
/// (`Sass::Compiler::Arguments::SYNTAXES`, `Request::STYLES`).
pub(crate) fn named<E: TryFrom<i32>>(
    name: &str,
    protocol_name: fn(&E) -> &'static str,
) -> Option<E> {
    if name.bytes().any(|byte| byte.is_ascii_uppercase()) {
        return None;
    }
    (0..)
        .map_while(|value| E::try_from(value).ok())
        .find(|value| protocol_name(value).eq_ignore_ascii_case(name))
}

static COMPILE_RESULT: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "CompileResult"));
static SOURCE_SPAN: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Logger::SourceSpan"));
static SOURCE_LOCATION: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Logger::SourceLocation"));
/// `Sass::Compiler::Session`, whose class methods help the host.
pub(crate) static SESSION: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Compiler::Session"));

/// Looks up every Ruby class the conversions build, once, while the
/// extension loads. Looked up lazily instead, the first two threads to need
/// one at the same time would deadlock: magnus's `Lazy` holds a lock while
/// it calls Ruby (which may switch threads), and the second thread waits on
/// that lock holding the GVL the first one needs. Fails if the Ruby layer's
/// request layout is not the one this build reads by position (see
/// [`request`]).
pub fn preload(ruby: &Ruby) -> Result<(), Error> {
    for class in [&COMPILE_RESULT, &SOURCE_SPAN, &SOURCE_LOCATION, &SESSION] {
        Lazy::force(class, ruby);
    }
    value::preload(ruby);
    request::check_layout(ruby)
}

// ---------------------------------------------------------------------------
// Ruby → protobuf: the compile request
// ---------------------------------------------------------------------------

use request::Opt as Field;

/// The request Ruby built, read by field.
struct Fields(RArray);

impl Fields {
    /// The field's value; nil reads as absent.
    fn get(&self, field: Field) -> Option<Value> {
        self.0
            .entry::<Value>(field as isize)
            .ok()
            .filter(|value| !value.is_nil())
    }

    fn string(&self, field: Field) -> Result<Option<String>, Error> {
        self.get(field).map(rust_string).transpose()
    }

    fn bool(&self, field: Field) -> bool {
        self.get(field).is_some_and(|value| value.to_bool())
    }

    fn strings(&self, field: Field) -> Result<Vec<String>, Error> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(array) => RArray::try_convert(array)?
                .into_iter()
                .map(rust_string)
                .collect(),
        }
    }

    fn symbol(&self, field: Field) -> Result<Option<String>, Error> {
        self.get(field)
            .map(|value| Ok(Symbol::try_convert(value)?.name()?.into_owned()))
            .transpose()
    }
}

/// A Ruby String as the UTF-8 the compiler reads, by the established gem's
/// rules: a UTF-8 String is sent as it is, and what in it is not UTF-8
/// becomes U+FFFD (the compiler's decoder replaces it so there); a binary
/// String whose bytes are UTF-8 is read as UTF-8; any other String is
/// transcoded (`String#encode`), raising Ruby's `EncodingError`s where it
/// cannot be.
pub(crate) fn rust_string(value: Value) -> Result<String, Error> {
    string_of(RString::try_convert(value)?)
}

/// [`rust_string`] of an `RString`.
pub(crate) fn string_of(string: RString) -> Result<String, Error> {
    let ruby = Ruby::get_with(string);
    let encoding = string.enc_get();
    // The coderange is cached by Ruby: valid UTF-8, the common case, is not
    // scanned again.
    let broken = string.enc_coderange_scan() == Coderange::Broken;
    if encoding == ruby.utf8_encindex() {
        return if broken {
            // U+FFFD for each maximal invalid subpart, as the compiler's
            // UTF-8 decoder replaces them.
            Ok(String::from_utf8_lossy(&crate::gvl::bytes(string)).into_owned())
        } else {
            string.to_string()
        };
    }
    if encoding == ruby.ascii8bit_encindex() {
        if let Ok(text) = String::from_utf8(crate::gvl::bytes(string)) {
            return Ok(text);
        }
    } else if encoding == ruby.usascii_encindex() && !broken {
        return string.to_string();
    }
    let utf8: RString = string.funcall("encode", ("UTF-8",))?;
    utf8.to_string()
}

/// `Sass::Compiler::Arguments.utf8_text(string)`: [`string_of`]'s rule for
/// the Ruby side (the strings it reads itself: a function's signature, an
/// importer's URL, a path it makes absolute), so the rule lives here alone.
/// A String that is valid UTF-8 already is given back as it is (the common
/// case costs no copy); any other, its UTF-8 text as a new String.
fn utf8_text(ruby: &Ruby, string: RString) -> Result<RString, Error> {
    if string.enc_get() == ruby.utf8_encindex() && string.enc_coderange_scan() != Coderange::Broken
    {
        return Ok(string);
    }
    Ok(ruby.str_new(&string_of(string)?))
}

/// Defines what Ruby calls here: [`utf8_text`] on
/// `Sass::Compiler::Arguments`, which is loaded before the extension.
pub fn define(ruby: &Ruby) -> Result<(), Error> {
    let arguments: magnus::RModule = sass_class(ruby, "Compiler").const_get("Arguments")?;
    arguments.define_singleton_method("utf8_text", magnus::function!(utf8_text, 1))
}

/// Builds the `CompileRequest` from the fields `Sass::Compiler` validated.
pub fn compile_request(ruby: &Ruby, request: RArray) -> Result<CompileRequest, Error> {
    let request = Fields(request);
    if request.0.len() != request::OPTIONS.len() {
        return Err(argument_error(
            ruby,
            format!(
                "the request has {} fields, not {}",
                request.0.len(),
                request::OPTIONS.len()
            ),
        ));
    }
    let input = if let Some(path) = request.string(Field::Path)? {
        compile_request::Input::Path(path)
    } else {
        let source = request
            .string(Field::Source)?
            .ok_or_else(|| argument_error(ruby, "the request has neither a path nor a source"))?;
        let syntax = match request.symbol(Field::Syntax)?.as_deref() {
            None => Syntax::Scss,
            Some(name) => named(name, Syntax::as_str_name)
                .ok_or_else(|| argument_error(ruby, format!("unknown syntax :{name}")))?,
        };
        let importer = request
            .get(Field::Importer)
            .map(|descriptor| importer(ruby, descriptor))
            .transpose()?;
        compile_request::Input::String(compile_request::StringInput {
            source,
            url: request.string(Field::Url)?.unwrap_or_default(),
            syntax: syntax as i32,
            importer,
        })
    };
    let style = match request.symbol(Field::Style)?.as_deref() {
        None => OutputStyle::Expanded,
        Some(name) => named(name, OutputStyle::as_str_name)
            .ok_or_else(|| argument_error(ruby, format!("unknown style :{name}")))?,
    };
    // The importers, then the load paths, as the compiler tries them.
    let mut importers = Vec::new();
    for field in [Field::Importers, Field::LoadPaths] {
        if let Some(list) = request.get(field) {
            for descriptor in RArray::try_convert(list)? {
                importers.push(importer(ruby, descriptor)?);
            }
        }
    }
    Ok(CompileRequest {
        input: Some(input),
        style: style as i32,
        source_map: request.bool(Field::SourceMap),
        importers,
        global_functions: request.strings(Field::Functions)?,
        alert_color: request.bool(Field::AlertColor),
        alert_ascii: request.bool(Field::AlertAscii),
        verbose: request.bool(Field::Verbose),
        quiet_deps: request.bool(Field::QuietDeps),
        source_map_include_sources: request.bool(Field::SourceMapIncludeSources),
        charset: request.bool(Field::Charset),
        silent: request.bool(Field::Logger),
        fatal_deprecation: request.strings(Field::FatalDeprecations)?,
        silence_deprecation: request.strings(Field::SilenceDeprecations)?,
        future_deprecation: request.strings(Field::FutureDeprecations)?,
    })
}

/// One importer descriptor: `[:path, dir]`, `[:importer, id, schemes]`,
/// `[:file_importer, id]` or `[:node_package_importer, dir]`.
fn importer(ruby: &Ruby, descriptor: Value) -> Result<compile_request::Importer, Error> {
    use compile_request::importer::Importer as Kind;

    let descriptor = RArray::try_convert(descriptor)?;
    let kind: Symbol = descriptor.entry(0)?;
    let (importer, non_canonical_scheme) = match &*kind.name()? {
        "path" => (Kind::Path(rust_string(descriptor.entry(1)?)?), Vec::new()),
        "importer" => {
            let schemes: RArray = descriptor.entry(2)?;
            (
                Kind::ImporterId(descriptor.entry(1)?),
                schemes
                    .into_iter()
                    .map(rust_string)
                    .collect::<Result<_, _>>()?,
            )
        }
        "file_importer" => (Kind::FileImporterId(descriptor.entry(1)?), Vec::new()),
        "node_package_importer" => (
            Kind::NodePackageImporter(NodePackageImporter {
                entry_point_directory: rust_string(descriptor.entry(1)?)?,
            }),
            Vec::new(),
        ),
        other => {
            return Err(argument_error(
                ruby,
                format!("unknown importer kind :{other}"),
            ))
        }
    };
    Ok(compile_request::Importer {
        importer: Some(importer),
        non_canonical_scheme,
    })
}

// ---------------------------------------------------------------------------
// protobuf → Ruby: results, errors, spans, log events, importer requests
// ---------------------------------------------------------------------------

/// `Sass::CompileResult` for a success, `Sass::CompileError` for a failure
/// (returned, not raised: the Ruby layer raises it with its own backtrace).
pub fn compile_response(ruby: &Ruby, response: CompileResponse) -> Result<Value, Error> {
    let loaded_urls = ruby.ary_new_capa(response.loaded_urls.len());
    for url in &response.loaded_urls {
        loaded_urls.push(ruby.str_new(url))?;
    }
    match response.result {
        Some(compile_response::Result::Success(success)) => {
            let source_map = if success.source_map.is_empty() {
                ruby.qnil().as_value()
            } else {
                ruby.str_new(&success.source_map).as_value()
            };
            ruby.get_inner(&COMPILE_RESULT).new_instance((
                ruby.str_new(&success.css),
                source_map,
                loaded_urls,
            ))
        }
        Some(compile_response::Result::Failure(failure)) => {
            let span = match failure.span {
                Some(span) => source_span_to_ruby(ruby, &span)?,
                None => ruby.qnil().as_value(),
            };
            let stack = non_empty(ruby, &failure.stack_trace);
            let formatted = non_empty(ruby, &failure.formatted);
            ruby.get_inner(&COMPILE_ERROR).new_instance((
                ruby.str_new(&failure.message),
                formatted,
                stack,
                span,
                loaded_urls,
            ))
        }
        // The dispatcher refuses responses without a result.
        None => unreachable!("CompileResponse without a result reached Ruby"),
    }
}

fn non_empty(ruby: &Ruby, text: &str) -> Value {
    if text.is_empty() {
        ruby.qnil().as_value()
    } else {
        ruby.str_new(text).as_value()
    }
}

fn location_to_ruby(ruby: &Ruby, location: &source_span::SourceLocation) -> Result<Value, Error> {
    ruby.get_inner(&SOURCE_LOCATION)
        .new_instance((location.offset, location.line, location.column))
}

/// `Sass::Logger::SourceSpan` for a span. An omitted end means an empty span
/// at the start.
pub fn source_span_to_ruby(ruby: &Ruby, span: &SourceSpan) -> Result<Value, Error> {
    let start = span.start.unwrap_or_default();
    let start_value = location_to_ruby(ruby, &start)?;
    let end_value = location_to_ruby(ruby, span.end.as_ref().unwrap_or(&start))?;
    ruby.get_inner(&SOURCE_SPAN).new_instance((
        start_value,
        end_value,
        ruby.str_new(&span.text),
        non_empty(ruby, &span.url),
        non_empty(ruby, &span.context),
    ))
}

/// The arguments of `Session#log_event`: type, message, span, stack,
/// formatted message, deprecation type.
pub fn log_event_args(
    ruby: &Ruby,
    event: &LogEvent,
) -> Result<(Symbol, RString, Value, Value, RString, Value), Error> {
    let kind = match LogEventType::try_from(event.r#type) {
        Ok(LogEventType::Warning) => "warning",
        Ok(LogEventType::DeprecationWarning) => "deprecation_warning",
        Ok(LogEventType::Debug) => "debug",
        // An unknown type from a newer compiler is still worth showing.
        Err(_) => "warning",
    };
    let span = match &event.span {
        Some(span) => source_span_to_ruby(ruby, span)?,
        None => ruby.qnil().as_value(),
    };
    let deprecation_type = match &event.deprecation_type {
        Some(id) if !id.is_empty() => ruby.str_new(id).as_value(),
        _ => ruby.qnil().as_value(),
    };
    Ok((
        Symbol::from(ruby.sym_new(kind)),
        ruby.str_new(&event.message),
        span,
        // A String, empty when the compiler sent none, as the established
        // gem passes it (a span's url and context, and a compile error's
        // stack, are nil when empty there too, as here).
        ruby.str_new(&event.stack_trace).as_value(),
        ruby.str_new(&event.formatted),
        deprecation_type,
    ))
}

fn optional_string(ruby: &Ruby, text: &Option<String>) -> Value {
    match text {
        Some(text) => ruby.str_new(text).as_value(),
        None => ruby.qnil().as_value(),
    }
}

/// The arguments of `Session#canonicalize_request`: importer id, url,
/// from_import, containing_url.
pub fn canonicalize_args(
    ruby: &Ruby,
    request: &CanonicalizeRequest,
) -> (u32, RString, bool, Value) {
    (
        request.importer_id,
        ruby.str_new(&request.url),
        request.from_import,
        optional_string(ruby, &request.containing_url),
    )
}

/// The arguments of `Session#import_request`: importer id, url.
pub fn import_args(ruby: &Ruby, request: &ImportRequest) -> (u32, RString) {
    (request.importer_id, ruby.str_new(&request.url))
}

/// The arguments of `Session#file_import_request`: importer id, url,
/// from_import, containing_url.
pub fn file_import_args(ruby: &Ruby, request: &FileImportRequest) -> (u32, RString, bool, Value) {
    (
        request.importer_id,
        ruby.str_new(&request.url),
        request.from_import,
        optional_string(ruby, &request.containing_url),
    )
}

// ---------------------------------------------------------------------------
// Ruby → protobuf: callback answers
// ---------------------------------------------------------------------------

/// `[url or nil, containing_url_unused]` from `Session#canonicalize_request`.
pub fn canonicalize_response(id: u32, answer: Value) -> Result<inbound_message::Message, Error> {
    let answer = RArray::try_convert(answer)?;
    let url: Option<RString> = answer.entry(0)?;
    let containing_url_unused: bool = answer.entry(1)?;
    Ok(inbound_message::Message::CanonicalizeResponse(
        CanonicalizeResponse {
            id,
            result: url
                .map(|url| string_of(url).map(inbound_message::canonicalize_response::Result::Url))
                .transpose()?,
            containing_url_unused,
        },
    ))
}

/// `nil` or `[contents, syntax, source_map_url or nil]` from
/// `Session#import_request`.
pub fn import_response(
    ruby: &Ruby,
    id: u32,
    answer: Value,
) -> Result<inbound_message::Message, Error> {
    use inbound_message::import_response::{ImportSuccess, Result as ImportResult};

    let result = if answer.is_nil() {
        None
    } else {
        let answer = RArray::try_convert(answer)?;
        let contents: RString = answer.entry(0)?;
        let syntax: Symbol = answer.entry(1)?;
        let source_map_url: Option<RString> = answer.entry(2)?;
        let name = syntax.name()?;
        let syntax = named(&name, Syntax::as_str_name)
            .ok_or_else(|| argument_error(ruby, format!("unknown syntax :{name}")))?;
        Some(ImportResult::Success(ImportSuccess {
            contents: string_of(contents)?,
            syntax: syntax as i32,
            source_map_url: source_map_url.map(string_of).transpose()?,
        }))
    };
    Ok(inbound_message::Message::ImportResponse(ImportResponse {
        id,
        result,
    }))
}

/// `[file_url or nil, containing_url_unused]` from
/// `Session#file_import_request`.
pub fn file_import_response(id: u32, answer: Value) -> Result<inbound_message::Message, Error> {
    let answer = RArray::try_convert(answer)?;
    let url: Option<RString> = answer.entry(0)?;
    let containing_url_unused: bool = answer.entry(1)?;
    Ok(inbound_message::Message::FileImportResponse(
        FileImportResponse {
            id,
            result: url
                .map(|url| {
                    string_of(url).map(inbound_message::file_import_response::Result::FileUrl)
                })
                .transpose()?,
            containing_url_unused,
        },
    ))
}
