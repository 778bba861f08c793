//! A plain compile's options straight to a `CompileRequest`.
//!
//! A `compile_string` with its defaults, or with a few booleans or Symbols,
//! passes a UTF-8 source and no callbacks, load paths or URL. For those,
//! `Sass::Compiler` hands the options over as the caller gave them (in the
//! request's layout: [`super::request`]) and this
//! module builds the request from them, or answers `None`, before anything
//! is sent, for options that need `Request`'s checks and conversions (which
//! then run as for any compile). Every value accepted here is one `Request` passes
//! through unchanged (or, for `nil`, turns into the same default), so both
//! ways build the same request (a test compares them).
//!
//! It exists for speed: on a tiny stylesheet a compile's whole Ruby part is
//! a few microseconds, and between a result and the next request every
//! microsecond counts several times over (docs/performance.md).

use magnus::{
    encoding::EncodingCapable,
    prelude::*,
    value::{Qfalse, Qtrue},
    Error, RArray, RHash, RString, Ruby, Symbol, Value,
};
use sass_embedded_core::protocol::{
    inbound_message::{compile_request, CompileRequest},
    OutputStyle, Syntax,
};

use super::named;
use super::request::{Opt, OPTIONS};

/// The options as given, read by option.
struct Options(RArray);

impl Options {
    fn get(&self, option: Opt) -> Value {
        self.0
            .entry::<Value>(option as isize)
            .unwrap_or_else(|_| Ruby::get_with(self.0).qnil().as_value())
    }

    /// `true` or `false` as they are, `nil` as false (as `Request` reads
    /// them); `None` for anything else.
    fn boolean(&self, option: Opt) -> Option<bool> {
        let value = self.get(option);
        if value.is_nil() || Qfalse::from_value(value).is_some() {
            Some(false)
        } else if Qtrue::from_value(value).is_some() {
            Some(true)
        } else {
            None
        }
    }

    /// Whether the option is `nil` or an empty Array (or, `hash`, an empty
    /// Hash): nothing to send.
    fn is_empty(&self, option: Opt, hash: bool) -> bool {
        let value = self.get(option);
        if value.is_nil() {
            return true;
        }
        if hash {
            RHash::from_value(value).is_some_and(|hash| hash.is_empty())
        } else {
            RArray::from_value(value).is_some_and(|array| array.is_empty())
        }
    }

    /// The name of the Symbol the option is, if it is one.
    fn symbol(&self, option: Opt) -> Option<String> {
        let symbol = Symbol::from_value(self.get(option))?;
        symbol.name().ok().map(|name| name.into_owned())
    }
}

/// The request for a `compile_string` whose options are plain, or `None`.
pub fn request(ruby: &Ruby, options: RArray) -> Result<Option<CompileRequest>, Error> {
    if options.len() != OPTIONS.len() {
        return Ok(None);
    }
    let options = Options(options);
    // No file (a path is made absolute by Ruby's rules), URL (checked by
    // Ruby), importers, load paths, functions or logger.
    let nothing_else = [Opt::Path, Opt::Importer, Opt::Url, Opt::Logger]
        .into_iter()
        .all(|option| options.get(option).is_nil())
        && options.is_empty(Opt::LoadPaths, false)
        && options.is_empty(Opt::Importers, false)
        && options.is_empty(Opt::Functions, true);
    if !nothing_else {
        return Ok(None);
    }
    let Some(source) = utf8(options.get(Opt::Source)) else {
        return Ok(None);
    };
    let Some(syntax) = options
        .symbol(Opt::Syntax)
        .as_deref()
        .and_then(|name| named(name, Syntax::as_str_name))
    else {
        return Ok(None);
    };
    let Some(style) = options
        .symbol(Opt::Style)
        .as_deref()
        .and_then(|name| named(name, OutputStyle::as_str_name))
    else {
        return Ok(None);
    };
    let deprecations = [
        Opt::FatalDeprecations,
        Opt::FutureDeprecations,
        Opt::SilenceDeprecations,
    ];
    if !deprecations
        .into_iter()
        .all(|option| options.is_empty(option, false))
    {
        return Ok(None);
    }
    let booleans = [
        Opt::Charset,
        Opt::SourceMap,
        Opt::SourceMapIncludeSources,
        Opt::AlertAscii,
        Opt::QuietDeps,
        Opt::Verbose,
    ]
    .map(|option| options.boolean(option));
    let [Some(charset), Some(source_map), Some(source_map_include_sources), Some(alert_ascii), Some(quiet_deps), Some(verbose)] =
        booleans
    else {
        return Ok(None);
    };
    // As `Request`: no `alert_color` asks whether `$stderr` is a TTY.
    let alert_color = if options.get(Opt::AlertColor).is_nil() {
        ruby.exception_exception()
            .funcall::<_, _, Value>("to_tty?", ())?
            .to_bool()
    } else {
        match options.boolean(Opt::AlertColor) {
            Some(alert_color) => alert_color,
            None => return Ok(None),
        }
    };
    Ok(Some(CompileRequest {
        input: Some(compile_request::Input::String(
            compile_request::StringInput {
                source,
                url: String::new(),
                syntax: syntax as i32,
                importer: None,
            },
        )),
        style: style as i32,
        source_map,
        source_map_include_sources,
        charset,
        alert_color,
        alert_ascii,
        quiet_deps,
        verbose,
        ..Default::default()
    }))
}

/// The source if it is a plain String (not a subclass: `Request` reads a
/// String through `to_str`, which a subclass may override) in UTF-8, read
/// as `Request` and [`super::string_of`] read it (what is not UTF-8 becomes
/// U+FFFD).
fn utf8(value: Value) -> Option<String> {
    use magnus::rb_sys::AsRawValue;
    let string = RString::from_value(value)?;
    let ruby = Ruby::get_with(string);
    if string.class().as_raw() != ruby.class_string().as_raw()
        || string.enc_get() != ruby.utf8_encindex()
    {
        return None;
    }
    super::string_of(string).ok()
}
