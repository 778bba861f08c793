# frozen_string_literal: true

module Sass
  class Compiler
    # How the values a caller hands the host are checked and normalized, by
    # the established gem's rules: a compile's options ({Request}), and what
    # its importers and functions return (the {Session} registries). A value
    # of the wrong type is a +TypeError+ and a wrong choice an
    # +ArgumentError+, each naming what it was.
    module Arguments
      SYNTAXES = %i[scss indented css].freeze

      module_function

      # A String for the compiler from any +to_str+ object, by the
      # established gem's rules: a UTF-8 String as it is, what in it is not
      # UTF-8 becoming U+FFFD (one per maximal invalid subpart, as the
      # compiler's decoder reads it from the established gem); a binary
      # String whose bytes are UTF-8 as UTF-8 (the established gem refuses
      # those); and any other String transcoded to UTF-8, raising Ruby's
      # EncodingError where it cannot be. The rule is the extension's, which
      # reads every String it is given so (+utf8_text+, defined by the
      # extension when it loads: conversion/mod.rs).
      def utf8(value, name)
        raise TypeError, "#{name} must be a String, got #{value.inspect[0, 80]}" unless value.respond_to?(:to_str)

        Arguments.utf8_text(value.to_str)
      end

      # A filesystem path from a String or Pathname.
      def path(value, name)
        return value.to_path if value.respond_to?(:to_path)
        return value.to_str if value.respond_to?(:to_str)

        raise TypeError, "#{name} must be a String or Pathname, got #{value.inspect[0, 80]}"
      end

      # +true+ or +false+; +nil+ is false, as in the established gem (where
      # it leaves the protobuf field at its default).
      def boolean(value, name)
        return value if value.equal?(true) || value.equal?(false)
        return false if value.nil?

        raise TypeError, "#{name} must be true, false or nil, got #{value.inspect[0, 80]}"
      end

      # One of +choices+, given as a Symbol or String: another name (or
      # +nil+, as in the established gem) is an +ArgumentError+, another type
      # a +TypeError+.
      def choice(value, choices, name)
        unless value.nil? || value.is_a?(Symbol) || value.is_a?(String)
          raise TypeError, "#{name} must be a Symbol or String, got #{value.inspect[0, 80]}"
        end

        symbol = value&.to_sym
        return symbol if choices.include?(symbol)

        raise ArgumentError,
              "#{name} must be one of #{choices.map(&:inspect).join(', ')}, got #{value.inspect}"
      end

      # An Array; +nil+ is an empty one.
      def list(value, name)
        return EMPTY_LIST if value.nil?
        return value.to_ary if value.respond_to?(:to_ary)

        raise TypeError, "#{name} must be an Array, got #{value.inspect[0, 80]}"
      end
    end

    private_constant :Arguments
  end
end
