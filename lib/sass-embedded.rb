# frozen_string_literal: true

require_relative 'sass/embedded'
