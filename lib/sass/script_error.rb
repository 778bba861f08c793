# frozen_string_literal: true

module Sass
  # An error raised by a {Value} assertion (+assert_number+, ...) or by an
  # invalid operation on a value. Raised inside a custom function, it becomes
  # the Sass error of that function call.
  class ScriptError < StandardError
    # @param message [String]
    # @param name [String, nil] the name of the argument that was wrong
    def initialize(message, name = nil)
      super(name.nil? ? message : "$#{name}: #{message}")
    end
  end
end
