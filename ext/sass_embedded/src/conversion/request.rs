//! The layout of a compile request as Ruby hands it over: one Array read
//! by position, in the order of `Sass::Compiler::Request#initialize`'s
//! parameters (which are the options `Sass::Compiler#compile` and
//! `#compile_string` take). Both readers use it: [`super::plain`] reads a
//! plain compile's options as the caller gave them, and
//! [`super::compile_request`] reads the same positions after `Request`
//! checked and converted them (`Request#to_a`). `Request::FIELDS` is those
//! parameters' names; the extension refuses to load beside a Ruby layer
//! whose parameters differ from [`OPTIONS`].

use magnus::{prelude::*, value::Lazy, Error, RArray, RClass, Ruby, Symbol, TryConvert, Value};

use super::sass_class;

/// An option of a compile, at its position in the request Array. What
/// `Request#to_a` holds there: the option checked and normalized, but
/// for `importer`, `functions` and `importers` (registered: their
/// descriptors and signatures), `load_paths` (`[:path, dir]`
/// descriptors) and `logger` (whether it is silent).
#[derive(Clone, Copy)]
pub(super) enum Opt {
    Path,
    Source,
    Importer,
    Syntax,
    Url,
    LoadPaths,
    Charset,
    SourceMap,
    SourceMapIncludeSources,
    Style,
    Functions,
    Importers,
    AlertAscii,
    AlertColor,
    FatalDeprecations,
    FutureDeprecations,
    Logger,
    QuietDeps,
    SilenceDeprecations,
    Verbose,
}

/// The options' names, in their order.
pub(super) const OPTIONS: &[&str] = &[
    "path",
    "source",
    "importer",
    "syntax",
    "url",
    "load_paths",
    "charset",
    "source_map",
    "source_map_include_sources",
    "style",
    "functions",
    "importers",
    "alert_ascii",
    "alert_color",
    "fatal_deprecations",
    "future_deprecations",
    "logger",
    "quiet_deps",
    "silence_deprecations",
    "verbose",
];

static REQUEST: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "Compiler::Request"));

/// Refuses to load beside a Ruby layer whose `Request#initialize` takes
/// other options, or the same in another order: they are read by position.
pub(super) fn check_layout(ruby: &Ruby) -> Result<(), Error> {
    let initialize: Value = ruby
        .get_inner(&REQUEST)
        .funcall("instance_method", ("initialize",))?;
    let parameters: RArray = initialize.funcall("parameters", ())?;
    let names = parameters
        .into_iter()
        .map(|parameter| {
            let name: Symbol = RArray::try_convert(parameter)?.entry(1)?;
            Ok(name.name()?.into_owned())
        })
        .collect::<Result<Vec<String>, Error>>()?;
    if names == OPTIONS {
        return Ok(());
    }
    Err(Error::new(
        ruby.exception_load_error(),
        format!(
            "sass_embedded reads {OPTIONS:?} by position, but Sass::Compiler::Request#initialize's \
             parameter list is {names:?}: the extension and the Ruby files come from different builds"
        ),
    ))
}
