//! The gem's Ruby classes that the extension builds objects of, looked up
//! by name under `Sass` (each module keeps the ones it needs in a `Lazy`,
//! forced while the extension loads).

use magnus::{prelude::*, RClass, RModule, Ruby};

/// Looks up `Sass::<path>` (for example `"Logger::SourceSpan"`), private
/// constants included.
pub(crate) fn sass_class(ruby: &Ruby, path: &str) -> RClass {
    let sass: RModule = ruby
        .class_object()
        .const_get("Sass")
        .expect("lib/sass-embedded.rb defines Sass before loading the extension");
    sass.funcall("const_get", (path,))
        .unwrap_or_else(|_| panic!("Sass::{path} is not defined"))
}
