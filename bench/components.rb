# frozen_string_literal: true

require 'fileutils'

# A stylesheet of many components, for the Sass::Rack rows of the benchmark:
# an entry that uses COUNT components, each in a directory of its own and
# each using a tokens partial found through a load path, as a design system
# is laid out. What an unchanged request checks grows with such a tree.
module BenchComponents
  COUNT = 200

  module_function

  # Writes the tree under +dir+; returns the entry's path and the load path.
  def write(dir, count = COUNT)
    root = File.join(dir, 'styles')
    vendor = File.join(dir, 'vendor')
    FileUtils.mkdir_p(vendor)
    File.write(File.join(vendor, '_tokens.scss'), "$gap: 1px;\n$color: #336699;\n")
    (1..count).each do |n|
      FileUtils.mkdir_p(File.join(root, 'components', "c#{n}"))
      File.write(File.join(root, 'components', "c#{n}", '_c.scss'),
                 "@use 'tokens';\n.c#{n} { gap: tokens.$gap; color: tokens.$color; }\n")
    end
    entry = File.join(root, 'app.scss')
    File.write(entry, (1..count).map { |n| "@use 'components/c#{n}/c' as c#{n};\n" }.join)
    [entry, vendor]
  end
end
